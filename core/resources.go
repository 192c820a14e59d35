package core

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/sluicekit/sluice/core/internal/window"
	"github.com/sluicekit/sluice/core/stripe"
)

// Statistics windows of a resource.
const (
	statInterval = time.Second
	statBuckets  = 10
)

// resource is the per-name state of the Guard: statistics that live as long
// as the Guard, striped by the processor (P) the goroutine entering runs on
// (see stripe.Picker) so that CPUs write different cache lines, and the
// rules bound to it under the current rule set.
type resource struct {
	name    string
	stripes stripes[resStripe]
	binding atomic.Pointer[binding]
}

// stripes are the statistics stripes of a resource or a rule, one per CPU
// (stripe.Count), made before its first request (Guard.bindingOf,
// ruleSet.bind): a resource or rule no request reaches costs none.
type stripes[T any] struct{ p atomic.Pointer[[]T] }

// each yields the stripes, none before the first write.
func (s *stripes[T]) each(yield func(*T) bool) {
	if p := s.p.Load(); p != nil {
		for i := range *p {
			if !yield(&(*p)[i]) {
				return
			}
		}
	}
}

// make makes the stripes, each set up by init, unless they are.
func (s *stripes[T]) make(init func(*T)) {
	if s.p.Load() != nil {
		return
	}
	made := make([]T, stripe.Count())
	for i := range made {
		init(&made[i])
	}
	s.p.CompareAndSwap(nil, &made)
}

// of returns the stripe picked by hint (see stripe.Picker), and its index.
func (s *stripes[T]) of(hint uint32) (*T, uint8) {
	ss := *s.p.Load()
	i := stripe.Of(hint, len(ss))
	return &ss[i], uint8(i)
}

const maxReasons = 8 // the reasons resStripe.blockedBy counts under (blockReasons)

// resStripe is one statistics stripe of a resource, 320 bytes on cache
// lines of their own (stripes are allocated together, 64-aligned): the
// first written by every request, the second by blocks, the others (the
// response time histogram, see RTHistogram) by Exit. Its counts run since
// the resource was made (see totals).
//
// entered and exited count the permits admitted and exited (a request
// exits through the stripe it entered by): their difference is the count
// in flight. blockedBy counts the permits blocked by reason (see
// reasonOf). The completed requests are exited less multi, the permits
// beyond the first of requests of several; the histogram's first bucket
// (within 7.6µs) is counted from them (see addRTs; rts0 is the largest it
// read). So a request that took no time and held one permit costs Exit
// one atomic add.
type resStripe struct {
	entered, exited atomic.Int64
	errors, rt      atomic.Int64
	stats           *window.LeapArray // never changes
	multi, rts0     atomic.Int64
	_               [8]byte
	blockedBy       [maxReasons]atomic.Int64 // 64 bytes
	rts             rtCounts                 // 192 bytes; rts[0] unused
}

// exit counts the exit of a request of n permits after rt, timed with
// weight w (see rtSampling): its histogram bucket and permits beyond the
// first before exited, so that a reader that loads exited first finds them
// counted.
func (st *resStripe) exit(n, rt, w int64) {
	if k := rtBucket(rt); k > 0 {
		st.rts[k].Add(w)
	}
	if n > 1 {
		count(&st.multi, min(n, maxCounted)-1)
	}
	count(&st.exited, n)
}

// rtSampling is how many requests of one permit a timed one stands for
// when Exit times a sample of them, on a Guard on the system clock, for a
// resource none of whose rules reads response times (limiter.times): the
// first of every rtSampling admitted through a statistics stripe, its
// response time counting rtSampling times in RT, Total.RT and RTHistogram.
// ResourceStats.Pass says what the estimate then is. As requests end out
// of order, the histogram's first bucket (see addRTs) makes up the
// difference when the estimated count is below the true one; never
// negative, the buckets can then add up to more than Complete.
//
// 16 rather than 8 took a pass without rules from 40 to 36 cpu-ns and one
// flow rule's from 77 to 73, 32 rather than 16 one flow rule's from 62.0
// to 60.4 (core/internal/peerbench, alternated rounds).
const rtSampling = 32

// completed returns the requests completed through the stripe: never more
// than were, exited read first (see exit).
func (st *resStripe) completed() int64 {
	e := st.exited.Load()
	return e - st.multi.Load()
}

// addRTs adds the stripe's response time histogram to h. Its first bucket
// is the completed requests less those of the others, read after them
// (see exit): never above the true count, and below it by the requests
// exiting meanwhile; it is raised to the largest count read before, so
// that the count never goes down, as a counter's must not.
func (st *resStripe) addRTs(h *RTHistogram) {
	done := st.completed()
	for i := 1; i < len(st.rts); i++ {
		c := st.rts[i].Load()
		h[i] += c
		done -= c
	}
	seen := st.rts0.Load()
	for done > seen && !st.rts0.CompareAndSwap(seen, done) {
		seen = st.rts0.Load()
	}
	h[0] += max(done, seen)
}

// inFlight returns the number of permits in flight, exited read first: a
// request entering and exiting meanwhile counts as entered only.
// inFlightSince reads entered first: it counts such a request as exited
// only, so that its count is never above the true one at the time of the
// call, and the peak Enter records with it stays within a concurrency limit.
func (r *resource) inFlight() int64 {
	exited := r.exited()
	return r.entered() - exited
}

func (r *resource) inFlightSince() int64 {
	entered := r.entered()
	return entered - r.exited()
}

// entered and exited return the permits admitted and exited through r's
// stripes (resStripe.entered, exited).
func (r *resource) entered() (n int64) {
	for st := range r.stripes.each {
		n = window.Plus(n, st.entered.Load())
	}
	return n
}

func (r *resource) exited() (n int64) {
	for st := range r.stripes.each {
		n = window.Plus(n, st.exited.Load())
	}
	return n
}

// peakSampling makes Enter add up the in-flight counts of every stripe of
// a resource once per 1<<peakSampling permits a stripe admits (see
// inFlightSince); otherwise it records its own stripe's count as a peak.
const peakSampling = 6

func (st *resStripe) init() {
	st.stats, _ = window.NewMarked(statBuckets, statInterval, st.totals) // constants: cannot fail
}

// totals returns the stripe's counts since the resource was made, by
// window event: what its statistics window records in each bucket (see
// window.NewMarked), so that a request adds to its totals only. Complete
// counts requests, as the histogram does, not permits as exited does.
func (st *resStripe) totals() window.Counts {
	c := window.Counts{window.Pass: st.entered.Load(), window.Error: st.errors.Load(), window.RT: st.rt.Load(),
		window.Complete: st.completed()}
	for i := range st.blockedBy {
		c[window.Block] = window.Plus(c[window.Block], st.blockedBy[i].Load())
	}
	return c
}

// resourceTable maps names to resources. Lookups read an immutable map
// through one atomic load and never lock. New names go to dirty, under mu,
// which is copied to read after enough lookups had to lock, so the cost of
// copying is spread over the lookups. Lookups make at most max resources;
// names beyond share one overflow resource, so hostile names cannot grow it.
// Rules' exact names get theirs when the rules are set, up to max (reserve).
type resourceTable struct {
	// hot holds, in slot len(name)%len(hot), the first resource looked up
	// in read with a name of that length: a request to it compares one
	// name instead of hashing it. A resource is never removed, so a slot
	// is written once.
	hot      [16]atomic.Pointer[resource]
	read     atomic.Pointer[map[string]*resource]
	mu       sync.Mutex
	dirty    map[string]*resource // every resource; guarded by mu
	misses   int                  // lookups that locked since the last copy; guarded by mu
	max      int
	full     atomic.Bool
	overflow *resource
	picker   *stripe.Picker
	made     [2]int // resources made by lookups, by reserve; guarded by mu
}

// OverflowResource is the name under which statistics of resources beyond
// the Guard's resource bound are kept (see WithMaxResources), and those of
// a resource given that name.
const OverflowResource = "(overflow)"

func newResourceTable(max int) *resourceTable {
	t := &resourceTable{dirty: map[string]*resource{}, max: max, overflow: &resource{name: OverflowResource}, picker: stripe.NewPicker()}
	t.overflow.stripes.make((*resStripe).init) // its bindings are the rules' beyond the bound
	t.read.Store(&map[string]*resource{})
	return t
}

// hit returns the resource of name when it is in its hot slot, nil
// otherwise: small enough to be inlined where a request starts (Enter),
// before get.
func (t *resourceTable) hit(name string) *resource {
	if r := t.hot[len(name)%len(t.hot)].Load(); r != nil && r.name == name {
		return r
	}
	return nil
}

// get returns the resource of name, not in its hot slot (hit), creating it
// if the table has room. The second result is false when name went to the
// overflow resource.
func (t *resourceTable) get(name string) (*resource, bool) {
	if found, ok := (*t.read.Load())[name]; ok {
		if hot := &t.hot[len(name)%len(t.hot)]; hot.Load() == nil {
			hot.CompareAndSwap(nil, found)
		}
		return found, true
	}
	if !utf8.ValidString(name) { // one resource for the names reported alike (U+FFFD)
		return t.get(strings.ToValidUTF8(name, "\uFFFD"))
	}
	if t.full.Load() || name == OverflowResource { // one resource of that name
		return t.overflow, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.dirty[name]
	if !ok {
		if t.made[0] >= t.max {
			t.full.Store(true)
			return t.overflow, false
		}
		r = &resource{name: name}
		t.dirty[name], t.made[0] = r, t.made[0]+1
	}
	if t.misses++; t.misses > len(t.dirty)/8 {
		t.publish()
	}
	return r, true
}

// publish copies dirty to read.
func (t *resourceTable) publish() {
	read := maps.Clone(t.dirty)
	t.read.Store(&read)
	t.misses = 0
}

// reserve makes the resources of the rules of exact names, but OverflowResource.
func (t *resourceTable) reserve(rules []*ruleState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, rs := range rules {
		if _, ok := t.dirty[rs.rule.Resource]; !ok && rs.pattern.parts == nil && rs.rule.Resource != OverflowResource && t.made[1] < t.max {
			t.dirty[rs.rule.Resource], t.made[1] = &resource{name: rs.rule.Resource}, t.made[1]+1
			t.misses = len(t.dirty) // published below
		}
	}
	if t.misses > len(t.dirty)/8 {
		t.publish()
	}
}

// all returns every resource, by name, the overflow one last.
func (t *resourceTable) all() []*resource {
	t.mu.Lock()
	all := slices.Collect(maps.Values(t.dirty))
	t.mu.Unlock()
	slices.SortFunc(all, func(a, b *resource) int { return strings.Compare(a.name, b.name) })
	return append(all, t.overflow)
}
