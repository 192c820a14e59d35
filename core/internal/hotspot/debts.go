package hotspot

import "math"

// minDebtCells is the fewest cells a shard's debts has: a small table still
// keeps its few debts in cells of their own.
const minDebtCells = 64

// noDebt is the TAT of a free cell, and what debts.take returns for a value
// that owes nothing: earlier than any time.
const noDebt = math.MinInt64

// mixed is the owner of a cell that holds the heavy debts of several
// values: the latest of their TATs, owed by every value whose cell it is.
const mixed = 0

// heavyBit marks the owner of a cell holding one value's heavy debt (see
// debts); the identity of a value (cellID) has it clear and never equals
// mixed.
const heavyBit = 1

// debts is a shard's memory of the buckets it evicted while they still
// limited their value (a TAT later than the time of the eviction), so that
// such a value, seen again, resumes its bucket instead of starting full:
// the package doc's "Evicted values keep their debt" says which debts are
// kept, where and how long. It is a fixed array of cells, allocated at the
// shard's first such eviction; a value's debt is written to two cells
// chosen by its id (see debtCell.add), heavy when it is at least the
// Limiter's keep (half the capacity of its smallest bucket). The debts of
// a shard are guarded by its mutex; those of different shards lie on
// different cache lines.
type debts struct {
	until int64      // no cell's TAT is later: after it, every cell is free
	cells []debtCell // nil until the first debt
	_     [32]byte   // to 64 bytes: one cache line per shard
}

// debtCell is one cell of debts.
type debtCell struct {
	tat   int64  // noDebt when free
	owner uint64 // cellID of the value whose TAT it is (| heavyBit when heavy), or mixed
}

// cellID returns the identity of k in its cells: k with bit 1 set and
// heavyBit clear, never mixed (the package doc says what it tells apart).
func cellID(k id) uint64 { return (uint64(k) | 2) &^ heavyBit }

// cellsOf returns the cells of k: top bits of its halves, above its shard's.
func (d *debts) cellsOf(k id) (a, b *debtCell) {
	n := uint64(len(d.cells))
	return &d.cells[uint64(uint32(k))*n>>32], &d.cells[(uint64(k)>>32)*n>>32]
}

// owing reports whether any value may owe a debt at now: when not, no cell
// need be read.
func (d *debts) owing(now int64) bool { return d.until > now }

// take returns the debt of k at now, the TAT its bucket is to resume from
// (noDebt when it owes none), and frees k's own cells: k is being given a
// record, which carries the debt from now on. It is called only while
// owing.
func (d *debts) take(k id, now int64) int64 {
	a, b := d.cellsOf(k)
	o := cellID(k)
	tat := max(a.own(o, now), b.own(o, now))
	if tat == noDebt {
		tat = min(a.mixed(now), b.mixed(now))
	}
	a.free(o)
	b.free(o)
	return tat
}

// record writes the debt of k, evicted at now with TAT tat > now, heavy or
// not, to k's cells, allocating the cells of a shard of capRecs records on
// its first debt.
func (d *debts) record(k id, tat, now int64, heavy bool, capRecs int32) {
	if d.cells == nil {
		d.cells = make([]debtCell, max(capRecs/2, minDebtCells))
		for i := range d.cells {
			d.cells[i].tat = noDebt
		}
	}
	a, b := d.cellsOf(k)
	o := cellID(k)
	if heavy {
		o |= heavyBit
	}
	a.add(o, tat, now)
	b.add(o, tat, now) // a second time on the same cell keeps it k's
	d.until = max(d.until, tat)
}

// own returns the TAT of this cell at now if it is live and the debt of the
// value of identity o alone, else noDebt.
func (c *debtCell) own(o uint64, now int64) int64 {
	if c.tat > now && c.owner&^heavyBit == o {
		return c.tat
	}
	return noDebt
}

// mixed returns the TAT of this cell at now if it is live and mixed, else
// noDebt.
func (c *debtCell) mixed(now int64) int64 {
	if c.tat > now && c.owner == mixed {
		return c.tat
	}
	return noDebt
}

// add writes the debt tat of owner o (identity and heavyBit), at now.
func (c *debtCell) add(o uint64, tat, now int64) {
	switch {
	case c.tat <= now: // free, or its debt paid
		*c = debtCell{tat: tat, owner: o}
	case c.owner != mixed && c.owner&^heavyBit == o&^heavyBit: // its own
		c.tat = max(c.tat, tat)
		c.owner |= o
	case o&heavyBit == 0: // light over another's debt: not written here
	case c.owner != mixed && c.owner&heavyBit == 0: // heavy over light: the light one forgotten here
		*c = debtCell{tat: tat, owner: o}
	default: // heavy over heavy: merged
		*c = debtCell{tat: max(c.tat, tat), owner: mixed}
	}
}

// free frees the cell if it is the debt of the value of identity o alone.
func (c *debtCell) free(o uint64) {
	if c.owner != mixed && c.owner&^heavyBit == o {
		c.tat = noDebt
	}
}
