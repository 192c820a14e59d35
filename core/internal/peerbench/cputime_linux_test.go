//go:build linux

package peerbench

import (
	"context"
	"flag"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sethvargo/go-limiter/memorystore"

	"github.com/sluicekit/sluice/core"
)

var cpuRounds = flag.Int("cpurounds", 0, "rounds of TestCPUTimeHotspot's batches; 0 skips it")

// threadCPU returns the CPU time the calling thread used so far.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD, Linux
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU returns the CPU time the process used so far, all its threads.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestCPUTimeHotspot measures what the hotspot benchmarks do as the CPU time
// of the threads per request, which a machine busy with other work
// disturbs far less than the wall-clock time of a benchmark: batches of
// 200 000 requests of sluice and of sethvargo alternate, from 1 and from 2
// goroutines, each locked to its thread; the least batch of each counts.
//
//	go -C core/internal/peerbench test -run CPUTimeHotspot -v -cpurounds 5 .
func TestCPUTimeHotspot(t *testing.T) {
	if *cpuRounds == 0 {
		t.Skip("-cpurounds not set")
	}
	const batch = 200_000
	for _, n := range []int{10_000, 1_000_000} {
		ks := keys(n)
		g, err := core.New(core.WithRules(hotspotRule(n, 1_000_000_000_000)))
		if err != nil {
			t.Fatal(err)
		}
		s, err := memorystore.New(&memorystore.Config{Tokens: 1 << 40, Interval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		sl := func(p *userParam) {
			e, err := g.Enter(ctx, resource, core.WithParams(p))
			if err != nil {
				panic(err)
			}
			e.Exit(nil)
		}
		sv := func(p *userParam) { _, _, _, _, _ = s.Take(ctx, p.v) }
		var p userParam
		for _, p.v = range ks {
			sl(&p)
			sv(&p)
		}
		run := func(one func(*userParam), gs int, off *int) time.Duration {
			var wg sync.WaitGroup
			cpu := make([]time.Duration, gs)
			for w := range gs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					var p userParam
					j := (*off + w*len(ks)/8) % len(ks)
					c0 := threadCPU()
					for range batch {
						p.v = ks[j]
						one(&p)
						if j++; j == len(ks) {
							j = 0
						}
					}
					cpu[w] = threadCPU() - c0
				}()
			}
			wg.Wait()
			*off = (*off + batch) % len(ks)
			var sum time.Duration
			for _, c := range cpu {
				sum += c
			}
			return sum / time.Duration(gs*batch)
		}
		for _, gs := range []int{1, 2} {
			var a, b []time.Duration
			var offA, offB int
			for r := range *cpuRounds {
				if r%2 == 0 {
					a = append(a, run(sl, gs, &offA))
					b = append(b, run(sv, gs, &offB))
				} else {
					b = append(b, run(sv, gs, &offB))
					a = append(a, run(sl, gs, &offA))
				}
			}
			ma, mb := slices.Min(a), slices.Min(b)
			t.Logf("%d keys, %d goroutines: sluice %d ns, sethvargo %d ns CPU per request, ratio %.2f", n, gs, ma.Nanoseconds(), mb.Nanoseconds(), float64(mb)/float64(ma))
		}
		_ = s.Close(ctx)
	}
}
