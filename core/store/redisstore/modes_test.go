package redisstore_test

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestGuardModesFailApart runs a Guard with an exact rule and an
// approximate one on one Redis, which then dies (killed, or frozen: its
// connections stay open and nothing answers). The exact rule's failures
// open the exact breaker after the trip, although the approximate rule's
// requests go on meanwhile; once the approximate counts have not been
// synchronized for the sync age (1s), the approximate mode fails too, the
// store reports since when and the local limit the rule applies, and the
// rule admits that local limit. Both modes recover by themselves once
// Redis is back.
//
// Before each mode had its breaker, every approximate decision (local,
// so a success) ended the exact failures' streak: the exact breaker never
// opened, and every exact request waited out the timeout; and the
// approximate rule went on admitting the whole global limit in each
// instance, reported healthy with no error and no fallback.
func TestGuardModesFailApart(t *testing.T) {
	for _, fault := range []string{"killed", "frozen"} {
		t.Run(fault, func(t *testing.T) {
			srv := redistest.StartOwned(t)
			const (
				trip       = 3
				backoff    = time.Second
				localLimit = 5
			)
			fc := clock.NewFake(time.Hour)
			rules := []core.Rule{
				{Name: "exact", Resource: "GET /x", Kind: core.KindFlow, Limit: 1000, Window: time.Hour, Store: "redis", LocalLimit: 3},
				{Name: "approx", Resource: "GET /a", Kind: core.KindFlow, Limit: 1000, Window: time.Hour, Store: "redis",
					Mode: store.Approximate, LocalLimit: localLimit},
			}
			in := newInstance(t, srv, redistest.UniquePrefix(),
				[]redisstore.Option{redisstore.WithTimeout(200 * time.Millisecond), redisstore.WithSyncPeriod(10 * time.Millisecond)},
				core.WithClock(fc), core.WithStoreBreaker(trip, backoff), core.WithRules(rules...))
			ctx := context.Background()
			enter := func(resource string) error {
				e, err := in.g.Enter(ctx, resource)
				e.Exit(nil)
				return err
			}
			for range 3 {
				require.NoError(t, enter("GET /x"))
				require.NoError(t, enter("GET /a"))
			}
			require.Equal(t, []core.StoreStatus{{Name: "redis", Healthy: true}}, totals(in.g.Stores()))
			require.Len(t, in.g.Stores()[0].Modes, 2)

			if fault == "killed" {
				srv.Kill()
			} else {
				srv.Freeze(t)
				t.Cleanup(func() { srv.Thaw(t) })
			}
			calls := in.hook.n.Load()
			for range trip {
				require.NoError(t, enter("GET /a"), "approximate decisions go on")
				_ = enter("GET /x")
			}
			ex := in.g.Stores()[0].Modes[0]
			assert.False(t, ex.Healthy, "the exact breaker opened after %d failures", trip)
			assert.Equal(t, time.Hour, ex.Since)
			assert.ErrorIs(t, ex.Err, store.ErrUnavailable)
			assert.Equal(t, int64(trip), ex.Errors)
			exactCalls := in.hook.n.Load() - calls
			for range 10 {
				_ = enter("GET /x")
			}
			assert.Equal(t, exactCalls, in.hook.n.Load()-calls, "no exact call to Redis while its breaker is open")

			// The approximate mode fails once its counts are older than
			// the sync age.
			var ap core.StoreModeStatus
			require.Eventually(t, func() bool {
				_ = enter("GET /a")
				ap = in.g.Stores()[0].Modes[1]
				return !ap.Healthy
			}, 20*time.Second, 5*time.Millisecond, "the approximate mode fails")
			assert.Equal(t, store.Approximate, ap.Mode)
			assert.Equal(t, time.Hour, ap.Since)
			assert.ErrorIs(t, ap.Err, store.ErrUnavailable)
			assert.ErrorContains(t, ap.Err, "approximate counts not synchronized with Redis for")
			require.Len(t, ap.Rules, 1)
			assert.Equal(t, core.FailLocal, ap.Rules[0].OnFailure)
			assert.Equal(t, int64(localLimit), ap.Rules[0].LocalLimit)
			assert.Equal(t, int64(trip), ap.Errors)
			assert.Equal(t, int64(trip), ap.Fallbacks, "the failed calls' requests")

			// Its rule now admits the local limit, less what the requests
			// of the failed calls took.
			admitted := 0
			for range 20 {
				err := enter("GET /a")
				if err == nil {
					admitted++
					continue
				}
				b := blocked(t, err)
				assert.True(t, b.Fallback)
				assert.Equal(t, int64(localLimit), b.Limit)
			}
			assert.Equal(t, localLimit-trip, admitted)
			assert.Equal(t, int64(trip+20), in.g.Stores()[0].Modes[1].Fallbacks)

			if fault == "killed" {
				srv.Restart(t)
			} else {
				srv.Thaw(t)
			}
			require.Eventually(t, func() bool {
				fc.Advance(backoff)
				_ = enter("GET /x")
				_ = enter("GET /a")
				return in.g.Stores()[0].Healthy
			}, 20*time.Second, 10*time.Millisecond, "both modes recover")
			st := in.g.Stores()[0]
			for range 3 {
				require.NoError(t, enter("GET /x"))
				require.NoError(t, enter("GET /a"))
			}
			assert.Equal(t, st.Fallbacks, in.g.Stores()[0].Fallbacks, "decided by Redis again")
		})
	}
}

// delayProxy forwards TCP connections to a Redis, delaying what Redis
// sends back by delay: a slow but live Redis. When fastEvery is above
// 0, every fastEvery-th chunk goes at once: a slow Redis with some fast
// replies.
type delayProxy struct {
	ln        net.Listener
	to        string
	delay     atomic.Int64
	fastEvery atomic.Int64
	chunks    atomic.Int64
	wg        sync.WaitGroup
	mu        sync.Mutex
	conns     []net.Conn
}

func newDelayProxy(t *testing.T, to string) *delayProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &delayProxy{ln: ln, to: to}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *delayProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		r, err := net.Dial("tcp", p.to)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, r)
		p.mu.Unlock()
		p.wg.Go(func() { _, _ = io.Copy(r, c); _ = r.Close() })
		p.wg.Go(func() { p.late(c, r); _ = c.Close() })
	}
}

// late copies from src to dst, each chunk delay after it was read.
func (p *delayProxy) late(dst, src net.Conn) {
	type chunk struct {
		due time.Time
		b   []byte
	}
	q := make(chan chunk, 1024)
	p.wg.Go(func() {
		for ch := range q {
			time.Sleep(time.Until(ch.due))
			if _, err := dst.Write(ch.b); err != nil {
				return
			}
		}
	})
	defer close(q)
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			d := time.Duration(p.delay.Load())
			if k := p.fastEvery.Load(); k > 0 && p.chunks.Add(1)%k == 0 {
				d = 0
			}
			q <- chunk{time.Now().Add(d), append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			return
		}
	}
}

// TestGuardSlowRedisLatencyBudget runs a Guard on a Redis behind a proxy
// that delays its replies by 40ms, under the store's timeout but twice the
// Guard's latency budget (20ms): after a few calls the exact
// breaker opens, and requests are the failure policy's without waiting for
// Redis; once the replies come at once again, a probe closes it, and Redis
// decides again. Before the budget, every decision waited for the slow
// Redis, forever.
func TestGuardSlowRedisLatencyBudget(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	proxy := newDelayProxy(t, srv.Addr)
	c := redis.NewClient(&redis.Options{Addr: proxy.ln.Addr().String(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	h := &countHook{}
	c.AddHook(h)
	// A timeout a loaded machine's round trips never reach: slow is not
	// failed, whatever the store's timeout.
	st, err := redisstore.New(c, redisstore.WithPrefix(redistest.UniquePrefix()), redisstore.WithTimeout(10*time.Second))
	require.NoError(t, err)
	const backoff = 200 * time.Millisecond
	g, err := core.New(core.WithStore("redis", st), core.WithStoreBreaker(0, backoff), core.WithRules(
		core.Rule{Name: "exact", Resource: "GET /x", Kind: core.KindFlow, Limit: 1 << 40, Window: time.Hour, Store: "redis"}))
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = g.Close()
		_ = st.Close()
	})
	enter := func() {
		e, err := g.Enter(context.Background(), "GET /x")
		require.NoError(t, err, "far from the limit, and the local limit too")
		e.Exit(nil)
	}
	for range 5 {
		enter()
	}
	require.True(t, g.Stores()[0].Healthy)

	proxy.delay.Store(int64(40 * time.Millisecond))
	require.Eventually(t, func() bool {
		enter()
		return !g.Stores()[0].Healthy
	}, 20*time.Second, time.Millisecond, "the breaker opens")
	ex := g.Stores()[0].Modes[0]
	assert.ErrorContains(t, ex.Err, "too slowly for the latency budget 20ms")
	assert.Greater(t, ex.Latency, 20*time.Millisecond)
	assert.Zero(t, ex.Errors, "no call failed")
	calls := h.n.Load()
	fallbacks := ex.Fallbacks
	for range 20 {
		enter()
	}
	// The backoff may pass meanwhile on a loaded machine: a probe, as slow.
	assert.LessOrEqual(t, h.n.Load()-calls, int64(2), "Redis left alone while the breaker is open")
	assert.GreaterOrEqual(t, g.Stores()[0].Fallbacks-fallbacks, int64(18))

	proxy.delay.Store(0)
	require.Eventually(t, func() bool {
		enter()
		time.Sleep(10 * time.Millisecond)
		return g.Stores()[0].Healthy
	}, 20*time.Second, time.Millisecond, "a probe closes it")
	fallbacks = g.Stores()[0].Fallbacks
	for range 5 {
		enter()
	}
	assert.Equal(t, fallbacks, g.Stores()[0].Fallbacks, "decided by Redis again")
	assert.NoError(t, g.Stores()[0].Modes[0].Err)
}
