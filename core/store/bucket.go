package store

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/internal/flow"
)

// Bucket is the arithmetic of a token or leaky bucket (the generic cell
// rate algorithm) over one state a Store keeps in an atomic.Int64: the TAT,
// in nanoseconds of the Store's clock, the time at which the bucket will be
// full again (token bucket) or its next free slot begins (leaky bucket).
// It is the arithmetic of the Guard's own buckets, so that a Store that
// decides a limit locally (package redisstore's approximate mode) agrees
// with them. Costs are whole nanoseconds: Window/Limit rounded up, so that
// the bucket never admits more than its rate (a little less when Window is
// not a multiple of Limit), and n requests cost n times one. A Bucket is
// safe for concurrent use.
type Bucket struct{ g flow.GCRA }

// NewBucket returns the Bucket of lim, whose Algorithm is TokenBucket or
// LeakyBucket, or the error of lim.Validate.
func NewBucket(lim Limit) (*Bucket, error) {
	if lim.Algorithm != TokenBucket && lim.Algorithm != LeakyBucket {
		return nil, fmt.Errorf("store.NewBucket: algorithm must be token-bucket or leaky-bucket, got %q", lim.Algorithm)
	}
	if err := lim.Validate(); err != nil {
		return nil, fmt.Errorf("store.NewBucket: %w", err)
	}
	w := lim.Window
	if lim.Limit > 0 { // a Window of whole-nanosecond costs
		w = time.Duration((int64(w) + lim.Limit - 1) / lim.Limit * lim.Limit)
	}
	g := flow.GCRA{Limit: lim.Limit, Window: w, Burst: lim.Burst, MaxWait: lim.MaxWait, Queue: lim.Algorithm == LeakyBucket}
	return &Bucket{g: g.Prepare()}, nil
}

// Take admits or rejects n requests at now against the TAT in tat, which it
// advances by compare-and-swap when they are admitted. An admitted
// decision's Mark holds the end of its slot, for Undo.
func (b *Bucket) Take(tat *atomic.Int64, now, n int64) (d Decision) {
	var f flow.Decision
	b.g.AcquireTo(&f, tat, now, n)
	d.setFlow(&f)
	return d
}

// Undo gives the cost of an admitted decision d of Take for n requests back
// to tat; a rejected decision reserved nothing and is ignored. A token
// bucket subtracts the cost; a leaky bucket rewinds only when d's slot was
// the last one taken.
func (b *Bucket) Undo(tat *atomic.Int64, d Decision, n int64) {
	b.g.Undo(tat, d.flow(), n)
}
