package peerbench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sethvargo/go-limiter/memorystore"
	"go.uber.org/ratelimit"
	"golang.org/x/time/rate"

	"github.com/sluicekit/sluice/core"
)

const resource = "GET /api/items/{id}"

// run runs one serially and from parallel goroutines.
func run(b *testing.B, one func(b *testing.B)) {
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			one(b)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				one(b)
			}
		})
	})
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
