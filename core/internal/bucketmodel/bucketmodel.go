// Package bucketmodel is a token or leaky bucket in exact rational
// arithmetic (math/big): the definition flow's and hotspot's buckets must
// follow to the nanosecond, for their tests.
package bucketmodel

import (
	"math"
	"math/big"
	"time"
)

// Bucket is a token bucket (Window, Burst) or leaky bucket (Leaky,
// MaxWait) of Limit requests per Window, full until its first request.
type Bucket struct {
	Limit   int64
	Window  time.Duration
	Burst   int64
	MaxWait time.Duration
	Leaky   bool

	tat *big.Rat // nil: full
}

// Acquire decides n requests at now as GCRA defines it: admitted when the
// TAT after them is at most the tolerance ahead of now (the capacity, or
// MaxWait plus their cost), with the wait of a leaky bucket's requests and
// the retry hint of a rejection rounded up to a nanosecond.
func (b *Bucket) Acquire(now, n int64) (ok bool, wait, retry time.Duration) {
	if n > b.Limit+b.Burst {
		return false, 0, b.Window
	}
	cost, tol := b.per(n), b.tol(n)
	start := b.TAT()
	if start.Cmp(rat(now)) < 0 {
		start = rat(now)
	}
	next := new(big.Rat).Add(start, cost)
	over := new(big.Rat).Sub(new(big.Rat).Sub(next, rat(now)), tol)
	if over.Sign() > 0 {
		return false, 0, time.Duration(ceil(over))
	}
	b.tat = next
	if b.Leaky {
		wait = time.Duration(ceil(new(big.Rat).Sub(start, rat(now))))
	}
	return true, wait, 0
}

// Remaining returns how many requests of one fit at now, rounded down.
func (b *Bucket) Remaining(now int64) int64 {
	capacity := b.tol(1)
	ahead := new(big.Rat).Sub(b.TAT(), rat(now))
	if ahead.Sign() < 0 {
		ahead = rat(0)
	}
	left := new(big.Rat).Sub(capacity, ahead)
	if left.Sign() <= 0 {
		return 0
	}
	x := new(big.Rat).Quo(left, b.per(1))
	return new(big.Int).Div(x.Num(), x.Denom()).Int64() // x > 0: Div rounds down
}

// TAT returns the bucket's TAT: when it is full again (token bucket) or its
// next free slot begins (leaky bucket).
func (b *Bucket) TAT() *big.Rat {
	if b.tat == nil {
		return rat(math.MinInt64)
	}
	return b.tat
}

// tol returns the tolerance of n requests (see Acquire).
func (b *Bucket) tol(n int64) *big.Rat {
	if b.Leaky {
		return new(big.Rat).Add(rat(int64(b.MaxWait)), b.per(n))
	}
	return new(big.Rat).Add(rat(int64(b.Window)), b.per(b.Burst))
}

// per returns x*Window/Limit.
func (b *Bucket) per(x int64) *big.Rat {
	return new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(x), big.NewInt(int64(b.Window))), big.NewInt(b.Limit))
}

func rat(x int64) *big.Rat { return new(big.Rat).SetInt64(x) }

// ceil returns x rounded up to an integer.
func ceil(x *big.Rat) int64 {
	q, m := new(big.Int).DivMod(x.Num(), x.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}
