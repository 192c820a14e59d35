package peerbench

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sethvargo/go-limiter/memorystore"
	"go.uber.org/ratelimit"
	"golang.org/x/time/rate"

	"github.com/sluicekit/sluice/core"
)

const resource = "GET /api/items/{id}"

// run runs one serially and from parallel goroutines, reporting the
// process's CPU time per call (cpuPerOp) next to ns/op.
func run(b *testing.B, one func(b *testing.B)) {
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			one(b)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuPerOp(b)()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				one(b)
			}
		})
	})
}

// cpuPerOp starts measuring the CPU time of the whole process (every
// thread: the garbage collector's and the runtime's work count too); the
// function it returns reports it per operation as cpu-ns/op. A machine busy
// with other work disturbs it far less than ns/op.
func cpuPerOp(b *testing.B) func() {
	c0 := processCPU()
	return func() {
		if c0 >= 0 {
			b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
		}
	}
}

// sluice runs Enter+Exit on a Guard with rules; blocked tells whether each
// request must be rejected.
func sluice(b *testing.B, blocked bool, rules ...core.Rule) {
	g, err := core.New(core.WithRules(rules...))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if blocked { // exhaust the quota
		for range 2 {
			e, _ := g.Enter(ctx, resource)
			e.Exit(nil)
		}
	}
	run(b, func(b *testing.B) {
		e, err := g.Enter(ctx, resource)
		if (err != nil) != blocked {
			b.Fatalf("Enter: %v, want blocked %v", err, blocked)
		}
		e.Exit(nil)
	})
}

func flowRule(name string, limit int64, window time.Duration, alg core.Algorithm) core.Rule {
	return core.Rule{Name: name, Resource: resource, Kind: core.KindFlow, Limit: limit, Window: window, Algorithm: alg}
}

// BenchmarkNoRuleSluice is a resource no rule applies to: its statistics
// only.
func BenchmarkNoRuleSluice(b *testing.B) {
	sluice(b, false)
}

// The pass path of one rule.

func BenchmarkPassSluiceFlow(b *testing.B) {
	sluice(b, false, flowRule("", 1<<40, 0, ""))
}

func BenchmarkPassSluiceTokenBucket(b *testing.B) {
	sluice(b, false, flowRule("", 1_000_000_000, 0, core.AlgorithmTokenBucket))
}

func BenchmarkPassXTimeRate(b *testing.B) {
	l := rate.NewLimiter(1<<40, 1<<30)
	run(b, func(b *testing.B) {
		if !l.Allow() {
			b.Fatal("rate: rejected")
		}
	})
}

func BenchmarkPassUber(b *testing.B) {
	l := ratelimit.New(1<<30, ratelimit.WithoutSlack)
	run(b, func(*testing.B) { l.Take() })
}

func BenchmarkPassSethvargo(b *testing.B) {
	s, err := memorystore.New(&memorystore.Config{Tokens: 1 << 40, Interval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close(context.Background()) })
	ctx := context.Background()
	// Its bucket rejects now and then under RunParallel however large:
	// the decision is made all the same.
	run(b, func(*testing.B) { _, _, _, _, _ = s.Take(ctx, "k") })
}

// The blocked path: a limiter whose quota is used up for an hour.

func BenchmarkBlockedSluiceFlow(b *testing.B) {
	sluice(b, true, flowRule("", 1, time.Hour, ""))
}

func BenchmarkBlockedSluiceTokenBucket(b *testing.B) {
	sluice(b, true, flowRule("", 1, time.Hour, core.AlgorithmTokenBucket))
}

func BenchmarkBlockedXTimeRate(b *testing.B) {
	l := rate.NewLimiter(rate.Every(time.Hour), 1)
	l.Allow()
	run(b, func(b *testing.B) {
		if l.Allow() {
			b.Fatal("rate: admitted")
		}
	})
}

func BenchmarkBlockedSethvargo(b *testing.B) {
	s, err := memorystore.New(&memorystore.Config{Tokens: 1, Interval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close(context.Background()) })
	ctx := context.Background()
	_, _, _, _, _ = s.Take(ctx, "k")
	run(b, func(b *testing.B) {
		if _, _, _, ok, _ := s.Take(ctx, "k"); ok {
			b.Fatal("sethvargo: admitted")
		}
	})
}

// BenchmarkRules is n flow rules on one resource, all passing: the cost
// must grow linearly with n.
func BenchmarkRules(b *testing.B) {
	for _, n := range []int{1, 4, 5, 8, 20, 32} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rules := make([]core.Rule, n)
			for i := range rules {
				rules[i] = flowRule(fmt.Sprint("r", i), 1<<40, 0, "")
			}
			sluice(b, false, rules...)
		})
	}
}

// userParam is the Params of a request carrying one value of the param
// the hotspot rule limits by.
type userParam struct{ v string }

func (p *userParam) Param(param string, i int) (string, bool) { return p.v, i == 0 }

// keys returns n distinct user IDs of 8 to 12 bytes.
func keys(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprint("u-", i*7919+1_000_000)
	}
	return ks
}

// runKeys runs one with a userParam holding each key of ks in turn, serially and from parallel
// goroutines (each starting at its own offset), after one round of every
// key before the clock starts.
func runKeys(b *testing.B, ks []string, one func(b *testing.B, p *userParam)) {
	var p userParam
	for _, p.v = range ks {
		one(b, &p)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuPerOp(b)()
		j := 0
		for b.Loop() {
			p.v = ks[j]
			one(b, &p)
			if j++; j == len(ks) {
				j = 0
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuPerOp(b)()
		var g atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			j := int(g.Add(1)) * len(ks) / 8 % len(ks)
			var p userParam
			for pb.Next() {
				p.v = ks[j]
				one(b, &p)
				if j++; j == len(ks) {
					j = 0
				}
			}
		})
	})
}

// The hotspot benchmarks are one hotspot rule (a token bucket per user)
// with the users of the requests cycling through 10k and 1M distinct
// values, each far from its limit (Enter and Exit), next to sethvargo's
// memorystore (a bucket per key) taking the same keys, which keeps every
// key until its sweep. sluice's table holds every user too (MaxKeys, see
// TestHotspotHoldsAll): at 1M, its default 100k would evict a user at
// nearly every request, and so limit no one.

func BenchmarkHotspot10kSluice(b *testing.B) { hotspotSluice(b, 10_000) }

func BenchmarkHotspot10kSethvargo(b *testing.B) { hotspotSethvargo(b, 10_000) }

func BenchmarkHotspot1MSluice(b *testing.B) { hotspotSluice(b, 1_000_000) }

func BenchmarkHotspot1MSethvargo(b *testing.B) { hotspotSethvargo(b, 1_000_000) }

// hotspotRule is a hotspot rule limiting each of n users to limit requests
// an hour, on a table that holds them all.
func hotspotRule(n int, limit int64) core.Rule {
	return core.Rule{Resource: resource, Kind: core.KindHotspot, Param: "header:X-User-ID",
		Limit: limit, Window: time.Hour, MaxKeys: hotspotKeys(n)}
}

// hotspotKeys is the MaxKeys of a table that holds n users: the default
// when it does, else twice n, as the table is sharded.
func hotspotKeys(n int) int {
	if n <= 50_000 {
		return 0
	}
	return 2 * n
}

func hotspotSluice(b *testing.B, n int) {
	g, err := core.New(core.WithRules(hotspotRule(n, 1_000_000_000_000)))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	runKeys(b, keys(n), func(b *testing.B, p *userParam) {
		e, err := g.Enter(ctx, resource, core.WithParams(p))
		if err != nil {
			b.Fatal(err)
		}
		e.Exit(nil)
	})
}

func hotspotSethvargo(b *testing.B, n int) {
	s, err := memorystore.New(&memorystore.Config{Tokens: 1 << 40, Interval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close(context.Background()) })
	ctx := context.Background()
	// As in BenchmarkPassSethvargo, its buckets reject now and then under
	// RunParallel however large: the decision is made all the same.
	runKeys(b, keys(n), func(_ *testing.B, p *userParam) { _, _, _, _, _ = s.Take(ctx, p.v) })
}

// TestHotspotHoldsAll: the hotspot benchmarks' table holds every user, so
// that the rule limits each of them: with a limit of one request an hour,
// every user's second request is rejected.
func TestHotspotHoldsAll(t *testing.T) {
	for _, n := range []int{10_000, 1_000_000} {
		if n > 10_000 && testing.Short() {
			continue
		}
		g, err := core.New(core.WithRules(hotspotRule(n, 1)))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		ks := keys(n)
		for round := range 2 {
			passed := 0
			var p userParam
			for _, p.v = range ks {
				if e, err := g.Enter(ctx, resource, core.WithParams(&p)); err == nil {
					passed++
					e.Exit(nil)
				}
			}
			if want := []int{n, 0}[round]; passed != want {
				t.Fatalf("%d users, round %d: %d passed, want %d", n, round, passed, want)
			}
		}
		g.Close()
	}
}
