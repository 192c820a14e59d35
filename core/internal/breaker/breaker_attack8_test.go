package breaker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHungProbeReopensThoughOthersAreGivenBack: a half-open breaker with
// two probes. One probe hangs (its upstream never answers); the other place
// is taken again and again by requests a later rule rejects (Undo) or whose
// clients hang up (GoneOn). Each retaken place pushes the probes' deadline
// to now+OpenFor, so the hung probe, far older than OpenFor, never counts
// as failed: the breaker stays half-open for as long as the stream lasts,
// sending requests to an upstream that does not answer.
func TestHungProbeReopensThoughOthersAreGivenBack(t *testing.T) {
	open := time.Second
	b := mustNew(t, Config{Strategy: ErrorCount, Threshold: 1, MinRequests: 1, Window: time.Second, Buckets: 10, OpenFor: open, Probes: 2}, nil)
	now := int64(time.Hour)
	tk, _, ok := b.Allow(now)
	require.True(t, ok)
	b.DoneOn(0, now, tk, 0, true) // opens
	require.Equal(t, Open, b.Stats(now).State)
	now += int64(open)
	hung, _, ok := b.Allow(now) // half-open: the first probe, which never ends
	require.True(t, ok)
	require.True(t, hung.Probe())
	start := now
	for now < start+int64(5*open) {
		now += int64(open / 4)
		p, _, ok := b.Allow(now)
		if !ok {
			break // reopened: the hung probe counted as failed
		}
		b.Undo(p) // a later rule rejected it: the place is given back
	}
	assert.Less(t, now, start+int64(2*open), "the hung probe, older than OpenFor, reopened the breaker")
	assert.Equal(t, Open, b.Stats(now).State)
}
