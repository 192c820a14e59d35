package redisstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestReloadTripsShareOneTimeout: a decision that makes more than one round
// trip (the first exact decision after a change of window, or of mode) is
// bounded by one timeout, as every Take is (package doc, Failures), not
// one per trip. Each case's first script call is held 100ms, and the next
// ones until their context ends (a Redis frozen in mid-reload): every call
// must end by the first one's deadline. Before the fix each later trip had
// a timeout of its own: the second call's deadline was 100ms or more after
// the first's, and the Take took two timeouts or three.
func TestReloadTripsShareOneTimeout(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	ctx := context.Background()
	const timeout = 500 * time.Millisecond
	cases := []struct {
		name          string
		before, after store.Limit
	}{
		{"exact window change",
			store.Limit{Algorithm: store.SlidingCounter, Limit: 10, Window: time.Minute},
			store.Limit{Algorithm: store.SlidingCounter, Limit: 10, Window: 2 * time.Minute}},
		{"sliding counter approximate to exact",
			store.Limit{Algorithm: store.SlidingCounter, Limit: 10, Window: time.Minute, Mode: store.Approximate},
			store.Limit{Algorithm: store.SlidingCounter, Limit: 10, Window: time.Minute}},
		{"token bucket approximate to exact",
			store.Limit{Algorithm: store.TokenBucket, Limit: 10, Window: time.Minute, Mode: store.Approximate},
			store.Limit{Algorithm: store.TokenBucket, Limit: 10, Window: time.Minute}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &holdCalls{}
			c := srv.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true })
			c.AddHook(h)
			st, err := redisstore.New(c, redisstore.WithPrefix(redistest.UniquePrefix()), redisstore.WithTimeout(timeout),
				redisstore.WithSyncPeriod(10*time.Second), redisstore.WithMaxLag(0))
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			for range 3 {
				d, err := st.Take(ctx, "k", tc.before, 1)
				require.NoError(t, err)
				require.True(t, d.OK)
			}
			h.arm()
			_, err = st.Take(ctx, "k", tc.after, 1)
			deadlines := h.disarm()
			require.ErrorIs(t, err, store.ErrUnavailable, "a later trip held past the timeout")
			require.GreaterOrEqual(t, len(deadlines), 2, "more than one trip")
			for i, d := range deadlines[1:] {
				assert.False(t, d.After(deadlines[0].Add(5*time.Millisecond)), "call %d ends %s after the first's deadline", i+2, d.Sub(deadlines[0]))
			}
		})
	}
}

// holdCalls is a client hook that, while armed, records the deadline of
// each script call sent alone, holds the first one 100ms and every later
// one until its context ends.
type holdCalls struct {
	mu        sync.Mutex
	armed     bool
	deadlines []time.Time
}

func (h *holdCalls) arm() {
	h.mu.Lock()
	h.armed = true
	h.mu.Unlock()
}

func (h *holdCalls) disarm() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed = false
	return h.deadlines
}

func (h *holdCalls) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *holdCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name != "evalsha" && name != "eval" {
			return next(ctx, cmd)
		}
		h.mu.Lock()
		armed, first := h.armed, len(h.deadlines) == 0
		if armed {
			d, _ := ctx.Deadline()
			h.deadlines = append(h.deadlines, d)
		}
		h.mu.Unlock()
		switch {
		case !armed:
		case first:
			time.Sleep(100 * time.Millisecond)
		default:
			<-ctx.Done()
			return ctx.Err()
		}
		return next(ctx, cmd)
	}
}
func (h *holdCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
