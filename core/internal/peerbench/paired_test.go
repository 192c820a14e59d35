package peerbench

import (
	"context"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/sluicekit/sluice/core"
)

// TestPairedBatches measures what the benchmarks measure in a way a busy
// machine disturbs far less: batches of pairedPer calls, each on a thread
// of its own, the 10th percentile of batchCount batches; in parallel,
// two threads start each batch together, and only batches whose runs
// overlapped by 80% count (ns per call over both threads, as RunParallel's
// ns/op). It runs with SLUICE_PAIRED=1:
//
//	SLUICE_PAIRED=1 go -C core/internal/peerbench test -run Paired -v .
func TestPairedBatches(t *testing.T) {
	if os.Getenv("SLUICE_PAIRED") == "" {
		t.Skip("SLUICE_PAIRED=1 runs it")
	}
	guard := func(blocked bool, r core.Rule) func() func() {
		return func() func() {
			g, err := core.New(core.WithRules(r))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if blocked {
				for range 2 {
					if e, err := g.Enter(ctx, resource); err == nil {
						e.Exit(nil)
					}
				}
			}
			return func() {
				e, err := g.Enter(ctx, resource)
				if (err != nil) != blocked {
					panic(err)
				}
				e.Exit(nil)
			}
		}
	}
	xrate := func(blocked bool) func() func() {
		return func() func() {
			l := rate.NewLimiter(1<<40, 1<<30)
			if blocked {
				l = rate.NewLimiter(rate.Every(time.Hour), 1)
				l.Allow()
			}
			return func() {
				if l.Allow() == blocked {
					panic("x/time/rate")
				}
			}
		}
	}
	for _, c := range []struct {
		name string
		make func() func()
	}{
		{"PassSluiceTokenBucket", guard(false, flowRule("", 1_000_000_000, 0, core.AlgorithmTokenBucket))},
		{"PassXTimeRate", xrate(false)},
		{"BlockedSluiceTokenBucket", guard(true, flowRule("", 1, time.Hour, core.AlgorithmTokenBucket))},
		{"BlockedXTimeRate", xrate(true)},
	} {
		serial := serialBatches(c.make())
		parallel := pairedBatches(c.make())
		t.Logf("%-26s serial %6.1f ns  parallel %6.1f ns (%d of %d batches overlapped)",
			c.name, p10(serial), p10(parallel), len(parallel), batchCount)
	}
}

const batchCount, pairedPer = 20000, 100

var pairedStart = time.Now()

func pairedNow() int64 { return int64(time.Since(pairedStart)) }

// serialBatches returns the ns per call of f in each batch, on one thread.
func serialBatches(f func()) []float64 {
	out := make(chan []float64)
	go func() {
		runtime.LockOSThread()
		var ns []float64
		for range batchCount {
			s := pairedNow()
			for range pairedPer {
				f()
			}
			ns = append(ns, float64(pairedNow()-s)/pairedPer)
		}
		out <- ns
	}()
	return <-out
}

// pairedBatches returns, for each batch whose two runs overlapped by 80%,
// the wall time per call of f over both threads.
func pairedBatches(f func()) []float64 {
	var started, done atomic.Int64
	var s, e [2][batchCount]int64
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			runtime.LockOSThread()
			for b := range int64(batchCount) {
				if i == 0 { // the leader starts a batch when the other ended the last
					for done.Load() < b {
					}
					started.Store(b + 1)
				} else {
					for started.Load() < b+1 {
					}
				}
				s[i][b] = pairedNow()
				for range pairedPer {
					f()
				}
				e[i][b] = pairedNow()
				if i == 1 {
					done.Add(1)
				}
			}
		})
	}
	wg.Wait()
	var ns []float64
	for b := range batchCount {
		d := max(e[0][b]-s[0][b], e[1][b]-s[1][b])
		if overlap := min(e[0][b], e[1][b]) - max(s[0][b], s[1][b]); overlap*5 >= d*4 {
			ns = append(ns, float64(d)/(2*pairedPer))
		}
	}
	return ns
}

// p10 returns the 10th percentile of v, 0 when v is empty.
func p10(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/10]
}
