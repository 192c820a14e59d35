package sluicegrpc

import (
	"strconv"
	"time"

	"github.com/sluicekit/sluice/core"
)

// CallInfo is callInfo, for the tests of package sluicegrpc_test.
type CallInfo = callInfo

// PushbackMillisForTest returns the pushback trailer value of a call
// blocked with retry time d, or -1 when there is none.
func PushbackMillisForTest(d time.Duration) int64 {
	s, ok := pushback(&core.BlockedError{RetryAfter: d})
	if !ok {
		return -1
	}
	ms, _ := strconv.ParseInt(s, 10, 64)
	return ms
}
