package stripe

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
)

// Count returns the number of stripes a striped counter should have: the
// CPUs Go runs on, rounded up to a power of two (so that an index from a
// Picker can be masked), at most 16.
func Count() int {
	n := 1
	for n < runtime.GOMAXPROCS(0) && n < 16 {
		n *= 2
	}
	return n
}

// Picker picks the stripe of the calling goroutine by the processor (P) it
// runs on: a sync.Pool keeps one token per P, so the goroutines of one P
// get its token back, and a token is made with the next index. Tokens move
// between processors now and then (a goroutine moved to another processor
// while it held one, a garbage collection dropped one), so two processors
// may come to hold tokens of the same stripe. Each stripe therefore
// remembers the token that picked it last: a token that finds another one
// there several picks in a row moves to a stripe at random, until the
// processors picking at once have stripes of their own. A pick costs about
// an uncontended atomic add, also when every CPU picks at once. The zero
// Picker is not usable: make one with NewPicker.
type Picker struct {
	tokens sync.Pool
	next   atomic.Uint32
	n      uint32        // stripes: Count()
	last   [16]lastToken // by stripe: the token that picked it last
}

// lastToken is the token that picked a stripe last, on a cache line of its
// own: it is read on every pick, and written when the stripe's token
// changes.
type lastToken struct {
	t atomic.Pointer[token]
	_ [56]byte
}

// token holds a processor's stripe. Only the goroutine holding it (between
// getting it from the pool and putting it back) reads or writes it.
type token struct {
	i      uint32 // the stripe, < Picker.n
	misses uint32 // picks in a row that found another token last on i
}

// movesAfter is the number of picks in a row that must find another token
// last on a token's stripe before it moves to another stripe.
const movesAfter = 4

// NewPicker returns a Picker whose first token has index 0.
func NewPicker() *Picker {
	p := &Picker{n: uint32(Count())}
	p.tokens.New = func() any { return &token{i: (p.next.Add(1) - 1) % p.n} }
	return p
}

// Pick returns the stripe of the calling goroutine's processor, less than
// Count(): 0 without asking the pool when that is 1 (GOMAXPROCS 1).
func (p *Picker) Pick() uint32 {
	if p.n == 1 {
		return 0
	}
	return p.pick()
}

func (p *Picker) pick() uint32 {
	t := p.tokens.Get().(*token)
	i := p.pickWith(t)
	p.tokens.Put(t)
	return i
}

// pickWith returns the stripe of t, after moving it if other tokens keep
// picking it too.
func (p *Picker) pickWith(t *token) uint32 {
	if p.last[t.i].t.Load() != t {
		p.miss(t)
	} else if t.misses != 0 {
		t.misses = 0
	}
	return t.i
}

// miss records that t found another token last on its stripe, and moves t
// to a stripe at random when that happened movesAfter times in a row.
func (p *Picker) miss(t *token) {
	if t.misses++; t.misses >= movesAfter {
		t.i, t.misses = rand.Uint32N(p.n), 0
	}
	p.last[t.i].t.Store(t)
}

// Hold takes the calling processor's token until the returned function is
// called, so that the next Pick on the processor makes a new token, with
// the next index. Tests use it to spread requests over stripes.
func (p *Picker) Hold() (release func()) {
	t := p.tokens.Get()
	return func() { p.tokens.Put(t) }
}

// Of returns the stripe of cpu (any number, such as Pick's) among n
// stripes, n a power of two.
func Of(cpu uint32, n int) int { return int(cpu & uint32(n-1)) }

// Leases of a shared quota: a CPU takes at most MaxLease units at once, at
// most 1/(leaseShare·stripes) of what is left, and none when that is less
// than minLease, so that the leases out hold back at most about
// 1/leaseShare of the quota left from the other CPUs, and a quota with
// little left is decided unit by unit on the shared count.
const (
	MaxLease   = 64
	leaseShare = 256
	minLease   = 8
)

// LeaseSize returns how much of left, the quota not taken, a CPU may lease
// among stripes stripes: 0 when leasing should stop.
func LeaseSize(left int64, stripes int) int64 {
	if c := min(MaxLease, left/(leaseShare*int64(stripes))); c >= minLease {
		return c
	}
	return 0
}

// MinLeased returns the least quota left from which LeaseSize leases
// among stripes stripes.
func MinLeased(stripes int) int64 { return minLease * leaseShare * int64(stripes) }
