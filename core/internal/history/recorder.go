package history

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/rthist"
	"github.com/sluicekit/sluice/core/internal/window"
	"github.com/sluicekit/sluice/core/internal/worker"
)

// Sample is what a Recorder reads of a Guard at one time: the totals of its
// resources and rules, which only grow (core.Guard.Snapshot has them).
type Sample struct {
	// Resources are the resources of their own, each name once; Overflow
	// counts the names beyond the Guard's bound, and the Recorder's
	// resources beyond its own bound count in its history.
	Resources []Resource
	Overflow  Resource
	Rules     []Rule                 // in rule order
	Named     func(name string) bool // whether a rule names it (no glob): it has a history whatever the bound
}

// Resource is a resource's totals (see core.Totals); RT is in nanoseconds.
type Resource struct {
	Name                             string
	Pass, Block, Error, Complete, RT int64
	RTHist                           [rthist.Buckets]int64
}

// Rule is a rule's totals (see core.RuleStats) and its limit and use at the
// sample's time, NaN when it has none. A rule whose totals go down is taken
// for a new one of its ID, whose history starts anew.
type Rule struct {
	ID                           RuleID
	Blocked, Shadowed, Evaluated int64
	Limit, Use                   float64
}

// RuleID is what a rule keeps its history by: a Guard keeps its totals
// across SetRules while these are unchanged (see core.Guard.SetRules).
type RuleID struct{ Name, Kind, Resource, Param string }

// ResourceSeries is the history of a resource (see core.ResourceHistory).
type ResourceSeries struct {
	Resource                  string
	Pass, Block, Error, AvgRT []float64
	P50RT, P99RT              []float64
}

// RuleSeries is the history of a rule (see core.RuleHistory).
type RuleSeries struct {
	Rule                                     string
	Blocked, Shadowed, Evaluated, Limit, Use []float64
}

// Columns of the rings of resources and rules.
const (
	colPass, colBlock, colError, colAvgRT, colP50, colP99, resCols    = 0, 1, 2, 3, 4, 5, 6
	colBlocked, colShadowed, colEvaluated, colLimit, colUse, ruleCols = 0, 1, 2, 3, 4, 5
)

// Counters of a resource the Recorder keeps (resTrack.prev): its
// response-time histogram from cHist on.
const (
	cPass, cBlock, cError, cComplete, cRT, cHist = 0, 1, 2, 3, 4, 5
	resCounters                                  = cHist + rthist.Buckets
)

// The bounds of a Recorder: it keeps the last Seconds seconds, one point a
// second, of the resources rules name (Sample.Named) and up to Resources
// others (those first seen; the others count in the overflow's history).
const (
	Seconds   = 600
	Resources = 1000
)

// Recorder keeps a point a second of the resources and rules of a Guard
// (see the package doc), until Close or until its source is gone; the
// counts of the seconds between two samples are shared evenly between
// them.
type Recorder struct {
	clock clock.Clock
	take  func() (Sample, bool) // false once the source is gone
	slab  *Slab                 // of the resources' rings; guarded by mu

	worker worker.Worker

	mu       sync.Mutex // guards the fields below
	sampled  bool       // once the first sample, a baseline, was taken
	last     int64      // the second of the last sample
	res      map[string]*resTrack
	overflow string // the overflow's name, in res
	rules    map[RuleID]*ruleTrack
	order    []RuleID // the rules of the last sample
	own      int      // resources no rule names with a ring of their own
}

// resTrack is the history of a resource: its ring, nil when it counts in
// the overflow's; its counters at the last sample, and the counts since
// then to record (its own and others').
type resTrack struct {
	ring      *Ring
	prev, acc [resCounters]int64
}

// ruleTrack is the history of a rule: its totals at the last sample
// (blocked, shadowed, evaluated), and the second it was last seen at.
type ruleTrack struct {
	ring *Ring
	prev [3]int64
	seen int64
}

// NewRecorder returns a Recorder of the samples sample takes of src, whose
// goroutine sleeps on c. It holds src weakly: once src is collected,
// Record records nothing and the goroutine ends at its next second.
func NewRecorder[T any](c clock.Clock, src *T, sample func(*T) Sample) *Recorder {
	w := weak.Make(src)
	slab, _ := NewSlab(Seconds, resCols) // constants: cannot fail
	return &Recorder{clock: c, slab: slab,
		res: map[string]*resTrack{}, rules: map[RuleID]*ruleTrack{},
		take: func() (Sample, bool) {
			if p := w.Value(); p != nil {
				return sample(p), true
			}
			return Sample{}, false
		}}
}

// Start starts the goroutine unless it runs or the Recorder was closed,
// and reports whether it started it.
func (h *Recorder) Start() bool {
	return h.worker.Go(func(ctx context.Context) {
		for {
			now := h.clock.Now()
			if !h.Record(now) || !worker.Sleep(ctx, h.clock, time.Second-now%time.Second) {
				return
			}
		}
	})
}

// Close ends the goroutine for good and waits for it; Record still
// records. It is idempotent.
func (h *Recorder) Close() { h.worker.Close() }

// Wait waits for the goroutine to return.
func (h *Recorder) Wait() { h.worker.Wait() }

// Record records the seconds that ended since the last sample, up to now,
// from a sample of the source, unless the second of now was recorded (no
// sample is taken then). The first sample only reads the totals. It
// reports false when the source is gone.
func (h *Recorder) Record(now time.Duration) bool {
	sec := window.Floor(int64(now), int64(time.Second)) / int64(time.Second)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sampled && sec <= h.last {
		return true
	}
	s, ok := h.take()
	if !ok {
		return false
	}
	k := sec - h.last // seconds to record
	if !h.sampled {
		k = 0
	}
	h.sampled, h.last = true, sec
	h.overflow = s.Overflow.Name
	over := h.track(s.Overflow.Name, k, nil, counters(&s.Overflow))
	for i := range s.Resources {
		r := &s.Resources[i]
		cur := counters(r)
		tr := h.track(r.Name, k, s.Named, cur)
		to := tr
		if tr.ring == nil {
			to = over
			if to.ring == nil {
				to.ring = h.slab.Ring()
			}
		}
		add(to, tr, cur)
	}
	cur := counters(&s.Overflow)
	if over.ring == nil && cur[cPass]+cur[cBlock] > 0 { // once it counts requests
		over.ring = h.slab.Ring()
	}
	add(over, over, cur)
	if k > 0 {
		for _, tr := range h.res {
			if tr.ring != nil {
				h.putResource(tr, sec, k)
			}
		}
	}
	h.order = h.order[:0]
	for _, r := range s.Rules {
		h.putRule(r, sec, k)
		h.order = append(h.order, r.ID)
	}
	for id, tr := range h.rules {
		if tr.seen != sec {
			delete(h.rules, id)
		}
	}
	return true
}

// counters returns r's totals as a resTrack counts them.
func counters(r *Resource) [resCounters]int64 {
	var c [resCounters]int64
	c[cPass], c[cBlock], c[cError], c[cComplete], c[cRT] = r.Pass, r.Block, r.Error, r.Complete, r.RT
	copy(c[cHist:], r.RTHist[:])
	return c
}

// track returns the track of the resource called name, counting from cur
// when new and k is 0 (the baseline), with a ring of its own if named reports
// it or, new, while the bound allows (named nil: the overflow's). h.mu is held.
func (h *Recorder) track(name string, k int64, named func(string) bool, cur [resCounters]int64) *resTrack {
	tr := h.res[name]
	if tr == nil {
		tr = &resTrack{}
		if k == 0 {
			tr.prev = cur // the baseline: counted before recording
		}
		if named != nil && !named(name) && h.own < Resources {
			tr.ring = h.slab.Ring()
			h.own++
		}
		h.res[name] = tr
	}
	if tr.ring == nil && named != nil && named(name) {
		tr.ring = h.slab.Ring()
	}
	return tr
}

// add adds to to's counts those of from since its last sample, cur now.
func add(to, from *resTrack, cur [resCounters]int64) {
	for i := range cur {
		to.acc[i] += cur[i] - from.prev[i]
	}
	from.prev = cur
}

// putResource records in tr's ring its counts since the last sample,
// shared by the k seconds ending at sec. h.mu is held.
func (h *Recorder) putResource(tr *resTrack, sec, k int64) {
	d := tr.acc
	tr.acc = [resCounters]int64{}
	avg := float32(math.NaN())
	if d[cComplete] > 0 {
		avg = float32(float64(d[cRT]) / float64(d[cComplete]) / float64(time.Millisecond))
	}
	p50, p99 := percentiles(d[cHist:], avg)
	var vals [resCols]float32
	vals[colPass], vals[colBlock], vals[colError] = share(d[cPass], k), share(d[cBlock], k), share(d[cError], k)
	vals[colAvgRT], vals[colP50], vals[colP99] = avg, p50, p99
	h.put(tr.ring, sec, k, vals[:])
}

// putRule records r's counts since the last sample, shared by the k
// seconds ending at sec, once k > 0. h.mu is held.
func (h *Recorder) putRule(r Rule, sec, k int64) {
	cur := [3]int64{r.Blocked, r.Shadowed, r.Evaluated}
	tr := h.rules[r.ID]
	if tr != nil && (cur[0] < tr.prev[0] || cur[1] < tr.prev[1] || cur[2] < tr.prev[2]) {
		tr = nil // a new rule of that ID: its totals started again
	}
	if tr == nil {
		ring, _ := New(Seconds, ruleCols) // constants: cannot fail
		tr = &ruleTrack{ring: ring}
		h.rules[r.ID] = tr
	}
	if k > 0 {
		var vals [ruleCols]float32
		vals[colBlocked], vals[colShadowed] = share(cur[0]-tr.prev[0], k), share(cur[1]-tr.prev[1], k)
		vals[colEvaluated] = share(cur[2]-tr.prev[2], k)
		vals[colLimit], vals[colUse] = float32(r.Limit), float32(r.Use)
		h.put(tr.ring, sec, k, vals[:])
	}
	tr.prev, tr.seen = cur, sec
}

// put records vals in r for the k seconds ending at sec (the last Seconds).
func (h *Recorder) put(r *Ring, sec, k int64, vals []float32) {
	if _, last := r.Held(); last >= sec {
		return
	}
	for s := max(sec-k+1, sec-Seconds+1); s <= sec; s++ {
		r.Put(s, vals)
	}
}

// percentiles returns the 50th and 99th percentiles, in milliseconds, of
// the response times counted in hist, a delta of a response-time
// histogram, whose average is avg: within the bucket each falls in (see
// Quantile), and the average when they all fall in one, as the response
// times of an endpoint that always takes about as long do: geometric
// interpolation would put its percentiles apart by up to a factor of two.
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
	return float32(Quantile(hist, rthist.Bound, 0.5) * 1e3), float32(Quantile(hist, rthist.Bound, 0.99) * 1e3)
}

// share returns n shared evenly between k seconds.
func share(n, k int64) float32 { return float32(float64(n) / float64(k)) }

// Read returns the history of the seconds that ended after after, as
// core.History has it: res by name, the overflow last, and rules in the
// order of the last sample.
func (h *Recorder) Read(after time.Duration) (end time.Duration, res []ResourceSeries, rules []RuleSeries) {
	from := window.Floor(int64(after), int64(time.Second))/int64(time.Second) + 1
	h.mu.Lock()
	defer h.mu.Unlock()
	res = make([]ResourceSeries, 0, min(len(h.res), h.own+1))
	var overflow *ResourceSeries
	for name, tr := range h.res {
		if tr.ring == nil {
			continue
		}
		rs := ResourceSeries{Resource: name,
			Pass: tr.ring.Column(nil, colPass, from), Block: tr.ring.Column(nil, colBlock, from),
			Error: tr.ring.Column(nil, colError, from), AvgRT: tr.ring.Column(nil, colAvgRT, from),
			P50RT: tr.ring.Column(nil, colP50, from), P99RT: tr.ring.Column(nil, colP99, from)}
		if name == h.overflow {
			overflow = &rs
			continue
		}
		res = append(res, rs)
	}
	slices.SortFunc(res, func(a, b ResourceSeries) int { return strings.Compare(a.Resource, b.Resource) })
	if overflow != nil {
		res = append(res, *overflow)
	}
	rules = make([]RuleSeries, 0, len(h.order))
	for _, id := range h.order {
		tr := h.rules[id]
		rules = append(rules, RuleSeries{Rule: id.Name,
			Blocked: tr.ring.Column(nil, colBlocked, from), Shadowed: tr.ring.Column(nil, colShadowed, from),
			Evaluated: tr.ring.Column(nil, colEvaluated, from),
			Limit:     tr.ring.Column(nil, colLimit, from), Use: tr.ring.Column(nil, colUse, from)})
	}
	return time.Duration(h.last) * time.Second, res, rules
}
