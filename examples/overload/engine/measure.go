package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"runtime/metrics"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// sample is the state of a Guard's first rule at a time since the load
// started: its limit (when limited: the system rule's BBR bound applies
// only while the CPU is over its threshold), the requests in flight, the
// response times its controller compares (adaptive: the recent and the
// minimum RT; system: the average and the lowest of the last second), and
// the system rule's host signal.
type sample struct {
	at              time.Duration
	limited         bool
	limit, inFlight int64
	recent, minimum time.Duration
	host            float64
}

// trial is one load on a fresh backend and Guard.
type trial struct {
	outs    [][]outcome // by stream
	limits  []sample    // every 100ms; none without a Guard
	backend *backend
	// wait is the 99th percentile of the time this process's goroutines
	// waited to run (the server's, and the generator's when in process).
	wait time.Duration
}

// try serves a fresh backend protected by p (leveled: by priority level),
// drives streams at it for total, calling at(b) when the load starts, and
// returns what became of the requests.
func (c config) try(ctx context.Context, p Protection, leveled bool, streams []stream, total time.Duration, at func(b *backend)) (trial, error) {
	b := newBackend(c.workers, c.spin(), c.cost())
	mux := http.NewServeMux()
	var h http.Handler = mux
	var g *core.Guard
	var served http.Handler = b
	if p.Wrap != nil {
		var err error
		if served, err = p.Wrap(b); err != nil {
			return trial{}, fmt.Errorf("protection %s: %w", p.Name, err)
		}
	}
	if p.Rules == nil {
		mux.Handle(Route, served)
	} else {
		var err error
		g, err = core.New(core.WithLogger(slog.New(slog.DiscardHandler)),
			core.WithRules(p.Rules(Setup{Workers: c.workers, Service: c.service, Leveled: leveled})...))
		if err != nil {
			return trial{}, err
		}
		defer g.Close()
		sluicehttp.Handle(g, mux, Route, served)
		h = sluicehttp.Middleware(g)(mux)
	}
	url, shut, err := serve(h)
	if err != nil {
		return trial{}, err
	}
	defer shut()

	stop := make(chan struct{})
	var limits []sample
	var sampling sync.WaitGroup
	start := time.Now()
	if g != nil {
		sampling.Go(func() { limits = sampleLimits(g, start, stop) })
	}
	if at != nil {
		at(b)
	}
	end := func() {}
	if c.prog.Trace != nil {
		var rate float64
		for _, s := range streams {
			rate += s.Rate
		}
		end = c.prog.Trace(Trial{Protection: p.Name, Rate: rate, Warmup: c.warmup})
	}
	waits := schedLatencies()
	outs, err := generate(ctx, job{URL: url, Streams: streams, Total: total, Deadline: c.deadline}, c.inProcess)
	if end != nil {
		end()
	}
	close(stop)
	sampling.Wait()
	return trial{outs: outs, limits: limits, backend: b, wait: p99Since(waits, schedLatencies())}, err
}

// schedLatencies returns how long this process's goroutines waited to
// run, since it started: a Go scheduler's runnable goroutine waits for a
// CPU while others compute, the cpu backend's handlers up to the 10ms
// after which the scheduler preempts them.
func schedLatencies() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64Histogram()
}

// p99Since returns the 99th percentile of the counts added from before
// to after, histograms of the same buckets: the upper bound of its bucket
// (the lower of the last, unbounded one); 0 with none.
func p99Since(before, after *metrics.Float64Histogram) time.Duration {
	var total, seen uint64
	for i, n := range after.Counts {
		total += n - before.Counts[i]
	}
	for i, n := range after.Counts {
		if seen += n - before.Counts[i]; total > 0 && float64(seen) >= 0.99*float64(total) {
			upper := after.Buckets[i+1]
			if math.IsInf(upper, 1) {
				upper = after.Buckets[i]
			}
			return time.Duration(upper * float64(time.Second))
		}
	}
	return 0
}

// serve serves h over loopback until shut, returning the URL of Route.
func serve(h http.Handler) (url string, shut func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ln) })
	shut = func() {
		_ = srv.Close()
		wg.Wait()
	}
	return "http://" + ln.Addr().String() + "/work", shut, nil
}

// capacityRun is how long measureCapacity measures, after as long again
// of warmup.
const capacityRun = 2 * time.Second

// measureCapacity measures the backend's capacity, with no Guard, closed
// loop: twice as many clients as workers, each sending a request as soon
// as its previous one ended, keep every worker busy; it returns the
// requests answered per second.
func (c config) measureCapacity(ctx context.Context) (float64, error) {
	url, shut, err := serve(newBackend(c.workers, c.spin(), c.cost()))
	if err != nil {
		return 0, err
	}
	defer shut()
	outs, err := generate(ctx, job{URL: url, Clients: 2 * c.workers, Total: 2 * capacityRun, Deadline: c.deadline}, c.inProcess)
	if err != nil {
		return 0, err
	}
	done := 0
	for _, o := range outs[0] {
		if o.result == ok && o.at >= capacityRun && o.at < 2*capacityRun {
			done++
		}
	}
	return float64(done) / capacityRun.Seconds(), nil
}

// sampleLimits returns the state of g's first rule every 100ms from start
// until stop is closed, when it has a limit (core.RuleStats.HasUse) or is
// a system rule.
func sampleLimits(g *core.Guard, start time.Time, stop <-chan struct{}) []sample {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var out []sample
	for {
		select {
		case <-stop:
			return out
		case now := <-t.C:
			rs := g.Snapshot().Rules[0]
			s := sample{at: now.Sub(start), limited: rs.HasUse, limit: rs.Limit, inFlight: rs.InFlight}
			switch {
			case rs.Adaptive != nil:
				s.recent, s.minimum = rs.Adaptive.RecentRT, rs.Adaptive.MinRT
			case rs.System != nil:
				s.recent, s.minimum, s.host = rs.System.AvgRT, rs.System.MinRT, rs.System.Host
			case !rs.HasUse:
				continue
			}
			out = append(out, s)
		}
	}
}

// row is one line of the table.
type row struct {
	protection string
	load       float64
	capacity   float64 // requests per second
	summary
	limit int64         // the median of the samples of the rule's limit; -1 without
	wait  time.Duration // see trial
}

// measure runs protection name at load times the capacity.
func (c config) measure(ctx context.Context, name string, load float64) (row, error) {
	p, _ := c.protection(name)
	capacity := c.rate()
	t, err := c.try(ctx, p, false, []stream{{Rate: load * capacity}}, c.warmup+c.duration, nil)
	if err != nil {
		return row{}, err
	}
	r := row{protection: name, load: load, capacity: capacity, limit: -1, wait: t.wait,
		summary: summarize(t.outs[0], c.warmup, c.warmup+c.duration)}
	if c.samples != nil {
		for _, s := range t.limits {
			limit := "-"
			if s.limited {
				limit = fmt.Sprint(s.limit)
			}
			fmt.Fprintf(c.samples, "%s\t%g\t%.1f\t%s\t%d\t%.2f\t%.2f\t%.2f\n", name, load, s.at.Seconds(), limit, s.inFlight,
				float64(s.recent)/float64(time.Millisecond), float64(s.minimum)/float64(time.Millisecond), s.host)
		}
	}
	var ls []int64
	for _, s := range t.limits {
		if s.at >= c.warmup && s.limited {
			ls = append(ls, s.limit)
		}
	}
	if len(ls) > 0 {
		slices.Sort(ls)
		r.limit = ls[len(ls)/2]
	}
	return r, nil
}

// table prints rows aligned.
type table struct {
	w                  *tabwriter.Writer
	deadline, unloaded time.Duration
}

func newTable(out io.Writer, c config, unloaded time.Duration) *table {
	t := &table{tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight), c.deadline, unloaded}
	fmt.Fprintln(t.w, "protection\tload\toffered/s\tgoodput/s\tof capacity\tp50\tp99\tp99/unloaded\trejected\ttimed out\tlimit\tsched p99\t")
	return t
}

func (t *table) row(r row) {
	limit := "-"
	if r.limit >= 0 {
		limit = fmt.Sprint(r.limit)
	}
	fmt.Fprintf(t.w, "%s\t%gx\t%.0f\t%.0f\t%.0f%%\t%s\t%s\t%s\t%.0f%%\t%.0f%%\t%s\t%s\t\n",
		r.protection, r.load, r.offered, r.goodput, 100*r.goodput/r.capacity,
		t.latency(r.p50), t.latency(r.p99), t.ratio(r.p99), 100*r.rejected, 100*r.timedOut, limit, ms(r.wait))
}

func (t *table) latency(d time.Duration) string { return latency(d, t.deadline) }

func (t *table) ratio(d time.Duration) string {
	if t.unloaded <= 0 || d <= 0 {
		return "-"
	}
	s := fmt.Sprintf("%.1fx", float64(d)/float64(t.unloaded))
	if d >= t.deadline {
		s = ">=" + s
	}
	return s
}

func (t *table) flush() { _ = t.w.Flush() }

// ms formats d in milliseconds.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}
