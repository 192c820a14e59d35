package sluicegrpc

import "time"

// PushbackMillisForTest returns the pushback trailer value for d, or -1 when
// there is none.
func PushbackMillisForTest(d time.Duration) int64 {
	s, ok := pushbackMillis(d)
	if !ok {
		return -1
	}
	var ms int64
	for _, c := range s {
		ms = ms*10 + int64(c-'0')
	}
	return ms
}
