package hotspot

import (
	"maps"
	"math"
	"slices"

	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/rulefields"
)

// Limiter limits each value of a request parameter separately, tracking at
// most Config.MaxKeys values in its table. It is safe for concurrent use.
type Limiter struct {
	cfg    Config                // defaults applied; Overrides is the Limiter's own copy
	bucket *flow.GCRA            // the buckets' arithmetic for Config.Limit; nil for Concurrency
	over   map[string]*flow.GCRA // the same for each override
	tab    *table
	// keep is how far ahead of the eviction a bucket's TAT must be for its
	// debt to be heavy (see debts): half the capacity of the smallest
	// bucket of Limit and Overrides.
	keep int64
	// epoch is the table's epoch the Limiter's fractions are in; when the
	// table's is another, a later Limiter changed the limits (see round).
	epoch uint64
}

// Decision is the outcome of Limiter.Acquire: the flow.Decision for the
// value (OK, Wait, Limit, Remaining, RetryAfter) and a handle on the value's
// record for Undo and Release.
type Decision struct {
	flow.Decision

	lim   *Limiter // that made the decision; nil when no record was used
	shard int32
	rec   int32
	gen   uint64 // the record's life at the decision
	k     id     // the value's, for a bucket's Undo after its record is reused
}

// New returns a Limiter for cfg, or an error listing every problem of cfg
// (Config.Validate, then Config.Bounds), one flow.FieldError each. prev,
// the Limiter of the same rule before a reload, passes on its table when
// it has the same Algorithm and MaxKeys: buckets, debts and in-flight
// counts carry over, and Decisions of either release into it. Reload,
// given the time of the reload, carries more. A value keeps the requests
// it owes when its cost per request (Window/its limit) changes: its debt
// TAT-now is converted, rounded up, and not cut to the new capacity, so a
// spent value stays spent after a longer window, waits a cut rate out at
// the new rate, gets only the difference of a raised limit and nothing of
// a reload reverted; evicted values' debts, whose values are unknown,
// convert by the limit whose cost grows most. A bucket
// table of another MaxKeys or algorithm (token and leaky buckets are the
// same TAT arithmetic) takes the old one's seed, its debts (copied to
// the shards of their values, merged cell by cell into a table of fewer
// shards; those of a shard whose cell count differs from the first's, by
// one when MaxKeys is not a multiple of the shards, are left out), then
// its values whose buckets are not full, converted, in their LRU segment;
// a value a smaller table cannot hold leaves its debt as an eviction does.
// Nothing of the old table is kept: memory stays bounded by the new
// MaxKeys. Carrying 1 000 000 values took 0.06-0.3 s (the new table's
// 137 MB allocated), converting them in place 0.06-0.17 s, on a busy 2-CPU
// VM (go test -run '^$' -bench ReloadCarry1M -benchtime 3x -benchmem
// ./core/internal/hotspot), each shard locked only while its records are
// read. Gaps are forgotten (their slots kept as taken). A Concurrency table
// of another MaxKeys starts empty: Decisions release into the table they
// were made in. Requests the old Limiter admits after the carry, having
// read the rules before, are not carried.
func New(cfg Config, prev *Limiter) (*Limiter, error) {
	cfg = cfg.WithDefaults()
	errs := cfg.Validate()
	if errs == nil {
		errs = cfg.Bounds()
	}
	if err := rulefields.Join(errs); err != nil {
		return nil, err
	}
	cfg.Overrides = maps.Clone(cfg.Overrides)
	l := &Limiter{cfg: cfg}
	buckets := cfg.Algorithm != Concurrency
	if buckets {
		l.bucket = newBucket(&cfg, cfg.Limit)
		for v, lim := range cfg.Overrides {
			if l.over == nil {
				l.over = make(map[string]*flow.GCRA, len(cfg.Overrides))
			}
			l.over[v] = newBucket(&cfg, lim)
		}
		l.keep = math.MaxInt64
		for _, b := range append(slices.Collect(maps.Values(l.over)), l.bucket) {
			if b.Limit > 0 {
				l.keep = min(l.keep, b.Capacity().NS/2)
			}
		}
	}
	if prev == nil || prev.cfg.Algorithm != cfg.Algorithm || prev.cfg.MaxKeys != cfg.MaxKeys {
		l.tab = newTable(cfg.MaxKeys, buckets)
		return l, nil
	}
	l.tab = prev.tab
	l.epoch = prev.epoch
	if buckets && (prev.epoch != l.tab.epoch.Load() || prev.cfg.Limit != cfg.Limit || !maps.Equal(prev.cfg.Overrides, cfg.Overrides)) {
		l.epoch = l.tab.round()
	}
	return l, nil
}

// Config returns the configuration the Limiter was made with, defaults
// applied.
func (l *Limiter) Config() Config {
	c := l.cfg
	c.Overrides = maps.Clone(c.Overrides)
	return c
}

// Len returns the number of values the Limiter tracks, at most MaxKeys.
func (l *Limiter) Len() int { return l.tab.len() }

// newBucket returns the arithmetic of the token or leaky buckets of limit
// lim under cfg: a prepared flow.GCRA, which decides on each value's TAT
// with its fraction (DecideAt). One of limit 0 only tells that its values
// are blocked.
func newBucket(cfg *Config, lim int64) *flow.GCRA {
	g := flow.GCRA{Limit: lim, Window: cfg.Window, Burst: cfg.Burst, MaxWait: cfg.MaxWait, Queue: cfg.Algorithm == LeakyBucket}.Prepare()
	return &g
}

// bucketOf returns the buckets' arithmetic of value: its override's, else
// that of Config.Limit.
func (l *Limiter) bucketOf(value string) *flow.GCRA {
	if len(l.over) > 0 {
		if b, ok := l.over[value]; ok {
			return b
		}
	}
	return l.bucket
}

// Acquire admits or rejects n requests (n < 1 counts as 1) of value at now,
// in nanoseconds of the Guard's clock (see the package doc: tracking,
// eviction, debts). A value whose limit is 0 is rejected without being
// tracked. A Concurrency rejection has RetryAfter 0. A LeakyBucket decision
// may be admitted with a Wait: the caller waits that long before
// proceeding, or gives the slot back with Undo.
func (l *Limiter) Acquire(now int64, value string, n int64) Decision {
	var d Decision
	l.AcquireTo(&d, now, value, n, true)
	return d
}

// AcquireTo is Acquire writing the decision to d, every field of it,
// instead of returning it: a Decision is too large to be returned in
// registers, and a caller that keeps decisions (to give them back later)
// saves copying it. quota is flow.GCRA.DecideAt's.
func (l *Limiter) AcquireTo(d *Decision, now int64, value string, n int64, quota bool) {
	n = max(n, 1)
	if l.cfg.Algorithm == Concurrency {
		l.enter(d, now, value, n)
		return
	}
	b := l.bucketOf(value)
	if b.Limit == 0 {
		*d = Decision{Decision: flow.Decision{RetryAfter: l.cfg.Window}}
		return
	}
	k := l.tab.idOf(value)
	si, s := l.tab.shard(k)
	s.mu.Lock()
	i := s.frontRec
	st := &s.frontState
	if i >= 0 && s.front == k {
		s.touch(i) // the front: the record is only read
	} else {
		// A new record's bucket is full: a TAT of 0 is as full as a TAT
		// of now for any now >= 0.
		if i = s.find(k); i >= 0 {
			s.touch(i)
		} else {
			i = s.insert(k, min(now, 0), now, l.tab.debtsOf(si), l.keep)
		}
		// A value decided twice in a row becomes the front (see shard).
		st = &s.recs[i].state
		if tag := k.tag(); s.lastTag != tag {
			s.lastTag = tag
		} else {
			s.promote(i)
			st = &s.frontState
		}
	}
	switch r := &s.recs[i]; {
	case l.epoch != l.tab.epoch.Load():
		l.decideStale(d, b, s, i, st, now, n)
	case r.gaps == 0:
		*st = b.DecideAt(&d.Decision, *st, now, n, quota)
	case st.NS >= now:
		s.decideGaps(d, b, i, st, now, n)
	default:
		s.dropGaps(i) // the TAT is behind now: they have passed
		*st = b.DecideAt(&d.Decision, *st, now, n, quota)
	}
	d.lim, d.shard, d.rec, d.gen, d.k = l, si, i, s.recs[i].gen, k
	s.mu.Unlock()
}

// decideStale decides as flow.GCRA.DecideAt for a Limiter whose limits a later
// one changed: the TAT, whose fraction may be in another limit's units, is
// rounded up to a nanosecond before and after, which errs on the side of
// the limit by less than a nanosecond. Such a Limiter still decides the
// requests that read the rules before a reload.
func (l *Limiter) decideStale(d *Decision, b *flow.GCRA, s *shard, i int32, st *flow.Instant, now, n int64) {
	*st = flow.Instant{NS: st.Ceil()}
	if s.recs[i].gaps > 0 {
		s.dropGaps(i)
	}
	*st = b.DecideAt(&d.Decision, *st, now, n, true)
	*st = flow.Instant{NS: st.Ceil()}
}

// enter is AcquireTo for Concurrency: reserve, then check, under the
// shard's lock, which orders every change of the count: it is never above
// the limit.
func (l *Limiter) enter(d *Decision, now int64, value string, n int64) {
	lim, ok := l.cfg.Overrides[value]
	if !ok {
		lim = l.cfg.Limit
	}
	if lim == 0 {
		*d = Decision{}
		return
	}
	k := l.tab.idOf(value)
	si, s := l.tab.shard(k)
	s.mu.Lock()
	i := s.find(k)
	if i >= 0 {
		s.touch(i)
	} else if i = s.insert(k, 0, now, nil, 0); i < 0 {
		s.mu.Unlock()
		*d = Decision{Decision: flow.Decision{Limit: lim}}
		return
	}
	r := &s.recs[i]
	if n <= lim-r.state.NS { // not NS+n <= lim: a count near 2^63 would wrap
		v := r.state.NS + n
		r.state.NS = v
		s.pin(i)
		*d = Decision{Decision: flow.Decision{OK: true, Limit: lim, Remaining: lim - v}, lim: l, shard: si, rec: i, gen: r.gen}
	} else {
		*d = Decision{Decision: flow.Decision{Limit: lim, Remaining: max(lim-r.state.NS, 0)}}
	}
	s.mu.Unlock()
}

// Undo gives back the n requests of an admitted decision d that were not
// used (another rule rejected the request, or its wait was cancelled), on
// the table d was made in. A rejected decision is ignored. A token bucket
// gets its tokens back, a leaky bucket its slot (as a gap: see the package
// doc), even after an eviction, where the value's state went; Concurrency
// releases.
func (l *Limiter) Undo(d Decision, n int64) {
	p := d.lim
	if !d.OK || p == nil {
		return
	}
	if p.cfg.Algorithm == Concurrency {
		p.Release(d.Hold(), n)
		return
	}
	n = max(n, 1)
	s := &p.tab.shards[d.shard]
	s.mu.Lock()
	if i := d.rec; s.recs[i].gen == d.gen {
		p.refund(s, i, d, n)
	} else if i = s.find(d.k); i >= 0 {
		p.refund(s, i, d, n) // tracked again: its state came from its debt
	} else if dt := p.tab.debtsOf(d.shard); dt.cells != nil {
		p.refundDebt(dt, d, n)
	}
	s.mu.Unlock()
}

// Hold is what Release needs of an admitted Concurrency decision: its
// record and the record's life. The zero Hold, of a rejected decision or
// of another algorithm's, releases nothing.
type Hold struct {
	gen        uint64 // the record's life at the decision; 0 for none
	shard, rec int32
}

// Hold returns the handle Release takes to end d, kept by the caller
// until the request ends: smaller than d.
func (d *Decision) Hold() Hold {
	if !d.OK || d.lim == nil || d.lim.cfg.Algorithm != Concurrency {
		return Hold{}
	}
	return Hold{gen: d.gen, shard: d.shard, rec: d.rec}
}

// Release ends the n requests of an admitted Concurrency decision, given
// by its Hold (called by Exit), on the Limiter that made it or a later one
// sharing its table; it does nothing for a zero Hold. Each admitted
// decision must be released once: the count of a value never goes below 0,
// and a record reused for another value is never touched, but a second
// Release of the same decision while other requests of the value are in
// flight takes one of theirs.
func (l *Limiter) Release(h Hold, n int64) {
	if h.gen == 0 {
		return
	}
	s := &l.tab.shards[h.shard]
	s.mu.Lock()
	if r := &s.recs[h.rec]; r.gen == h.gen {
		r.state.NS = max(r.state.NS-max(n, 1), 0)
		if r.state.NS == 0 {
			s.unpin(h.rec)
		}
	}
	s.mu.Unlock()
}

// refund gives the cost of the n requests of the admitted bucket decision
// d back to record i of s, whose lock the caller holds: a token bucket's
// tokens, a leaky bucket's slot (flow.Holes.Free) when it lies within the
// record's schedule. The cost is that of d's limit. A decision of a
// Limiter whose limits a later one changed gives back whole nanoseconds
// only, within its slot (see decideStale).
func (l *Limiter) refund(s *shard, i int32, d Decision, n int64) {
	lim := d.Limit
	st := s.stateOf(i)
	cost, from, to := l.slotOf(d, n)
	if l.epoch != l.tab.epoch.Load() {
		*st = flow.Instant{NS: st.Ceil()}
		cost, from, to = flow.Instant{NS: cost.NS}, flow.Instant{NS: from.Ceil()}, flow.Instant{NS: to.NS}
		lim = 1 // whole nanoseconds: no fraction
	}
	switch {
	case l.cfg.Algorithm == TokenBucket:
		*st = st.Minus(cost, lim)
	case to.After(from) && !to.After(*st):
		s.recs[i].gaps = uint16(s.gaps.Free(i, st, from, to, maxGaps, s.gone))
	}
}

// slotOf returns the cost of the n requests of the admitted bucket
// decision d, and the slot they took: [from, to), to being d's mark.
func (l *Limiter) slotOf(d Decision, n int64) (cost, from, to flow.Instant) {
	cost = (&flow.GCRA{Limit: d.Limit, Window: l.cfg.Window}).Cost(n)
	return cost, d.Mark().Minus(cost, d.Limit), d.Mark()
}

// refundDebt gives the cost of the n requests of the admitted bucket
// decision d back to the debt its value left in dt when it was evicted,
// when that debt is the value's own: a token bucket's tokens, in whole
// nanoseconds; a leaky bucket's slot when it was the last one taken. The
// caller holds the shard's lock.
func (l *Limiter) refundDebt(dt *debts, d Decision, n int64) {
	cost, from, to := l.slotOf(d, n)
	a, b := dt.cellsOf(d.k)
	o := cellID(d.k)
	for _, c := range []*debtCell{a, b} {
		switch {
		case c.owner == mixed || c.owner&^heavyBit != o:
		case l.cfg.Algorithm == TokenBucket:
			c.tat -= cost.NS
		case c.tat == to.Ceil():
			c.tat = from.Ceil()
		}
		if a == b {
			return // one cell, given back once
		}
	}
}
