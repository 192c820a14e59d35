package core

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/window"
)

// Statistics windows of a resource.
const (
	statInterval = time.Second
	statBuckets  = 10
)

// resource is the per-name state of the Guard: statistics that live as long
// as the Guard, and the rules bound to it under the current rule set.
//
// The statistics are striped: each request counts in one of several leap
// arrays, so that goroutines on different CPUs entering the same resource
// rarely write the same cache line. An admitted request's stripe is picked
// by the in-flight count its entry made, which differs between requests in
// flight together, so they count in different stripes (as many as there
// are stripes); a rejected request's, at random. Snapshots merge the
// stripes.
//
// entered and exited count the permits admitted and exited since the
// resource was made: their difference is the count in flight, and they are
// the totals of passed and completed permits, so those totals cost no
// atomic add of their own. They share a cache line of their own: Enter
// writes one and reads the other, Exit writes the other, so a request
// moves one line between CPUs, as one in-flight counter would. Exit adds to
// exited before it releases the request's slots, and Enter reads exited
// after it added to entered, so the in-flight count Enter records as a peak
// is never above the true one, and never above a concurrency limit.
type resource struct {
	// First, so that they are on the first cache line of the resource,
	// alone: a resource is 256 bytes, allocated 256-aligned.
	entered atomic.Int64
	exited  atomic.Int64
	_       [48]byte

	name    string
	stripes []*window.LeapArray
	totals  []totals // per stripe: counts since the resource was made
	binding atomic.Pointer[binding]
	// blockedBy counts the requests blocked, by reason (see reasonOf);
	// only the block path writes it.
	blockedBy [numReasons]atomic.Int64
}

// inFlight returns the number of permits in flight.
func (r *resource) inFlight() int64 { return r.entered.Load() - r.exited.Load() }

// statStripes returns the number of statistics stripes of a resource:
// twice the CPUs Go runs on, rounded up to a power of two, at most 16
// (a power of two, so that stripe can mask a hash).
func statStripes() int {
	n := 1
	for n < 2*runtime.GOMAXPROCS(0) && n < 16 {
		n *= 2
	}
	return n
}

// totals are counts of one statistics stripe of a resource since it was
// made, on a cache line of their own (see also entered and exited). They
// are written by blocks, failures and responses that took time (not on
// every request).
type totals struct {
	block, errors, rt atomic.Int64
	_                 [40]byte
}

func newResource(name string, stripes int) *resource {
	r := &resource{name: name, stripes: make([]*window.LeapArray, stripes), totals: make([]totals, stripes)}
	for i := range r.stripes {
		r.stripes[i], _ = window.New(statBuckets, statInterval) // constants: cannot fail
	}
	return r
}

// stripe returns the statistics stripe picked by v, and its index: v's low
// bits, so that consecutive values pick different stripes.
func (r *resource) stripe(v uint64) (*window.LeapArray, uint8) {
	i := uint8(v & uint64(len(r.stripes)-1))
	return r.stripes[i], i
}

// resourceTable maps names to resources. Lookups read an immutable map
// through one atomic load and never lock. New names go to dirty, under mu,
// which is copied to read after enough lookups had to lock, so the cost of
// copying is spread over the lookups. The table holds at most max resources;
// names beyond share one overflow resource, so hostile names cannot grow it.
type resourceTable struct {
	read     atomic.Pointer[map[string]*resource]
	mu       sync.Mutex
	dirty    map[string]*resource // every resource; guarded by mu
	misses   int                  // lookups that locked since the last copy; guarded by mu
	max      int
	full     atomic.Bool
	overflow *resource
	stripes  int // statistics stripes per resource
}

// OverflowResource is the name under which statistics of resources beyond
// the Guard's resource bound are kept (see WithMaxResources).
const OverflowResource = "(overflow)"

func newResourceTable(max int) *resourceTable {
	stripes := statStripes()
	t := &resourceTable{dirty: map[string]*resource{}, max: max, overflow: newResource(OverflowResource, stripes), stripes: stripes}
	t.read.Store(&map[string]*resource{})
	return t
}

// get returns the resource of name, creating it if the table has room. The
// second result is false when name went to the overflow resource.
func (t *resourceTable) get(name string) (*resource, bool) {
	if r, ok := (*t.read.Load())[name]; ok {
		return r, true
	}
	if t.full.Load() {
		return t.overflow, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.dirty[name]
	if !ok {
		if len(t.dirty) >= t.max {
			t.full.Store(true)
			return t.overflow, false
		}
		r = newResource(name, t.stripes)
		t.dirty[name] = r
	}
	t.misses++
	if t.misses > len(t.dirty)/8 {
		read := make(map[string]*resource, len(t.dirty))
		for k, v := range t.dirty {
			read[k] = v
		}
		t.read.Store(&read)
		t.misses = 0
	}
	return r, true
}

// each calls fn for every resource, the overflow one last.
func (t *resourceTable) each(fn func(*resource)) {
	t.mu.Lock()
	all := make([]*resource, 0, len(t.dirty))
	for _, r := range t.dirty {
		all = append(all, r)
	}
	t.mu.Unlock()
	for _, r := range all {
		fn(r)
	}
	fn(t.overflow)
}
