package flow

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/window"
)

// retryOp is one call of TestRetryAfterCachedNeverEarly's history: an
// AcquireOn of n at at, or (undo >= 0) the Undo of the decision of op undo.
type retryOp struct {
	at       int64
	cpu      uint32
	n        int64
	undo     int
	decision Decision
}

// TestRetryAfterCachedNeverEarly attacks the leap array's retry hint, which
// reads the older buckets' counts once per bucket: between rejections in
// one bucket, reservations are undone in older buckets and in the newest,
// and requests admitted in the room that makes. After each rejection, the
// hint is never earlier than one computed from every bucket's count at that
// moment, and the rejected request, replayed on a fresh limiter with the
// same history, is admitted at the hint.
func TestRetryAfterCachedNeverEarly(t *testing.T) {
	for _, buckets := range []int{1, 4, 10} {
		cfg := Config{Algorithm: LeapArray, Limit: 20, Window: s, Buckets: buckets}
		for seed := range uint64(20) {
			rng := rand.New(rand.NewPCG(seed, uint64(buckets)))
			l := mustNew(t, cfg, nil).(*leapArray)
			var hist []retryOp
			at := int64(3 * s)
			for range 300 {
				switch r := rng.IntN(10); {
				case r < 3: // within the bucket, or a few buckets later
					at += rng.Int64N(int64(cfg.Window) / int64(buckets) / 4)
				case r == 3:
					at += rng.Int64N(int64(cfg.Window))
				}
				op := retryOp{at: at, cpu: rng.Uint32N(4), n: 1 + rng.Int64N(3), undo: -1}
				if rng.IntN(4) == 0 && len(hist) > 0 {
					op.undo = rng.IntN(len(hist))
					l.Undo(hist[op.undo].decision, hist[op.undo].n)
					hist = append(hist, op)
					continue
				}
				op.decision = l.AcquireOn(op.cpu, op.at, op.n)
				if op.decision.OK {
					hist = append(hist, op)
					continue
				}
				r := op.decision.RetryAfter
				used := l.arr.Sum(at, window.Pass)
				require.GreaterOrEqual(t, r, l.retryAfterEach(at, used, op.n, cfg.Limit),
					"buckets %d seed %d: hint earlier than the counts allow", buckets, seed)
				again := replayOps(t, cfg, hist).AcquireOn(op.cpu, at+int64(r), op.n)
				require.True(t, again.OK, "buckets %d seed %d: rejected at the hint %s", buckets, seed, r)
				hist = append(hist, op) // a rejection leaves no trace, but keeps the history aligned
			}
		}
	}
}

// replayOps plays hist on a fresh limiter of cfg.
func replayOps(t *testing.T, cfg Config, hist []retryOp) *leapArray {
	l := mustNew(t, cfg, nil).(*leapArray)
	ds := make([]Decision, len(hist))
	for i, op := range hist {
		if op.undo >= 0 {
			l.Undo(ds[op.undo], hist[op.undo].n)
			continue
		}
		ds[i] = l.AcquireOn(op.cpu, op.at, op.n)
		require.Equal(t, op.decision.OK, ds[i].OK, "replay differs at op %d", i)
	}
	return l
}
