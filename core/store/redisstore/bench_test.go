package redisstore

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// The benchmarks run against the package's Redis (a redis-server they start
// on loopback, SLUICE_REDIS_ADDR, or miniredis). Each has a serial and a
// 16-goroutine variant:
//
//	go -C core/store/redisstore test -run '^$' -bench 'BenchmarkRedis' -benchtime 2s .
//
// BenchmarkRedisPing is the bare round trip on the same kind of client, the
// floor of an exact decision; BenchmarkRedisExact/unbatched is one call per
// decision, as without the dispatcher; batched-ctxclient has a client with
// ContextTimeoutEnabled, whose lone calls skip the dispatcher.

// parallel16 runs body from 16 goroutines.
func parallel16(b *testing.B, body func(pb *testing.PB)) {
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((16 + procs - 1) / procs)
	b.ReportMetric(float64((16+procs-1)/procs*procs), "goroutines")
	b.RunParallel(body)
}

func BenchmarkRedisPing(b *testing.B) {
	srv := sharedServer(b)
	c := srv.Client(b)
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel16", func(b *testing.B) {
		b.ReportAllocs()
		parallel16(b, func(pb *testing.PB) {
			for pb.Next() {
				if err := c.Ping(ctx).Err(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

func BenchmarkRedisExact(b *testing.B) {
	srv := sharedServer(b)
	for _, v := range exactVariants {
		_, take := v.open(b, srv)
		b.Run(v.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := take(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(v.name+"/parallel16", func(b *testing.B) {
			b.ReportAllocs()
			parallel16(b, func(pb *testing.PB) {
				for pb.Next() {
					if err := take(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// exactVariant is a Store the exact benchmarks compare.
type exactVariant struct {
	name  string
	batch int
	ctxOK bool // the client has ContextTimeoutEnabled
}

// exactVariants are one call per decision, the default (batched through
// the dispatcher, a client without ContextTimeoutEnabled), and the default
// with the recommended client.
var exactVariants = []exactVariant{{"unbatched", 1, false}, {"batched", defaultBatchSize, false}, {"batched-ctxclient", defaultBatchSize, true}}

// open returns v's client on srv and a function making one exact decision
// through v's Store (failing b when it is rejected), after one warm-up
// decision; both are closed when b ends.
func (v exactVariant) open(b *testing.B, srv *redistest.Server) (*redis.Client, func() error) {
	return v.openAlg(b, srv, store.SlidingCounter)
}

// openAlg is open for a limit of algorithm alg.
func (v exactVariant) openAlg(b *testing.B, srv *redistest.Server, alg store.Algorithm) (*redis.Client, func() error) {
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: v.ctxOK})
	b.Cleanup(func() { _ = c.Close() })
	st, err := New(c, WithPrefix(redistest.UniquePrefix()), WithBatchSize(v.batch), WithTimeout(time.Second))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	lim := store.Limit{Algorithm: alg, Limit: 1 << 40, Window: time.Second}
	if alg != store.SlidingCounter {
		lim.Limit = 1e6 // whole nanoseconds a request
	}
	take := func() error {
		d, err := st.Take(context.Background(), "bench", lim, 1)
		if err == nil && !d.OK {
			b.Fatal("rejected")
		}
		return err
	}
	if err := take(); err != nil {
		b.Fatal(err)
	}
	return c, take
}

// BenchmarkRedisExactVsPing times, serially, one exact decision and one
// PING (on the same kind of client) per iteration, in alternating order,
// and reports both and their ratio: this machine's round trips drift by a
// third within a minute, which a ratio of two benchmarks run one after the
// other reads as a difference between them.
//
//	go -C core/store/redisstore test -run '^$' -bench ExactVsPing -benchtime 3s .
func BenchmarkRedisExactVsPing(b *testing.B) {
	srv := sharedServer(b)
	for _, alg := range []store.Algorithm{store.SlidingCounter, store.TokenBucket} {
		for _, v := range exactVariants {
			b.Run(string(alg)+"/"+v.name, func(b *testing.B) { exactVsPing(b, v, srv, alg) })
		}
	}
}

// exactVsPing is BenchmarkRedisExactVsPing of variant v with a limit of
// algorithm alg.
func exactVsPing(b *testing.B, v exactVariant, srv *redistest.Server, alg store.Algorithm) {
	c, take := v.openAlg(b, srv, alg)
	ping := func() error { return c.Ping(context.Background()).Err() }
	var tPing, tTake time.Duration
	i := 0
	for b.Loop() {
		first, second, tFirst, tSecond := ping, take, &tPing, &tTake
		if i%2 == 1 {
			first, second, tFirst, tSecond = take, ping, &tTake, &tPing
		}
		t0 := time.Now()
		err1 := first()
		t1 := time.Now()
		err2 := second()
		*tFirst += t1.Sub(t0)
		*tSecond += time.Since(t1)
		if err := errors.Join(err1, err2); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(tPing.Nanoseconds())/float64(i), "ping-ns")
	b.ReportMetric(float64(tTake.Nanoseconds())/float64(i), "exact-ns")
	b.ReportMetric(float64(tTake)/float64(tPing), "exact/ping")
}

func BenchmarkRedisApprox(b *testing.B) {
	srv := sharedServer(b)
	st, _ := newTestStore(b, srv)
	ctx := context.Background()
	for _, alg := range storeAlgorithms() {
		lim := store.Limit{Algorithm: alg, Limit: 1e9, Window: time.Second, Mode: store.Approximate}
		if alg == store.LeakyBucket {
			lim.MaxWait = time.Hour
		}
		key := "bench/" + string(alg)
		if _, err := st.Take(ctx, key, lim, 1); err != nil {
			b.Fatal(err)
		}
		b.Run(string(alg)+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d, _ := st.Take(ctx, key, lim, 1); !d.OK {
					b.Fatal("rejected")
				}
			}
		})
		b.Run(string(alg)+"/parallel16", func(b *testing.B) {
			b.ReportAllocs()
			parallel16(b, func(pb *testing.PB) {
				for pb.Next() {
					_, _ = st.Take(ctx, key, lim, 1)
				}
			})
		})
	}
}
