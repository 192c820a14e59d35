package history

import (
	"fmt"
	"math"
)

// Ring keeps the newest samples of a fixed number of columns, one sample
// per step (an integer: the Guard numbers seconds), up to the length given
// to New. Values are float32, 4 bytes each: counts up to 2^24 are exact,
// larger ones are rounded to 24 significant bits, and NaN marks a value not
// known. A Ring is not safe for concurrent use.
type Ring struct {
	cols int
	vals []float32 // the sample of step s at vals[(s%length)*cols:][:cols]
	last int64     // the step of the newest sample
	held int64     // samples held, at most the length
}

// New returns an empty Ring of length samples of cols columns.
func New(length, cols int) (*Ring, error) {
	if length < 1 || cols < 1 {
		return nil, fmt.Errorf("history.New(%d, %d): length and columns must be >= 1", length, cols)
	}
	return &Ring{cols: cols, vals: make([]float32, length*cols)}, nil
}

// Len returns the number of samples the Ring can hold.
func (r *Ring) Len() int { return len(r.vals) / r.cols }

// Held returns the number of samples held, and the step of the newest.
func (r *Ring) Held() (n int, last int64) { return int(r.held), r.last }

// Put records vals, one per column, as the sample of step, which must be
// later than the newest: the steps skipped in between get NaN. It panics
// when len(vals) is not the number of columns or step is not later.
func (r *Ring) Put(step int64, vals []float32) {
	if len(vals) != r.cols {
		panic(fmt.Sprintf("history: Put of %d values in a ring of %d columns", len(vals), r.cols))
	}
	if r.held > 0 && step <= r.last {
		panic(fmt.Sprintf("history: Put of step %d after step %d", step, r.last))
	}
	n := int64(r.Len())
	if r.held > 0 {
		nan := float32(math.NaN())
		for s := max(r.last+1, step-n+1); s < step; s++ {
			slot := r.slot(s)
			for i := range slot {
				slot[i] = nan
			}
		}
		r.held = min(r.held+step-r.last, n)
	} else {
		r.held = 1
	}
	copy(r.slot(step), vals)
	r.last = step
}

func (r *Ring) slot(step int64) []float32 {
	n := int64(r.Len())
	i := int((step%n + n) % n)
	return r.vals[i*r.cols : (i+1)*r.cols]
}

// Column appends to dst the values of column col of the samples held from
// step from (or the oldest held, if later) to the newest, and returns it.
func (r *Ring) Column(dst []float64, col int, from int64) []float64 {
	if r.held == 0 {
		return dst
	}
	for s := max(from, r.last-r.held+1); s <= r.last; s++ {
		dst = append(dst, float64(r.slot(s)[col]))
	}
	return dst
}

// Slab makes Rings of one shape in blocks of memory shared by several:
// fewer allocations, and less memory lost to the rounding up of each (a
// ring of 600 samples of 6 columns, 14400 bytes, takes 16384 alone, and
// about 14850 in a block of 16). A block's memory stays as long as one of
// its rings is used. A Slab is not safe for concurrent use.
type Slab struct {
	length, cols int
	block        int       // rings in the last block: 1, 2, 4, ... maxBlock
	free         []float32 // of the last block, not yet handed out
}

const maxBlock = 16 // bounds the rings of a block of a Slab

// NewSlab returns a Slab of rings of length samples of cols columns.
func NewSlab(length, cols int) (*Slab, error) {
	if length < 1 || cols < 1 {
		return nil, fmt.Errorf("history.NewSlab(%d, %d): length and columns must be >= 1", length, cols)
	}
	return &Slab{length: length, cols: cols}, nil
}

// Ring returns a new empty Ring.
func (s *Slab) Ring() *Ring {
	n := s.length * s.cols
	if len(s.free) < n {
		s.block = min(max(1, 2*s.block), maxBlock)
		s.free = make([]float32, n*s.block)
	}
	r := &Ring{cols: s.cols, vals: s.free[:n:n]}
	s.free = s.free[n:]
	return r
}
