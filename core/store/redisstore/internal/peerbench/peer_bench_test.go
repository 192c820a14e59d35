package peerbench

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

var shared redistest.Shared

// rate is the limit of every decision, per second.
const rate = 1_000_000

func TestMain(m *testing.M) {
	redistest.Main(m, shared.Stop)
}

// decisions are the ways of asking Redis that the benchmarks compare, each
// on a client of its own: a PING (the round trip, the floor of a
// decision), sluice's exact Store with the recommended client
// (ContextTimeoutEnabled) as a token bucket and as a sliding counter, and
// redis_rate's Allow (a token bucket), all at a million requests a second,
// far above what they are asked. redis_rate keeps its TAT as a float of
// seconds since 2017, in which a far higher rate's emission interval is
// lost (at 2^30 a second, under a tenth of its precision): its TAT never
// moved, and it never wrote.
func decisions(b *testing.B) []struct {
	name string
	do   func(ctx context.Context) error
} {
	srv := shared.Server(b)
	client := func() *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
		b.Cleanup(func() { _ = c.Close() })
		return c
	}
	sluice := func(alg store.Algorithm) func(ctx context.Context) error {
		st, err := redisstore.New(client(), redisstore.WithPrefix(redistest.UniquePrefix()), redisstore.WithTimeout(time.Second))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		lim := store.Limit{Algorithm: alg, Limit: rate, Window: time.Second}
		return func(ctx context.Context) error {
			d, err := st.Take(ctx, "bench", lim, 1)
			if err == nil && !d.OK {
				err = errors.New("sluice: rejected")
			}
			return err
		}
	}
	ping := client()
	rl := redis_rate.NewLimiter(client())
	key := redistest.UniquePrefix() + "bench"
	return []struct {
		name string
		do   func(ctx context.Context) error
	}{
		{"ping", func(ctx context.Context) error { return ping.Ping(ctx).Err() }},
		{"sluice-token-bucket", sluice(store.TokenBucket)},
		{"sluice-sliding-counter", sluice(store.SlidingCounter)},
		{"redis_rate", func(ctx context.Context) error {
			r, err := rl.Allow(ctx, key, redis_rate.PerSecond(rate))
			if err == nil && r.Allowed == 0 {
				err = errors.New("redis_rate: rejected")
			}
			return err
		}},
	}
}

// BenchmarkRedis times each decision serially and from 16 goroutines.
func BenchmarkRedis(b *testing.B) {
	ctx := context.Background()
	for _, d := range decisions(b) {
		if err := d.do(ctx); err != nil { // scripts loaded, connections made
			b.Fatal(err)
		}
		b.Run(d.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := d.do(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/parallel16", func(b *testing.B) {
			b.ReportAllocs()
			procs := runtime.GOMAXPROCS(0)
			b.SetParallelism((16 + procs - 1) / procs)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := d.do(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkRedisVsPing times, serially, a PING and each decision in turn,
// their order rotating from one round to the next, and reports each
// decision's time over the PING's: round trips on this machine drift by a
// third within a minute, which benchmarks run one after the other (or
// decisions timed in turns of their own) read as a difference.
func BenchmarkRedisVsPing(b *testing.B) {
	ctx := context.Background()
	ds := decisions(b)
	for _, d := range ds {
		if err := d.do(ctx); err != nil {
			b.Fatal(err)
		}
	}
	t := make([]time.Duration, len(ds))
	i := 0
	for b.Loop() {
		for j := range ds {
			k := (i + j) % len(ds)
			t0 := time.Now()
			if err := ds[k].do(ctx); err != nil {
				b.Fatal(err)
			}
			t[k] += time.Since(t0)
		}
		i++
	}
	for k, d := range ds[1:] {
		b.ReportMetric(float64(t[k+1])/float64(t[0]), d.name+"/ping")
	}
}

// BenchmarkRedisParallelVsPeer times, from 16 goroutines, each decision
// and redis_rate's in alternating phases of 1024 decisions each, and
// reports the decision's throughput as a multiple of redis_rate's: like
// BenchmarkRedisVsPing, a same-run ratio that this machine's drift does not
// read as a difference.
//
//	go -C core/store/redisstore/internal/peerbench test -run '^$' -bench ParallelVsPeer -benchtime 100x .
func BenchmarkRedisParallelVsPeer(b *testing.B) {
	ctx := context.Background()
	ds := decisions(b)
	peer := ds[len(ds)-1].do
	phase := func(do func(ctx context.Context) error) (time.Duration, error) {
		const goroutines, perPhase = 16, 1024
		errs := make(chan error, goroutines)
		t0 := time.Now()
		for range goroutines {
			go func() {
				var err error
				for range perPhase / goroutines {
					if err = do(ctx); err != nil {
						break
					}
				}
				errs <- err
			}()
		}
		var err error
		for range goroutines {
			err = errors.Join(err, <-errs)
		}
		return time.Since(t0), err
	}
	for _, d := range ds[1 : len(ds)-1] {
		if err := d.do(ctx); err != nil {
			b.Fatal(err)
		}
		b.Run(d.name, func(b *testing.B) {
			var tPeer, tDo time.Duration
			i := 0
			for b.Loop() {
				first, second, tFirst, tSecond := peer, d.do, &tPeer, &tDo
				if i%2 == 1 {
					first, second, tFirst, tSecond = d.do, peer, &tDo, &tPeer
				}
				t1, err1 := phase(first)
				t2, err2 := phase(second)
				*tFirst += t1
				*tSecond += t2
				if err := errors.Join(err1, err2); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(tPeer)/float64(tDo), "throughput/redis_rate")
		})
	}
}
