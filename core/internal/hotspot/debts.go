package hotspot

import "math"

// minDebtCells is the fewest cells a shard's debts has: a small table still
// keeps its few debts in cells of their own.
const minDebtCells = 64

// noDebt is the TAT of a free cell, and what debts.take returns for a value
// that owes nothing: earlier than any time.
const noDebt = math.MinInt64

// mixed is the owner of a cell that holds the debts of several values: the
// latest of their TATs, owed by every value whose cell it is.
const mixed = 0

// debts is a shard's memory of the buckets it evicted while they still
// limited their value (a TAT later than the time of the eviction), so that
// such a value, seen again, resumes its bucket instead of starting full. It
// is a fixed array of cells, allocated at the shard's first such eviction;
// a value's debt is written to two cells chosen by its id.
//
// A cell holds a TAT and its owner: the value whose TAT it is (its id's h),
// or mixed. A debt written to a cell whose TAT has passed takes it over; one
// written to a cell of its own value keeps the later TAT; one written to a
// cell that holds another value's live debt makes the cell mixed, with the
// later TAT of the two. A value's debt is then the earlier of its two cells'
// TATs, each counted only if it is the value's own or mixed, and still
// ahead: at least the TAT the value was evicted with, since a live TAT
// leaves a cell only by being merged into a later one (or when the value
// takes a record again, which carries it). A value that owes nothing
// inherits a debt only when both its cells are mixed: never while live
// debts are fewer than the cells share them out, and only as long as the
// latest debt of the cell lasts.
//
// The debts of a shard are guarded by its mutex; those of different shards
// lie on different cache lines.
type debts struct {
	until int64      // no cell's TAT is later: after it, every cell is free
	cells []debtCell // nil until the first debt
	_     [32]byte   // to 64 bytes: one cache line per shard
}

// debtCell is one cell of debts.
type debtCell struct {
	tat   int64  // noDebt when free
	owner uint64 // ownerOf the value whose TAT it is, or mixed
}

// ownerOf returns the owner of k's cells: its h, which never equals mixed.
// It tells values of a shard apart by the 58 to 64 bits of h that do not
// choose the shard, while the cells are chosen by h2.
func ownerOf(k id) uint64 { return k.h | 1 }

// cellsOf returns the cells of k.
func (d *debts) cellsOf(k id) (a, b *debtCell) {
	n := uint64(len(d.cells))
	return &d.cells[uint64(uint32(k.h2))*n>>32], &d.cells[(k.h2>>32)*n>>32]
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
	o := ownerOf(k)
	tat := min(a.owed(o, now), b.owed(o, now))
	a.free(o)
	b.free(o)
	return tat
}

// record writes the debt of k, evicted at now with TAT tat > now, to k's
// cells, allocating the cells of a shard of capRecs records on its first
// debt.
func (d *debts) record(k id, tat, now int64, capRecs int32) {
	if d.cells == nil {
		d.cells = make([]debtCell, max(capRecs/2, minDebtCells))
		for i := range d.cells {
			d.cells[i].tat = noDebt
		}
	}
	a, b := d.cellsOf(k)
	o := ownerOf(k)
	a.add(o, tat, now)
	b.add(o, tat, now) // a second time on the same cell keeps it k's
	d.until = max(d.until, tat)
}

// owed returns the TAT the value of owner o owes by this cell at now, or
// noDebt.
func (c *debtCell) owed(o uint64, now int64) int64 {
	if c.tat > now && (c.owner == o || c.owner == mixed) {
		return c.tat
	}
	return noDebt
}

// add writes the debt tat of the value of owner o, at now.
func (c *debtCell) add(o uint64, tat, now int64) {
	switch {
	case c.tat <= now: // free, or its debt paid
		*c = debtCell{tat: tat, owner: o}
	case c.owner == o:
		c.tat = max(c.tat, tat)
	default:
		*c = debtCell{tat: max(c.tat, tat), owner: mixed}
	}
}

// free frees the cell if it is the value of owner o's own.
func (c *debtCell) free(o uint64) {
	if c.owner == o {
		c.tat = noDebt
	}
}
