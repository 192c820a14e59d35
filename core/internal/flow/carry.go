package flow

import (
	"math"
	"math/big"

	"github.com/sluicekit/sluice/core/internal/window"
)

// Reload is New for the rule of prev reloaded at now, a token or leaky
// bucket keeping the requests it owes at now (see New).
func Reload(cfg Config, prev Limiter, now int64) (Limiter, error) {
	l, err := New(cfg, prev)
	if err != nil {
		return nil, err
	}
	if g, ok := l.(*gcra); ok {
		if p, ok := prev.(*gcra); ok && p.st == g.st {
			g.keepOwed(p.cfg, now)
		}
	}
	return l, nil
}

// replayArray adds the pass counts of old's window to arr, a new array of
// another shape, each old bucket's count at the last nanosecond of that
// bucket, oldest first: a count lands in the new bucket holding the end of
// its old one (the later one when the old bucket straddles new bucket
// edges), so it leaves the new window no earlier than its requests would
// have; counts older than the new window drop out as arr moves on. arr's
// time may then run ahead of the clock by less than an old bucket, which
// only makes its window end later (it counts an earlier reading in its
// newest bucket).
func replayArray(old, arr *window.LeapArray) {
	if newest := old.Newest(); newest != math.MinInt64 {
		bl := int64(old.BucketLen())
		old.Each(newest, func(b *window.Bucket) {
			if c := b.Get(window.Pass); c > 0 {
				arr.Add(b.Start()+bl-1, window.Pass, c)
			}
		})
	}
}

// replayPeriods returns periods of length newLen holding the counts of
// old's current period and the one before, of length oldLen, as
// replayArray does: each count goes to the new period holding the last
// nanosecond of its old one. Two counts that land in one period add up;
// the previous count is kept as the new period's prev when it lands in the
// period just before.
func replayPeriods(old *periods, oldLen, newLen int64) *periods {
	ps := &periods{}
	c := old.cur.Load()
	if c == nil {
		return ps
	}
	np := &period{start: window.Floor(c.start+oldLen-1, newLen)}
	np.count.Store(max(c.count.Load(), 0))
	switch before := window.Floor(c.start-1, newLen); {
	case c.prev <= 0:
	case before == np.start:
		np.count.Add(c.prev)
	case before == np.start-newLen:
		np.prev = c.prev
	}
	ps.cur.Store(np)
	return ps
}

// keepOwed makes the TAT of g's state, which g shares with the bucket of
// config old, owe at now the requests it owed under old (GCRA.Owing). A
// leaky bucket's holes are forgotten (their slots are kept as taken).
func (g *gcra) keepOwed(old Config, now int64) {
	cfg := g.cfg
	if old.Limit <= 0 || cfg.Limit <= 0 || old.Limit == cfg.Limit && old.Window == cfg.Window {
		return
	}
	s, den := g.st, g.full.denom()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.holes.List) > 0 {
		s.holes.Forget(0)
		s.nholes.Store(0)
	}
	prev := GCRA{Limit: old.Limit, Window: old.Window}
	for {
		ns, frac, fden := s.tat.Load(), s.frac, max(s.den, 1)
		if ns <= now {
			return // full: nothing owed
		}
		next := g.full.Owing(Instant{ns - now, frac}, fden, &prev)
		if !g.locked {
			next = Instant{NS: next.Ceil()}
		}
		if s.tat.CompareAndSwap(ns, now+next.NS) {
			s.frac, s.den = next.Frac, den
			return
		}
	}
}

// Owing returns the debt (TAT-now) of a bucket of p that owes the requests
// a bucket of prev owes with debt d, d's fraction in units of 1/fden ns:
// prev's cost of them becomes p's, rounded up to p's fraction; a token
// bucket owes at most its capacity. Only Limit and Window of prev are read.
func (p *GCRA) Owing(d Instant, fden int64, prev *GCRA) Instant {
	next := owed(d, fden, prev.Limit, int64(prev.Window), p.Limit, int64(p.Window), p.denom())
	if c := p.Capacity(); !p.Queue && next.After(c) {
		next = c
	}
	return next
}

// owed returns the debt d, in units of 1/fden ns, of a bucket of oldLimit
// per oldWindow, as the debt of a bucket of newLimit per newWindow owing as
// many requests, rounded up to a unit of 1/den ns.
func owed(d Instant, fden, oldLimit, oldWindow, newLimit, newWindow, den int64) Instant {
	b := func(x int64) *big.Int { return big.NewInt(x) }
	num := new(big.Int).Mul(b(d.NS), b(fden))
	num.Add(num, b(d.Frac))
	num.Mul(num, b(oldLimit))
	num.Mul(num, b(newWindow))
	num.Mul(num, b(den))
	q := new(big.Int).Mul(b(fden), b(oldWindow))
	q.Mul(q, b(newLimit))
	units, r := new(big.Int).QuoRem(num, q, new(big.Int))
	if r.Sign() > 0 {
		units.Add(units, b(1))
	}
	ns, f := new(big.Int).QuoRem(units, b(den), new(big.Int))
	if !ns.IsInt64() || ns.Int64() > int64(MaxSpan) {
		return Instant{NS: int64(MaxSpan)}
	}
	return Instant{ns.Int64(), f.Int64()}
}
