package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alibaba/sentinel-golang/core/base"
	"github.com/alibaba/sentinel-golang/core/stat"
	"github.com/alibaba/sentinel-golang/core/system_metric"
	"github.com/sluicekit/sluice/examples/overload/engine"
)

// point is one sample.
type point struct {
	at                  time.Duration // since the load started
	cpu                 time.Duration // this process's, user and system
	hostBusy, hostTotal uint64        // /proc/stat ticks
	// Sentinel's readings: its CPU usage and load1, the inbound requests
	// in flight, the minimum RT (ms) and the highest completions per
	// second, whose product over 1000 is the BBR bound.
	sCPU, sLoad, minRT, maxDone float64
	inFlight                    int32
}

// trace is the engine.Program Trace: every 100 ms of a trial it samples
// this process's CPU time (getrusage: what sluice's cpu signal reads with
// no cgroup quota), the machine's busy share (/proc/stat) and, in a
// sentinel trial, what Sentinel's BBR check reads; when the load ends it
// prints a line on the measured part (after the warmup) to the standard
// error.
func trace(t engine.Trial) func() {
	ofSentinel := rules(t.Protection) != nil
	start := time.Now()
	stop := make(chan struct{})
	var points []point
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				p := point{at: now.Sub(start), cpu: processCPU()}
				p.hostBusy, p.hostTotal = hostCPU()
				if ofSentinel {
					n := stat.InboundNode()
					p.sCPU, p.sLoad = system_metric.CurrentCpuUsage(), system_metric.CurrentLoad()
					p.minRT, p.maxDone, p.inFlight = n.MinRT(), n.GetMaxAvg(base.MetricEventComplete), n.CurrentConcurrency()
				}
				points = append(points, p)
			}
		}
	})
	return func() {
		close(stop)
		wg.Wait()
		if line := summary(t, ofSentinel, points); line != "" {
			fmt.Fprintln(os.Stderr, line)
		}
	}
}

// summary sums up the points of t after its warmup: "" with fewer than 2.
func summary(t engine.Trial, ofSentinel bool, points []point) string {
	i := slices.IndexFunc(points, func(p point) bool { return p.at >= t.Warmup })
	if i < 0 || len(points)-i < 2 {
		return ""
	}
	ps := points[i:]
	first, last := ps[0], ps[len(ps)-1]
	procs := float64(runtime.GOMAXPROCS(0))
	share := func(a, b point) float64 { return float64(b.cpu-a.cpu) / float64(b.at-a.at) / procs }
	// The process's share over each second, as sluice's sampler reads it.
	var perSec []float64
	for j, k := 0, 0; j < len(ps); j = k {
		for k = j + 1; k < len(ps) && ps[k].at-ps[j].at < time.Second; k++ {
		}
		if k < len(ps) {
			perSec = append(perSec, share(ps[j], ps[k]))
		}
	}
	line := fmt.Sprintf("trace %-13s %4.0f/s: process CPU %.2f of GOMAXPROCS %d (per second %s), machine busy %.2f",
		t.Protection, t.Rate, share(first, last), int(procs), span(perSec),
		float64(last.hostBusy-first.hostBusy)/float64(max(last.hostTotal-first.hostTotal, 1)))
	if ofSentinel {
		col := func(f func(point) float64) string {
			v := make([]float64, len(ps))
			for j, p := range ps {
				v[j] = f(p)
			}
			return span(v)
		}
		line += fmt.Sprintf("; Sentinel reads: cpu %s, load1 %s, in flight %s, minRt ms %s, maxComplete/s %s, bound maxComplete*minRt/1000 %s",
			col(func(p point) float64 { return p.sCPU }), col(func(p point) float64 { return p.sLoad }),
			col(func(p point) float64 { return float64(p.inFlight) }), col(func(p point) float64 { return p.minRT }),
			col(func(p point) float64 { return p.maxDone }), col(func(p point) float64 { return p.maxDone * p.minRT / 1000 }))
	}
	return line
}

// processCPU returns the CPU time this process used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// hostCPU returns the machine's busy and total CPU ticks (/proc/stat);
// zeros where it cannot be read.
func hostCPU() (busy, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return 0, 0
	}
	for i, f := range fields[1:] {
		v, _ := strconv.ParseUint(f, 10, 64)
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}

// span formats the median and range of v: "median [min..max]".
func span(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	v = slices.Sorted(slices.Values(v))
	return fmt.Sprintf("%.3g [%.3g..%.3g]", v[len(v)/2], v[0], v[len(v)-1])
}
