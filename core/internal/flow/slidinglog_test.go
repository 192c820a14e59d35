package flow

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlidingLogReloadChain spends a sliding log of 5 per 10s at 0-4s,
// reloads it through a chain of limits at 4s (Reload), then, every 250ms
// up to 20s, admits all it can and compares with a log of the final limit
// that admitted the same requests and was never reloaded: the counts and
// the retry hints are the same, so a limit cut and restored gives nothing
// back and a raise gives exactly the difference. Before the fix, a log cut
// to 1 kept only its newest timestamp: 5→1→5 admitted 4 at once, 5→1→2→5
// 3, and 5→1→8 7 instead of 3.
func TestSlidingLogReloadChain(t *testing.T) {
	tests := []struct {
		name   string
		limits []int64 // after the first, 5
		early  int64   // admitted before 10s, when the first of the 5 leaves
	}{
		{"5 to 1 and back", []int64{1, 5}, 0},
		{"5 to 1 to 2 to 5", []int64{1, 2, 5}, 0},
		{"raised 5 to 8", []int64{8}, 3},
		{"5 to 1 to 8: the difference", []int64{1, 8}, 3},
		{"5 to 2 to 1 to 8", []int64{2, 1, 8}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Algorithm: SlidingLog, Limit: 5, Window: 10 * s}
			l := mustNew(t, cfg, nil)
			cfg.Limit = tt.limits[len(tt.limits)-1]
			want := mustNew(t, cfg, nil)
			for at := int64(0); at < 5; at++ {
				require.True(t, l.Acquire(at*int64(s), 1).OK)
				require.True(t, want.Acquire(at*int64(s), 1).OK)
			}
			for _, lim := range tt.limits {
				var err error
				l, err = Reload(Config{Algorithm: SlidingLog, Limit: lim, Window: 10 * s}, l, int64(4*s))
				require.NoError(t, err)
			}
			early := int64(0)
			for at := 4 * s; at <= 20*s; at += 250 * ms {
				for i := 0; ; i++ {
					require.Less(t, i, 20)
					got, exp := l.Acquire(int64(at), 1), want.Acquire(int64(at), 1)
					require.Equal(t, exp.OK, got.OK, "at %s, request %d", at, i)
					require.Equal(t, exp.RetryAfter, got.RetryAfter, "at %s", at)
					if !got.OK {
						break
					}
					if at < 10*s {
						early++
					}
				}
			}
			assert.Equal(t, tt.early, early)
		})
	}
}

// TestSlidingLogReloadForgetsExpired: the admissions a cut leaves out are
// forgotten at the next reload once out of the window, so a log cut from a
// large limit holds no more than it must.
func TestSlidingLogReloadForgetsExpired(t *testing.T) {
	cfg := Config{Algorithm: SlidingLog, Limit: 5, Window: s}
	l := mustNew(t, cfg, nil)
	for range 5 {
		require.True(t, l.Acquire(0, 1).OK)
	}
	cfg.Limit = 1
	l = mustNew(t, cfg, l)
	assert.Len(t, l.(*slidingLog).cut, 4)
	require.True(t, l.Acquire(int64(2*s), 1).OK)
	l = mustNew(t, cfg, l)
	assert.Empty(t, l.(*slidingLog).cut)
}
