package core_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sluicekit/sluice/core"
)

// benchGuard runs Enter+Exit on resource "r" of a Guard with rules on the
// system clock, serially and from parallel goroutines. Passing requests are
// exited; blocked ones are counted and must match wantBlocked.
func benchGuard(b *testing.B, wantBlocked bool, rules ...core.Rule) {
	benchGuardWith(b, wantBlocked, nil, rules...)
}

// benchGuardWith is benchGuard with Enter options.
func benchGuardWith(b *testing.B, wantBlocked bool, opts []core.EnterOption, rules ...core.Rule) {
	g, err := core.New(core.WithRules(rules...))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	one := func() {
		e, err := g.Enter(ctx, "GET /api/items/{id}", opts...)
		if (err != nil) != wantBlocked {
			b.Fatalf("Enter: err = %v, want blocked %v", err, wantBlocked)
		}
		e.Exit(nil)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			one()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				one()
			}
		})
	})
}

func BenchmarkGuardNoRule(b *testing.B) { benchGuard(b, false) }

func BenchmarkGuardFlowPass(b *testing.B) {
	benchGuard(b, false, core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindFlow, Limit: 1 << 40})
}

func BenchmarkGuardFlowBlocked(b *testing.B) {
	benchGuard(b, true, core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindFlow, Limit: 0})
}

func BenchmarkGuardConcurrency(b *testing.B) {
	benchGuard(b, false, core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindConcurrency, Limit: 1 << 20})
}

// BenchmarkGuardConcurrencyShared is a concurrency rule whose limit is too
// low for CPUs to lease slots: every request writes the one shared count.
func BenchmarkGuardConcurrencyShared(b *testing.B) {
	benchGuard(b, false, core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindConcurrency, Limit: 100})
}

func BenchmarkGuardFlowHotspotConcurrency(b *testing.B) {
	params := core.ParamMap{"header:X-User-ID": {"user-42"}}
	benchGuardWith(b, false, []core.EnterOption{core.WithParams(params)},
		core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindFlow, Limit: 1 << 40},
		core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 500_000_000},
		core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindConcurrency, Limit: 1 << 20},
	)
}

// BenchmarkGuardFlowBreaker is a flow rule and a closed breaker on one
// resource: the breaker's cost on a request that passes.
func BenchmarkGuardFlowBreaker(b *testing.B) {
	benchGuard(b, false,
		core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindFlow, Limit: 1 << 40},
		core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindBreaker, Strategy: "error-ratio", Threshold: 0.5})
}

// BenchmarkGuardSystem is a system rule on requests in flight: its own
// statistics and the per-level counts of priorities on a request that
// passes.
func BenchmarkGuardSystem(b *testing.B) {
	benchGuard(b, false, core.Rule{Resource: "*", Kind: core.KindSystem, Signal: core.SignalInFlight, Threshold: 1 << 20})
}

// BenchmarkGuardAdaptivePriority is an adaptive rule reading the level of
// each request from a param, a default request with critical ones seen: a
// lower level's reckoning of the room the levels above keep.
func BenchmarkGuardAdaptivePriority(b *testing.B) {
	params := core.ParamMap{"header:X-Priority": {"default"}}
	g, err := core.New(core.WithRules(core.Rule{Resource: "*", Kind: core.KindAdaptive, MinLimit: 1 << 20, MaxLimit: 1 << 20, Priority: "header:X-Priority"}))
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	crit, err := g.Enter(core.WithPriority(context.Background(), core.PriorityCritical), "GET /api/items/{id}")
	if err != nil {
		b.Fatal(err)
	}
	defer crit.Exit(nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		e, err := g.Enter(ctx, "GET /api/items/{id}", core.WithParams(params))
		if err != nil {
			b.Fatal(err)
		}
		e.Exit(nil)
	}
}

// BenchmarkGuardBeyondMaxResources is a flow rule on every resource of a
// Guard whose resource bound is reached: each request names one of 1000
// resources beyond it, whose statistics go to the overflow resource.
func BenchmarkGuardBeyondMaxResources(b *testing.B) {
	g, err := core.New(core.WithMaxResources(10), core.WithRules(core.Rule{Resource: "*", Kind: core.KindFlow, Limit: 1 << 40}))
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, 1010)
	for i := range names {
		names[i] = "GET /api/items/" + strconv.Itoa(i)
	}
	ctx := context.Background()
	for _, name := range names[:10] { // the bound
		e, _ := g.Enter(ctx, name)
		e.Exit(nil)
	}
	names = names[10:]
	one := func(i int) {
		e, err := g.Enter(ctx, names[i%len(names)])
		if err != nil {
			b.Fatal(err)
		}
		e.Exit(nil)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			one(i)
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				one(i)
			}
		})
	})
}

// BenchmarkGuardHotspotConcurrency is a hotspot rule of the concurrency
// algorithm: the value's slot is kept until Exit (Entry.keep).
func BenchmarkGuardHotspotConcurrency(b *testing.B) {
	params := core.ParamMap{"header:X-User-ID": {"user-42"}}
	benchGuardWith(b, false, []core.EnterOption{core.WithParams(params)},
		core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindHotspot, Param: "header:X-User-ID", Algorithm: "concurrency", Limit: 1 << 20})
}

// BenchmarkGuardTwoBreakers is two closed breakers on one resource: the
// second one's ticket is kept until Exit (Entry.keep).
func BenchmarkGuardTwoBreakers(b *testing.B) {
	benchGuard(b, false,
		core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindBreaker, Strategy: "error-ratio", Threshold: 0.5},
		core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindBreaker, Strategy: "slow-ratio", Threshold: 0.5, MaxRT: time.Second})
}
