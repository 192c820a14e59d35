package hotspot

import (
	"maps"

	"github.com/sluicekit/sluice/core/flow"
)

// Limiter limits each value of a request parameter separately, tracking at
// most Config.MaxKeys values in its table. It is safe for concurrent use.
type Limiter struct {
	cfg  Config                // defaults applied; Overrides is the Limiter's own copy
	gcra flow.GCRA             // the buckets' parameters for Config.Limit, prepared
	over map[string]*flow.GCRA // the same for each override
	tab  *table
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
}

// New returns a Limiter for cfg, or an error listing every problem of cfg,
// one flow.FieldError each. When prev is the Limiter of the same rule before
// a rule reload and has the same Algorithm and MaxKeys, the new
// Limiter shares its table: every value keeps its bucket (as full, as a
// share of a window, as it was) or its requests in flight, and Decisions
// made by prev may be given to the new Limiter's Undo and Release. Otherwise
// the new Limiter starts empty; Decisions of prev still act on prev's table.
func New(cfg Config, prev *Limiter) (*Limiter, error) {
	cfg = cfg.WithDefaults()
	if err := flow.JoinFieldErrors(cfg.Validate()); err != nil {
		return nil, err
	}
	cfg.Overrides = maps.Clone(cfg.Overrides)
	l := &Limiter{cfg: cfg}
	l.gcra = l.params(cfg.Limit)
	if len(cfg.Overrides) > 0 {
		l.over = make(map[string]*flow.GCRA, len(cfg.Overrides))
		for v, lim := range cfg.Overrides {
			g := l.params(lim)
			l.over[v] = &g
		}
	}
	if prev != nil && prev.cfg.Algorithm == cfg.Algorithm && prev.cfg.MaxKeys == cfg.MaxKeys {
		l.tab = prev.tab
	} else {
		l.tab = newTable(cfg.MaxKeys, cfg.Algorithm != Concurrency)
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

// params returns the prepared bucket parameters of limit lim.
func (l *Limiter) params(lim int64) flow.GCRA {
	return flow.GCRA{Limit: lim, Window: l.cfg.Window, Burst: l.cfg.Burst, MaxWait: l.cfg.MaxWait, Queue: l.cfg.Algorithm == LeakyBucket}.Prepare()
}

// paramsOf returns the bucket parameters of value: its override's, else
// those of Config.Limit. Limit is the value's limit under every algorithm.
func (l *Limiter) paramsOf(value string) *flow.GCRA {
	if len(l.over) > 0 {
		if g, ok := l.over[value]; ok {
			return g
		}
	}
	return &l.gcra
}

// Acquire admits or rejects n requests (n < 1 counts as 1) of value at now,
// in nanoseconds of the Guard's clock. A value whose limit is 0 is rejected
// without being tracked. A value not yet tracked gets a record, evicting the
// least recently used one of its shard when the shard is full; a bucket
// resumes from the debt its value was evicted with, if any (see the package
// documentation). Under the
// Concurrency algorithm, a value that finds every record of its shard with
// requests in flight is rejected (with RetryAfter 0, like any rejection of
// that algorithm). A LeakyBucket decision may be admitted with a Wait: the
// caller waits that long before proceeding, or gives the slot back with Undo.
func (l *Limiter) Acquire(now int64, value string, n int64) Decision {
	var d Decision
	l.AcquireTo(&d, now, value, n)
	return d
}

// AcquireTo is Acquire writing the decision to d, every field of it,
// instead of returning it: a Decision is too large to be returned in
// registers, and a caller that keeps decisions (to give them back later)
// saves copying it.
func (l *Limiter) AcquireTo(d *Decision, now int64, value string, n int64) {
	n = max(n, 1)
	g := l.paramsOf(value)
	lim := g.Limit
	if lim == 0 {
		*d = Decision{Decision: flow.Decision{RetryAfter: l.cfg.Window}}
		return
	}
	// A new record's state: none in flight, or a full bucket (a TAT of 0
	// is as full as a TAT of now for any now >= 0).
	fresh := min(now, 0)
	if l.cfg.Algorithm == Concurrency {
		fresh = 0
	}
	k := l.tab.idOf(value)
	si, s := l.tab.shard(k)
	s.mu.Lock()
	if i := s.frontRec; i >= 0 && s.front == k {
		// The front (a bucket table's): the record is only read.
		s.touch(i)
		s.frontState = g.DecideTo(&d.Decision, s.frontState, now, n)
		d.lim, d.shard, d.rec, d.gen = l, si, i, s.recs[i].gen
		s.mu.Unlock()
		return
	}
	i := s.find(k)
	if i >= 0 {
		s.touch(i)
	} else if i = s.insert(k, fresh, now, l.tab.debtsOf(si)); i < 0 {
		s.mu.Unlock()
		*d = Decision{Decision: flow.Decision{Limit: lim}}
		return
	}
	r := &s.recs[i]
	if l.cfg.Algorithm != Concurrency {
		// The state is guarded by the shard's lock: GCRA's arithmetic,
		// stored as is, with no atomic and no retry. A value decided
		// twice in a row becomes the front (see shard).
		st := &r.state
		if tag := k.tag(); s.lastTag != tag {
			s.lastTag = tag
		} else {
			s.promote(i)
			st = &s.frontState
		}
		*st = g.DecideTo(&d.Decision, *st, now, n)
		d.lim, d.shard, d.rec, d.gen = l, si, i, r.gen
		s.mu.Unlock()
		return
	}
	// Reserve, then check, under the shard's lock, which orders every
	// change of the count: it is never above lim.
	if v := r.state + n; v <= lim {
		r.state = v
		s.pin(i)
		*d = Decision{Decision: flow.Decision{OK: true, Limit: lim, Remaining: lim - v}, lim: l, shard: si, rec: i, gen: r.gen}
	} else {
		*d = Decision{Decision: flow.Decision{Limit: lim, Remaining: max(lim-r.state, 0)}}
	}
	s.mu.Unlock()
}

// Undo gives back the n requests of an admitted decision d that were not
// used (another rule rejected the request, or its wait was cancelled), on
// the table d was made in. A rejected decision, or one whose value has been
// evicted since, is ignored. Token and leaky buckets give back as
// flow.GCRA.Undo does; Concurrency releases.
func (l *Limiter) Undo(d Decision, n int64) {
	p := d.lim
	if !d.OK || p == nil {
		return
	}
	if p.cfg.Algorithm == Concurrency {
		p.release(d, n)
		return
	}
	s := &p.tab.shards[d.shard]
	s.mu.Lock()
	if r := &s.recs[d.rec]; r.gen == d.gen {
		st := s.stateOf(d.rec)
		*st = p.gcra.Refund(*st, d.Decision, max(n, 1)) // Refund reads the limit from d
	}
	s.mu.Unlock()
}

// Release ends the n requests of an admitted Concurrency decision d (called
// by Exit); it does nothing for the bucket algorithms. Each admitted
// decision must be released once: the count of a value never goes below 0,
// and a record reused for another value is never touched, but a second
// Release of the same decision while other requests of the value are in
// flight takes one of theirs.
func (l *Limiter) Release(d Decision, n int64) {
	if d.OK && d.lim != nil && d.lim.cfg.Algorithm == Concurrency {
		d.lim.release(d, n)
	}
}

// release takes n requests of d out of flight, and makes the record
// evictable again when none is left.
func (l *Limiter) release(d Decision, n int64) {
	s := &l.tab.shards[d.shard]
	s.mu.Lock()
	if r := &s.recs[d.rec]; r.gen == d.gen {
		r.state = max(r.state-max(n, 1), 0)
		if r.state == 0 {
			s.unpin(d.rec)
		}
	}
	s.mu.Unlock()
}
