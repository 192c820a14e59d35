package hotspot

import "github.com/sluicekit/sluice/core/internal/flow"

// maxGaps bounds the gaps a shard remembers: 256 of 40 bytes, allocated as
// they are given back. A gap given back when the shard's are all live is
// forgotten, which only makes later requests wait longer.
const maxGaps = 256

// gap is a span of a leaky bucket's schedule that a waiter gave back (its
// wait was cancelled, or another rule rejected its request) while later
// slots of its value were taken: a hole before the value's TAT. The next
// requests of the value take the earliest gap that holds them instead of
// queueing after the TAT, so that nobody waits for requests that left.
// This is the flow rules' design (flow's holes), with the gaps of all the
// values of a shard in one bounded list.
type gap struct {
	from, to flow.Instant
	rec      int32 // the record of the value
}

// Gaps of a shard, in s.gaps, unordered; record.gaps counts a record's.
// They are guarded by the shard's mutex, and dropped with their record's
// life (evicted, its debt is its TAT: its gaps are forgotten) or, all at
// once, when its TAT is behind now (they have passed).

// decideGaps is flow.GCRA.DecideAt for record i of shard s, whose TAT *t
// is ahead of now and which has gaps: the requests take the earliest gap
// that holds them within the tolerance, else they queue after the TAT as
// usual, and a rejection's retry hint is when that earliest gap comes
// within the tolerance, if it is sooner. What has passed of the record's
// gaps is forgotten on the way (a gap too short now may grow when its
// neighbour is given back).
func (s *shard) decideGaps(d *Decision, b *flow.GCRA, i int32, t *flow.Instant, now, n int64) {
	s.gapNow = max(s.gapNow, now)
	cost := b.Cost(n)
	r := &s.recs[i]
	best, w := -1, 0
	for _, g := range s.gaps {
		if g.rec == i {
			if !g.to.After(flow.Instant{NS: now}) {
				r.gaps-- // passed
				continue
			}
			if g.from.NS < now {
				g.from = flow.Instant{NS: now} // what has passed of it cannot be used
			}
			if !g.from.Plus(cost, b.Limit).After(g.to) && (best < 0 || s.gaps[best].from.After(g.from)) {
				best = w
			}
		}
		s.gaps[w] = g
		w++
	}
	clear(s.gaps[w:])
	s.gaps = s.gaps[:w]
	if best < 0 {
		*t = b.DecideAt(&d.Decision, *t, now, n)
		return
	}
	// The gap decides as a TAT at its start would, but for Remaining,
	// which is the TAT's.
	g := &s.gaps[best]
	end := b.DecideAt(&d.Decision, g.from, now, n)
	if !d.OK {
		// Too far (or more than the bucket holds); the TAT, later, is too.
		// The gap is the earlier retry.
		retry := d.RetryAfter
		*t = b.DecideAt(&d.Decision, *t, now, n)
		d.RetryAfter = min(d.RetryAfter, retry)
		return
	}
	d.Remaining, d.Next = b.Remaining(now, *t), 0
	if d.Remaining == 0 {
		d.Next = b.Next(now, *t) // the TAT's, as Remaining; a gap may come sooner
	}
	if g.from = end; !g.to.After(end) {
		s.dropGap(best)
	}
}

// freeSlot gives the slot [from, to) of record i's leaky bucket, whose TAT
// is *t, back: the TAT moves back to from when the slot was the last one
// taken, and on over the record's gaps that then end at the TAT; else the
// slot becomes a gap, merged with the record's gaps it touches.
func (s *shard) freeSlot(i int32, t *flow.Instant, from, to flow.Instant) {
	if *t == to {
		*t = from
		for j := 0; j < len(s.gaps); j++ {
			if g := s.gaps[j]; g.rec == i && g.to == *t {
				*t = g.from
				s.dropGap(j)
				j = -1 // the gap before it may now end at the TAT
			}
		}
		return
	}
	for j := 0; j < len(s.gaps); j++ {
		switch g := s.gaps[j]; {
		case g.rec != i:
			continue
		case g.to == from:
			from = g.from
		case g.from == to:
			to = g.to
		default:
			continue
		}
		s.dropGap(j)
		j--
	}
	if len(s.gaps) == maxGaps {
		s.dropPassedGaps()
		if len(s.gaps) == maxGaps {
			return // forgotten: later requests wait for it as if it were taken
		}
	}
	s.gaps = append(s.gaps, gap{from: from, to: to, rec: i})
	s.recs[i].gaps++
}

// dropGap forgets gap j.
func (s *shard) dropGap(j int) {
	s.recs[s.gaps[j].rec].gaps--
	last := len(s.gaps) - 1
	s.gaps[j] = s.gaps[last]
	s.gaps = s.gaps[:last]
}

// dropGaps forgets the gaps of record i.
func (s *shard) dropGaps(i int32) {
	for j := 0; j < len(s.gaps) && s.recs[i].gaps > 0; j++ {
		if s.gaps[j].rec == i {
			s.dropGap(j)
			j--
		}
	}
}

// dropPassedGaps forgets the gaps that ended by the latest time a decision
// with gaps saw.
func (s *shard) dropPassedGaps() {
	for j := 0; j < len(s.gaps); j++ {
		if !s.gaps[j].to.After(flow.Instant{NS: s.gapNow}) {
			s.dropGap(j)
			j--
		}
	}
}
