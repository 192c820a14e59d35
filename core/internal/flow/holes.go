package flow

import "time"

// Holes are spans of leaky buckets' schedules that waiters gave back (their
// wait was cancelled, or another rule rejected their request) while later
// slots stayed taken: holes before the buckets' TATs. A bucket's next
// requests take its earliest hole that holds them within the tolerance
// instead of queueing after the TAT, so that nobody waits for requests
// that left. Each hole belongs to a bucket, its Owner: a flow rule's bucket
// keeps its own (Owner 0), a hotspot shard those of all its values. The
// list is unordered, bounded by the caller and guarded by the caller's
// lock; a hole never touches another of its bucket (they are merged).
type Holes struct {
	List []Hole
	seen int64 // the latest now Take saw
}

// Hole is the span [From, To) of bucket Owner's schedule.
type Hole struct {
	From, To Instant
	Owner    int32
}

// Take decides n requests at now of bucket o, whose TAT tat is at or after
// now, in o's earliest hole that holds them (forgetting what has passed of
// o's holes), when it lies within the tolerance: taken, d written
// (Remaining and Next the TAT's). Otherwise retry is when that hole comes
// within it, -1 when none holds them: the caller decides on the TAT and
// keeps the sooner hint. left is the number of o's holes after it.
func (h *Holes) Take(d *Decision, p *GCRA, o int32, tat Instant, now, n int64) (taken bool, retry time.Duration, left int) {
	h.seen = max(h.seen, now)
	var buf gcraCost
	c, den := p.costOf(n, &buf), p.denom()
	best, w := -1, 0
	for _, x := range h.List {
		if x.Owner == o {
			if !x.To.After(at(now)) {
				continue // passed
			}
			if x.From.NS < now {
				x.From = at(now) // what has passed of it cannot be used
			}
			left++
			if c.fits && !x.From.Plus(c.cost, den).After(x.To) && (best < 0 || h.List[best].From.After(x.From)) {
				best = w
			}
		}
		h.List[w] = x
		w++
	}
	clear(h.List[w:])
	h.List = h.List[:w]
	if best < 0 {
		return false, -1, left
	}
	x := &h.List[best]
	end := x.From.Plus(c.cost, den)
	if over := end.Minus(at(now), den).Minus(c.tol, den); over.After(Instant{}) {
		return false, time.Duration(over.Ceil()), left
	}
	*d = Decision{
		OK: true, Wait: time.Duration(x.From.Ceil() - now), Limit: p.Limit,
		Remaining: p.remaining(now, tat, c.capacity), mark: end.NS, markFrac: end.Frac,
	}
	if d.Remaining == 0 {
		d.Next = p.Next(now, tat) // the TAT's, as Remaining; a hole may come sooner
	}
	if x.From = end; !x.To.After(end) {
		h.drop(best)
		left--
	}
	return true, 0, left
}

// Free gives the slot [from, to) of bucket o, whose TAT is *tat, back: the
// TAT moves back to from when the slot was the last one taken, and on over
// o's hole that then ends at it (only one can: holes never touch); else the slot becomes a hole, merged with
// o's holes it touches. When limit holes are live, those that passed by
// the latest Take are forgotten (gone, unless nil, is called with the
// owner of each), then the slot if still no room is made: later requests
// wait for it as if it were taken. It returns the number of o's holes.
func (h *Holes) Free(o int32, tat *Instant, from, to Instant, limit int, gone func(o int32)) (left int) {
	if *tat == to {
		*tat = from
		for j, x := range h.List {
			if x.Owner == o && x.To == from {
				*tat = x.From
				h.drop(j)
				break
			}
		}
		return h.count(o)
	}
	for j := 0; j < len(h.List); j++ {
		switch x := h.List[j]; {
		case x.Owner != o:
			continue
		case x.To == from:
			from = x.From
		case x.From == to:
			to = x.To
		default:
			continue
		}
		h.drop(j)
		j--
	}
	if len(h.List) >= limit {
		h.forget(gone, func(x *Hole) bool { return !x.To.After(at(h.seen)) })
	}
	if len(h.List) < limit {
		h.List = append(h.List, Hole{from, to, o})
	}
	return h.count(o)
}

// Forget forgets the holes of bucket o.
func (h *Holes) Forget(o int32) { h.forget(nil, func(x *Hole) bool { return x.Owner == o }) }

// Round shrinks every hole to whole nanoseconds (its start rounded up, its
// end down), forgetting those left empty as forget does: their fractions
// were in the units of another limit.
func (h *Holes) Round(gone func(o int32)) {
	h.forget(gone, func(x *Hole) bool {
		x.From, x.To = at(x.From.Ceil()), at(x.To.NS)
		return !x.To.After(x.From)
	})
}

// forget forgets the holes drop is true of, calling gone, unless nil, with
// the owner of each.
func (h *Holes) forget(gone func(o int32), drop func(x *Hole) bool) {
	for j := 0; j < len(h.List); j++ {
		if x := &h.List[j]; drop(x) {
			if gone != nil {
				gone(x.Owner)
			}
			h.drop(j)
			j--
		}
	}
}

func (h *Holes) drop(j int) {
	last := len(h.List) - 1
	h.List[j] = h.List[last]
	h.List = h.List[:last]
}

func (h *Holes) count(o int32) (n int) {
	for _, x := range h.List {
		if x.Owner == o {
			n++
		}
	}
	return n
}
