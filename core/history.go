package core

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/history"
	"github.com/sluicekit/sluice/core/internal/rthist"
	"github.com/sluicekit/sluice/core/internal/worker"
)

// historyLength is how far back the history of a Guard goes (see
// Guard.History): one point a second.
const historyLength = 10 * time.Minute

// historyResources bounds the resources with a history of their own (see
// Guard.History).
const historyResources = 1000

// History is the history of a Guard's resources and rules, one point per
// second (see Guard.History). Each series ends at the second that ended at
// End: point i of a series of n points is the second ending at End -
// (n-1-i) seconds. A series is shorter than the others when its resource or
// rule came later. Counts per second are float64 because a second the
// Guard could not sample in time (a busy host) shares the counts of the
// seconds since the previous sample evenly.
type History struct {
	End       time.Duration     // the Guard's clock
	Resources []ResourceHistory // by name, OverflowResource last
	Rules     []RuleHistory     // in rule order
}

// ResourceHistory is the history of a resource: the permits passed and
// blocked, and the requests that failed, per second; the average response
// time of the requests completed in each second, and its 50th and 99th
// percentiles (from Totals.RTHistogram, within its power-of-two buckets),
// in milliseconds, NaN in a second where none completed.
type ResourceHistory struct {
	Resource                  string
	Pass, Block, Error, AvgRT []float64
	P50RT, P99RT              []float64
}

// RuleHistory is the history of a rule in force: the permits it blocked,
// would have blocked in shadow mode (Shadowed) and evaluated per second (as
// RuleStats counts them); its limit in force and its use of it at each
// second, RuleStats.Limit and Use where it has them (HasUse: flow rules in
// memory, concurrency and adaptive rules, system rules on qps or
// inflight), otherwise Rule.Limit (hotspot rules: per value) and NaN, both
// NaN for breakers and other system rules.
type RuleHistory struct {
	Rule                                     string
	Blocked, Shadowed, Evaluated, Limit, Use []float64
}

// History returns the history the Guard keeps of its resources and rules,
// the points of the seconds that ended after after: all it keeps when after
// is at or before the time it started to record. It keeps the last 10
// minutes, one point a second, from the first call of History on
// (dashboard.New calls it): that call starts a goroutine of the Guard that
// samples its counters once a second, which Close stops; a request costs
// nothing more. Its memory is fixed: about 15 kB per resource and 12 kB
// per rule, for up to 1000 resources (those first seen); the requests to
// resources beyond count in the history of OverflowResource.
func (g *Guard) History(after time.Duration) History {
	h := g.history
	h.start()
	h.sample(g, g.clock.Now())
	return h.read(g, after)
}

// Columns of the rings of resources and rules.
const (
	colPass, colBlock, colError, colAvgRT, colP50, colP99, resCols    = 0, 1, 2, 3, 4, 5, 6
	colBlocked, colShadowed, colEvaluated, colLimit, colUse, ruleCols = 0, 1, 2, 3, 4, 5
	historySeconds                                                    = int(historyLength / time.Second)
)

// Counters of a resource the recorder reads (resTrack.prev): its
// response-time histogram from cHist on.
const (
	cPass, cBlock, cError, cComplete, cRT, cHist = 0, 1, 2, 3, 4, 5
	resCounters                                  = cHist + rtBuckets
)

// recorder keeps the history of a Guard (see Guard.History). Its goroutine
// holds a weak pointer to the Guard, which may be collected while it
// sleeps.
type recorder struct {
	clock clock.Clock
	guard weak.Pointer[Guard]
	limit int           // resources with a ring of their own: historyResources
	slab  *history.Slab // of the resources' rings; guarded by mu

	worker worker.Worker

	mu      sync.Mutex // guards the fields below
	sampled bool       // once the first sample, a baseline, was taken
	last    int64      // the second of the last sample: its Guard time / 1s
	res     map[*resource]*resTrack
	rules   map[*ruleStats]*ruleTrack
	own     int // resources with a ring of their own
}

// resTrack is the history of a resource: its ring, nil when it counts in
// the overflow resource's; its counters at the last sample, and the counts
// since then to record (its own and others').
type resTrack struct {
	ring      *history.Ring
	prev, acc [resCounters]int64
}

// ruleTrack is the history of a rule: the rule's blocked and evaluated
// totals at the last sample, and the sample it was last seen at.
type ruleTrack struct {
	ring    *history.Ring
	prev    [3]int64 // blocked, shadowed, evaluated
	seen    int64
	written bool
}

func newRecorder(c clock.Clock, g *Guard) *recorder {
	slab, _ := history.NewSlab(historySeconds, resCols) // constants: cannot fail
	return &recorder{clock: c, guard: weak.Make(g), limit: historyResources, slab: slab,
		res: map[*resource]*resTrack{}, rules: map[*ruleStats]*ruleTrack{}}
}

// start starts the goroutine unless it runs or the Guard was closed.
func (h *recorder) start() { h.worker.Go(h.run) }

// run samples at every second of the Guard's clock until ctx ends or the
// Guard is collected.
func (h *recorder) run(ctx context.Context) {
	for {
		now := h.clock.Now()
		if !h.sampleGuard(now) || !worker.Sleep(ctx, h.clock, time.Second-now%time.Second) {
			return
		}
	}
}

// sampleGuard samples the Guard at now, and returns false when it was
// collected.
func (h *recorder) sampleGuard(now time.Duration) bool {
	g := h.guard.Value()
	if g == nil {
		return false
	}
	h.sample(g, now)
	return true
}

// stop ends the goroutine for good and waits for it. It is idempotent.
func (h *recorder) stop() { h.worker.Close() }

// newRing returns a ring of the history's length.
func newRing(cols int) *history.Ring {
	r, _ := history.New(historySeconds, cols) // constants: cannot fail
	return r
}

// sample records the seconds that ended since the last sample, up to now,
// from the Guard's counters: their counts are shared evenly between them.
// The first sample only reads the counters.
func (h *recorder) sample(g *Guard, now time.Duration) {
	sec := int64(now / time.Second)
	if now < 0 && now%time.Second != 0 {
		sec--
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sampled && sec <= h.last {
		return
	}
	k := sec - h.last // seconds to record
	if !h.sampled {
		k = 0
	}
	h.sampled, h.last = true, sec
	overflow := g.resources.overflow
	entered := map[*resource]int64{}
	var cur [resCounters]int64
	g.resources.each(func(r *resource) {
		cur = [resCounters]int64{}
		for i := range r.stripes {
			cur[cComplete] += r.stripes[i].exited.Load()
		}
		for i := range r.stripes {
			t := &r.stripes[i]
			cur[cPass] += t.entered.Load()
			cur[cBlock] += t.blocked()
			cur[cError] += t.errors.Load()
			cur[cRT] += t.rt.Load()
			var h RTHistogram
			t.addRTs(&h)
			for j, c := range h {
				cur[cHist+j] += c
			}
		}
		entered[r] = cur[cPass]
		tr := h.res[r]
		if tr == nil {
			tr = &resTrack{}
			if k == 0 {
				tr.prev = cur // the baseline: counted before recording
			}
			if r != overflow && h.own < h.limit {
				tr.ring = h.slab.Ring()
				h.own++
			}
			h.res[r] = tr
		}
		to := tr
		if r != overflow && tr.ring == nil {
			to = h.res[overflow]
			if to == nil { // each calls back with the overflow last
				to = &resTrack{}
				h.res[overflow] = to
			}
		}
		if to.ring == nil && (r != overflow || cur[cPass]+cur[cBlock] > 0) {
			// The overflow resource, once it counts requests.
			to.ring = h.slab.Ring()
		}
		for i := range cur {
			to.acc[i] += cur[i] - tr.prev[i]
		}
		tr.prev = cur
	})
	if k == 0 { // the overflow's own counts were added before its baseline
		for _, tr := range h.res {
			tr.acc = [resCounters]int64{}
		}
	}
	if k > 0 {
		for _, tr := range h.res {
			if tr.ring == nil {
				continue
			}
			d := tr.acc
			tr.acc = [resCounters]int64{}
			avg := float32(math.NaN())
			if d[cComplete] > 0 {
				avg = float32(float64(d[cRT]) / float64(d[cComplete]) / float64(time.Millisecond))
			}
			p50, p99 := percentiles(d[cHist:], avg)
			put(tr.ring, sec, k, func(vals []float32) {
				vals[colPass], vals[colBlock], vals[colError] = share(d[cPass], k), share(d[cBlock], k), share(d[cError], k)
				vals[colAvgRT], vals[colP50], vals[colP99] = avg, p50, p99
			}, resCols)
		}
	}
	for _, rs := range g.rules.Load().rules {
		st := rs.stats
		tr := h.rules[st]
		if tr == nil {
			tr = &ruleTrack{ring: newRing(ruleCols)}
			h.rules[st] = tr
		}
		s := rs.snapshot(int64(now), entered, g.watch.after)
		cur := [3]int64{s.BlockedTotal, s.ShadowedTotal, s.Evaluated}
		if k == 0 && !tr.written {
			tr.prev = cur
		}
		limit, use := float32(s.Rule.Limit), float32(math.NaN())
		switch {
		case s.HasUse:
			limit, use = float32(s.Limit), float32(s.Use)
		case s.Rule.Kind == KindBreaker || s.Rule.Kind == KindSystem:
			limit = float32(math.NaN())
		}
		if k > 0 {
			blocked, shadowed, evaluated := cur[0]-tr.prev[0], cur[1]-tr.prev[1], cur[2]-tr.prev[2]
			put(tr.ring, sec, k, func(vals []float32) {
				vals[colBlocked], vals[colShadowed], vals[colEvaluated] = share(blocked, k), share(shadowed, k), share(evaluated, k)
				vals[colLimit], vals[colUse] = limit, use
			}, ruleCols)
			tr.written = true
		}
		tr.prev, tr.seen = cur, sec
	}
	for st, tr := range h.rules {
		if tr.seen != sec {
			delete(h.rules, st)
		}
	}
}

// put records in r the k seconds ending at second sec, the last
// historyLength of them, each filled by fill.
func put(r *history.Ring, sec, k int64, fill func([]float32), cols int) {
	var buf [max(resCols, ruleCols)]float32
	vals := buf[:cols]
	fill(vals)
	if _, last := r.Held(); last >= sec {
		return
	}
	for s := max(sec-k+1, sec-int64(historySeconds)+1); s <= sec; s++ {
		r.Put(s, vals)
	}
}

// percentiles returns the 50th and 99th percentiles, in milliseconds, of
// the response times counted in hist, a delta of an RTHistogram, whose
// average is avg: within the bucket each falls in (see history.Quantile),
// and the average when they all fall in one, as the response times of an
// endpoint that always takes about as long do: geometric interpolation
// would put its percentiles apart by up to a factor of two.
func percentiles(hist []int64, avg float32) (p50, p99 float32) {
	used := 0
	for _, n := range hist {
		if n > 0 {
			used++
		}
	}
	if used == 1 {
		return avg, avg
	}
	return float32(history.Quantile(hist, rthist.Bound, 0.5) * 1e3), float32(history.Quantile(hist, rthist.Bound, 0.99) * 1e3)
}

// share returns n shared evenly between k seconds.
func share(n, k int64) float32 { return float32(float64(n) / float64(k)) }

// read returns the history of the seconds that ended after after.
func (h *recorder) read(g *Guard, after time.Duration) History {
	from := int64(after/time.Second) + 1
	if after < 0 && after%time.Second != 0 {
		from--
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := History{End: time.Duration(h.last) * time.Second}
	var overflow *ResourceHistory
	for r, tr := range h.res {
		if tr.ring == nil {
			continue
		}
		rh := ResourceHistory{Resource: r.name,
			Pass: tr.ring.Column(nil, colPass, from), Block: tr.ring.Column(nil, colBlock, from),
			Error: tr.ring.Column(nil, colError, from), AvgRT: tr.ring.Column(nil, colAvgRT, from),
			P50RT: tr.ring.Column(nil, colP50, from), P99RT: tr.ring.Column(nil, colP99, from)}
		if r == g.resources.overflow {
			overflow = &rh
			continue
		}
		out.Resources = append(out.Resources, rh)
	}
	slices.SortFunc(out.Resources, func(a, b ResourceHistory) int { return strings.Compare(a.Resource, b.Resource) })
	if overflow != nil {
		out.Resources = append(out.Resources, *overflow)
	}
	for _, rs := range g.rules.Load().rules {
		tr := h.rules[rs.stats]
		if tr == nil {
			continue
		}
		out.Rules = append(out.Rules, RuleHistory{Rule: rs.rule.Name,
			Blocked: tr.ring.Column(nil, colBlocked, from), Shadowed: tr.ring.Column(nil, colShadowed, from),
			Evaluated: tr.ring.Column(nil, colEvaluated, from),
			Limit:     tr.ring.Column(nil, colLimit, from), Use: tr.ring.Column(nil, colUse, from)})
	}
	return out
}
