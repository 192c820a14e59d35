package sluicehttp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"-5":                            0,
		"30":                            30 * time.Second,
		"99999999999999":                time.Duration(9223372036) * time.Second,
		"Wed, 25 Nov 2026 12:01:30 GMT": 90 * time.Second,
		"Wed, 25 Nov 2026 11:00:00 GMT": 0,
		"soon":                          0,
	} {
		assert.Equal(t, want, retryAfter(v, now), v)
	}
}
