package hotspot

import (
	"slices"

	"github.com/sluicekit/sluice/core/internal/flow"
)

// Reload is New carrying what each value owes at now (see New).
func Reload(cfg Config, prev *Limiter, now int64) (*Limiter, error) {
	l, err := New(cfg, prev)
	if err != nil || prev == nil || l.bucket == nil || prev.bucket == nil {
		return l, err
	}
	switch c := newConversion(prev, l); {
	case l.tab != prev.tab:
		l.tab.seed = prev.tab.seed // l is not in use yet
		l.tab.carry(prev.tab, c, now, l.keep)
	case c.changes:
		l.tab.convert(c, now)
	}
	return l, nil
}

// conversion maps a value's bucket of a Limiter to its bucket of the
// Limiter that replaces it.
type conversion struct {
	def     [2]*flow.GCRA // of Config.Limit: before, after
	over    map[id][2]*flow.GCRA
	debt    [2]*flow.GCRA // the pair whose cost grows most, for debts
	changes bool          // some bucket's cost per request changes
}

func newConversion(prev, l *Limiter) *conversion {
	c := &conversion{def: [2]*flow.GCRA{prev.bucket, l.bucket}, over: map[id][2]*flow.GCRA{}}
	c.changes, c.debt = c.def[1].Converts(c.def[0]), c.def
	growth := func(g [2]*flow.GCRA) float64 {
		if !g[1].Converts(g[0]) {
			return 1
		}
		return float64(g[0].Limit) * float64(g[1].Window) / float64(g[1].Limit) / float64(g[0].Window)
	}
	for _, m := range []map[string]*flow.GCRA{prev.over, l.over} {
		for v := range m {
			g := [2]*flow.GCRA{prev.bucketOf(v), l.bucketOf(v)}
			c.over[prev.tab.idOf(v)] = g
			c.changes = c.changes || g[1].Converts(g[0])
			if growth(g) > growth(c.debt) {
				c.debt = g
			}
		}
	}
	return c
}

// tat returns the TAT under the new Limiter of value k whose TAT was st
// (its fraction in units of the old limit) at now.
func (c *conversion) tat(k id, st flow.Instant, now int64) flow.Instant {
	g, ok := c.over[k]
	if !ok {
		g = c.def
	}
	return g[1].Convert(st, g[0].Limit, now, g[0])
}

// convert converts every TAT of t, records and debts, under its shards'
// locks, and forgets the gaps.
func (t *table) convert(c *conversion, now int64) {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		for j := range s.recs {
			st := s.stateOf(int32(j))
			*st, s.recs[j].gaps = c.tat(s.recs[j].id, *st, now), 0
		}
		s.gaps.List = s.gaps.List[:0]
		if t.debts != nil {
			t.debts[i].convert(c, now)
		}
		s.mu.Unlock()
	}
}

// convert converts the live debts of d, whose values are not known, by
// the buckets whose cost grows most (c.debt).
func (d *debts) convert(c *conversion, now int64) {
	d.until = noDebt
	for j := range d.cells {
		if cl := &d.cells[j]; cl.tat > now {
			cl.tat = c.debt[1].Convert(flow.Instant{NS: cl.tat}, c.debt[0].Limit, now, c.debt[0]).Ceil()
			d.until = max(d.until, cl.tat)
		}
	}
}

// carry puts into t, a new bucket table with old's seed, what New's doc
// says, each shard of old read under its lock: debts first, so that the
// records a smaller t evicts leave their debts with the others.
func (t *table) carry(old *table, c *conversion, now, keep int64) {
	if old.debts != nil {
		for j := range t.shards {
			t.debts[j].carry(old, int32(j), uint64(len(t.shards)-1), now)
			t.debts[j].convert(c, now)
		}
	}
	var batch []record // id, TAT (converted) and segment
	for i := range old.shards {
		s := &old.shards[i]
		s.mu.Lock()
		batch = batch[:0]
		for j := range s.recs {
			r := &s.recs[j]
			if st := *s.stateOf(int32(j)); st.After(flow.Instant{NS: now}) {
				batch = append(batch, record{id: r.id, state: flow.Instant{NS: c.tat(r.id, st, now).Ceil()}, seg: r.seg})
			}
		}
		s.mu.Unlock()
		for _, r := range batch {
			si, ns := t.shard(r.id)
			ns.mu.Lock()
			if j := ns.insert(r.id, r.state.NS, now, t.debtsOf(si), keep); j >= 0 && r.seg == protected {
				ns.touch(j)
			}
			ns.mu.Unlock()
		}
	}
}

// carry gives d, the debts of shard j of a new table of mask+1 shards with
// old's seed, the live debts of the shards of old whose values are in j,
// as New's doc says, each read under its shard's lock: cells are chosen by
// the value's hash and the number of cells, so they are copied or merged
// cell by cell.
func (d *debts) carry(old *table, j int32, mask uint64, now int64) {
	oldMask := old.shardMask
	for o := uint64(j) & oldMask; o <= oldMask; o += mask + 1 {
		s := &old.shards[o]
		s.mu.Lock()
		from := &old.debts[o]
		switch {
		case !from.owing(now):
		case d.cells == nil:
			d.cells = slices.Clone(from.cells)
			d.until = from.until
		case len(d.cells) == len(from.cells):
			for k, x := range from.cells {
				if y := &d.cells[k]; x.tat > now {
					if y.tat > now && y.owner != x.owner {
						x.owner = mixed
					}
					y.tat, y.owner = max(y.tat, x.tat), x.owner
				}
			}
			d.until = max(d.until, from.until)
		}
		s.mu.Unlock()
		if mask >= oldMask {
			return // one shard of old holds j's values
		}
	}
}
