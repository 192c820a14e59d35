package stripe

import (
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
// runs on: a sync.Pool keeps one token per P, each with an index taken from
// a counter when it was made, so the goroutines of one P get its token
// back, and tokens made together have consecutive indexes. A garbage
// collection may drop tokens: new ones take the next indexes. Getting a
// token and putting it back costs about as much as an uncontended atomic
// add, and no more when every CPU picks at once. The zero Picker is not
// usable: make one with NewPicker.
type Picker struct {
	tokens sync.Pool
	next   atomic.Uint32
}

type token struct{ i uint32 }

// NewPicker returns a Picker whose first token has index 0.
func NewPicker() *Picker {
	p := &Picker{}
	p.tokens.New = func() any { return &token{i: p.next.Add(1) - 1} }
	return p
}

// Pick returns the index of the calling goroutine's processor: mask it
// with Count()-1 (or any power of two less one).
func (p *Picker) Pick() uint32 {
	t := p.tokens.Get().(*token)
	i := t.i
	p.tokens.Put(t)
	return i
}

// Hold takes the calling processor's token until the returned function is
// called, so that the next Pick on the processor makes a new token, with
// the next index. Tests use it to spread requests over stripes.
func (p *Picker) Hold() (release func()) {
	t := p.tokens.Get()
	return func() { p.tokens.Put(t) }
}
