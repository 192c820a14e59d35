package hotspot

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDebts follows debts of one cell, which every value shares, through
// the cases of debts: a cell of one value's debt is that value's alone, a
// cell of several values' live debts is owed by all at the latest TAT, a
// paid debt frees its cell.
func TestDebts(t *testing.T) {
	tab := newTable(1, true)
	a, b, c := tab.idOf("a"), tab.idOf("b"), tab.idOf("c")
	oneCell := func() *debts { return &debts{until: noDebt, cells: []debtCell{{tat: noDebt}}} }

	d := oneCell()
	assert.False(t, d.owing(0), "nothing recorded")
	d.record(a, 10, 0, true, 1)
	assert.True(t, d.owing(9))
	assert.False(t, d.owing(10), "every debt paid at until")
	assert.Equal(t, int64(noDebt), d.take(b, 0), "a's debt is a's alone")
	d.record(a, 5, 0, true, 1)
	assert.Equal(t, int64(10), d.take(a, 0), "the later of a's two debts")
	assert.Equal(t, int64(noDebt), d.take(a, 0), "taken: a's record carries it")

	d = oneCell()
	d.record(a, 10, 0, true, 1)
	d.record(b, 20, 0, true, 1)
	assert.Equal(t, int64(20), d.take(c, 0), "mixed: c could be a or b")
	assert.Equal(t, int64(20), d.take(a, 0), "a owes at least its own")
	assert.Equal(t, int64(20), d.take(a, 0), "a mixed cell is not freed by one of its values")
	assert.Equal(t, int64(noDebt), d.take(a, 20), "paid")

	d = oneCell()
	d.record(a, 10, 0, true, 1)
	d.record(b, 20, 10, true, 1) // a's debt paid: the cell is b's
	assert.Equal(t, int64(noDebt), d.take(a, 10))
	assert.Equal(t, int64(20), d.take(b, 10))

	// A table's debts: two cells a value, max(capRecs/2, 64) of them.
	d = &tab.debts[0]
	d.record(a, 10, 0, true, 1000)
	assert.Len(t, d.cells, 500)
	assert.Equal(t, int64(10), d.take(a, 0))
}

// TestDebtsLight follows light debts (under half a bucket) through one
// cell: they are written only to a free cell or their own, never make a
// cell mixed, and a heavy debt takes their cell over; so a value that owes
// nothing never inherits a light debt.
func TestDebtsLight(t *testing.T) {
	tab := newTable(1, true)
	a, b, c := tab.idOf("a"), tab.idOf("b"), tab.idOf("c")
	d := &debts{until: noDebt, cells: []debtCell{{tat: noDebt}}}

	d.record(a, 10, 0, false, 1)
	d.record(b, 20, 0, false, 1) // the cell is a's: b's light debt is not kept
	assert.Equal(t, int64(noDebt), d.take(c, 0), "c owes nothing")
	assert.Equal(t, int64(noDebt), d.take(b, 0), "b's light debt was forgotten")
	d.record(a, 15, 0, false, 1)
	assert.Equal(t, int64(15), d.take(a, 0), "a's own, the later")

	d.record(a, 10, 0, false, 1)
	d.record(b, 20, 0, true, 1) // heavy over light: the cell is b's
	assert.Equal(t, int64(noDebt), d.take(a, 0), "a's light debt gave way")
	assert.Equal(t, int64(noDebt), d.take(c, 0))
	d.record(c, 30, 0, false, 1) // light over heavy: not written
	assert.Equal(t, int64(20), d.take(b, 0), "b's heavy debt is kept")

	d.record(a, 10, 0, true, 1)
	d.record(b, 20, 0, true, 1) // heavy over heavy: mixed
	assert.Equal(t, int64(20), d.take(c, 0), "mixed: c could be a or b")
	d.record(c, 30, 5, false, 1)
	assert.Equal(t, int64(20), d.take(c, 5), "a light debt does not enter a mixed cell")
}
