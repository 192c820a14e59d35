package hotspot

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShardSize: a shard fills three cache lines exactly; the fields a
// decision writes are on the first, those it only reads on the second, the
// rest on the third (see shard).
func TestShardSize(t *testing.T) {
	typ := reflect.TypeFor[shard]()
	assert.EqualValues(t, 192, typ.Size())
	assert.EqualValues(t, 48, reflect.TypeFor[record]().Size())
	for _, name := range []string{"mu", "lists", "frontState", "lastTag", "frontRec"} {
		f, _ := typ.FieldByName(name)
		assert.LessOrEqual(t, f.Offset+f.Type.Size(), uintptr(64), "%s on the first line", name)
	}
	for _, name := range []string{"recs", "slots", "front", "capRecs", "protCap"} {
		f, _ := typ.FieldByName(name)
		assert.GreaterOrEqual(t, f.Offset, uintptr(64), "%s on the second line", name)
		assert.LessOrEqual(t, f.Offset+f.Type.Size(), uintptr(128), "%s on the second line", name)
	}
	for _, name := range []string{"gaps"} {
		f, _ := typ.FieldByName(name)
		assert.GreaterOrEqual(t, f.Offset, uintptr(128), "%s on the third line", name)
	}
}

func TestShape(t *testing.T) {
	for _, tc := range []struct{ maxKeys, shards int }{
		{1, 1}, {255, 1}, {256, 2}, {1000, 4}, {10_000, 64}, {100_000, 64}, {1_000_003, 64},
		{64 * maxShardKeys, 64}, {64*maxShardKeys + 1, 128}, {10_000_000, 512}, {MaxMaxKeys, 65536},
	} {
		tab := newTable(tc.maxKeys, true)
		assert.Len(t, tab.shards, tc.shards, "MaxKeys %d", tc.maxKeys)
		sum := 0
		for i := range tab.shards {
			s := &tab.shards[i]
			sum += int(s.capRecs)
			assert.Less(t, s.protCap, s.capRecs, "probation holds at least one record")
			assert.LessOrEqual(t, s.capRecs, int32(maxShardKeys), "record numbers fit in an index entry")
		}
		assert.Equal(t, tc.maxKeys, sum, "MaxKeys %d", tc.maxKeys)
	}
}

// TestSegmentedLRU follows one shard of 10 records (8 protected at most)
// through the cases of the eviction policy.
func TestSegmentedLRU(t *testing.T) {
	l := mustNew(t, Config{Limit: 1000, Window: s, MaxKeys: 10}, nil)
	require.Len(t, l.tab.shards, 1)
	use := func(values ...string) {
		for _, v := range values {
			l.Acquire(0, v, 1)
		}
	}
	tracked := func(v string) bool { ok, _, _ := lookup(l, v); return ok }
	scan := func(prefix string, n int) {
		for i := range n {
			use(prefix + strconv.Itoa(i))
		}
	}

	use("hot", "hot") // seen twice: protected
	use("once")       // seen once: probation
	scan("scan-a-", 1000)
	assert.True(t, tracked("hot"), "a scan evicted a protected value")
	assert.False(t, tracked("once"), "a value seen once outlived 1000 newer ones")
	assert.Equal(t, 10, l.Len())
	checkTable(t, l)

	// Probation holds 2: a value survives one newer value, and is promoted
	// when seen again before it reaches the tail.
	use("p")
	use("q")
	use("p")
	scan("scan-b-", 1000)
	assert.True(t, tracked("p"), "seen again while in probation: protected")
	assert.False(t, tracked("q"))

	// Protected holds 8: promoting a ninth value demotes protected's least
	// recently used one to the head of probation, where a scan evicts it
	// unless it is used again first.
	use("hot")
	for i := range 7 {
		use("w"+strconv.Itoa(i), "w"+strconv.Itoa(i))
	}
	// Protected was hot, p, w0..w6: p, the least recent, is in probation.
	assert.True(t, tracked("p"), "demoted, not evicted")
	use("hot")    // protected from most to least recent: hot, w6..w0
	use("x", "x") // w0 demoted
	use("w0")     // used again in probation: promoted, w1 demoted
	scan("scan-c-", 1000)
	for _, v := range []string{"p", "w1"} {
		assert.False(t, tracked(v), "%s: demoted, then scanned out", v)
	}
	for _, v := range []string{"hot", "x", "w0", "w2", "w3", "w4", "w5", "w6"} {
		assert.True(t, tracked(v), "%s: protected", v)
	}
	checkTable(t, l)
}

// TestSecondChance: a use of a protected value writes no list, only the
// record's flag; a promotion that overfills protected demotes its tail
// unless used since it was put at the head, which is moved back to the head
// instead (a second chance), its flag cleared; after secondChances of them
// the tail is demoted whatever its flag.
func TestSecondChance(t *testing.T) {
	l := mustNew(t, Config{Limit: 1000, Window: s, MaxKeys: 10}, nil)
	require.Len(t, l.tab.shards, 1)
	sh := &l.tab.shards[0]
	require.EqualValues(t, 8, sh.protCap)
	fillers := 0
	use := func(values ...string) {
		for _, v := range values {
			if v == "x" { // a new value each time, seen once: never protected
				fillers++
				v = "x" + strconv.Itoa(fillers)
			}
			l.Acquire(0, v, 1)
		}
	}
	rec := func(v string) *record {
		i := sh.find(l.tab.idOf(v))
		require.GreaterOrEqual(t, i, int32(0), "%s not tracked", v)
		return &sh.recs[i]
	}
	// order returns the values of protected from head to tail.
	order := func(values ...string) []string {
		byRec := map[int32]string{}
		for _, v := range values {
			byRec[sh.find(l.tab.idOf(v))] = v
		}
		var out []string
		ls := &sh.lists[protected]
		for i, n := ls.head, int32(0); n < ls.n; i, n = sh.recs[i].next, n+1 {
			out = append(out, byRec[i])
		}
		return out
	}
	a := []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"}
	for _, v := range a {
		use(v, "x", v) // x between: no value is the shard's front
	}
	all := append(slices.Clone(a), "b", "c")
	require.Equal(t, []string{"a7", "a6", "a5", "a4", "a3", "a2", "a1", "a0"}, order(all...))

	// A use sets the flag and moves nothing.
	before := *rec("a3")
	use("a0", "x", "a1", "x", "a3")
	assert.Equal(t, []string{"a7", "a6", "a5", "a4", "a3", "a2", "a1", "a0"}, order(all...))
	after := *rec("a3")
	assert.EqualValues(t, flagUsed, after.flags)
	after.flags, after.state = before.flags, before.state
	assert.Equal(t, before, after, "a3: only its flag and state change")

	// Promoting b: a0 and a1, used, go back to the head; a2 is demoted.
	use("b", "x", "b")
	assert.Equal(t, []string{"a1", "a0", "b", "a7", "a6", "a5", "a4", "a3"}, order(all...))
	assert.EqualValues(t, probation, rec("a2").seg)
	assert.Zero(t, rec("a0").flags)
	assert.Zero(t, rec("a1").flags)
	assert.EqualValues(t, flagUsed, rec("a3").flags)
	checkTable(t, l)

	// With every record of protected used, a promotion moves
	// secondChances of them back and demotes the next tail, c itself.
	for _, v := range order(all...) {
		use(v, "x")
	}
	use("c", "x", "c")
	assert.EqualValues(t, probation, rec("c").seg)
	assert.Equal(t, []string{"a1", "a0", "b", "a7", "a6", "a5", "a4", "a3"}, order(all...))
	for _, v := range order(all...) {
		assert.Zero(t, rec(v).flags, v)
	}
	checkTable(t, l)
}

// TestTableStress: random operations on small tables keep every invariant
// of checkTable, for every algorithm, with releases in random order.
func TestTableStress(t *testing.T) {
	for _, alg := range []Algorithm{TokenBucket, LeakyBucket, Concurrency} {
		t.Run(string(alg), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			cfg := Config{Algorithm: alg, Limit: 3, Window: s, MaxKeys: 300}
			if alg == Concurrency {
				cfg.Window = 0
			}
			l := mustNew(t, cfg, nil)
			type reservation struct {
				d Decision
				n int64
			}
			var held []reservation
			for i := range 20_000 {
				// Values from a skewed pool: a few hot, many cold.
				v := "v" + strconv.Itoa(int(rng.ExpFloat64()*200))
				n := 1 + rng.Int64N(2)
				d := l.Acquire(int64(i)*int64(ms), v, n)
				switch {
				case d.OK && alg == Concurrency && rng.IntN(4) > 0:
					held = append(held, reservation{d, n})
				case d.OK && rng.IntN(8) == 0:
					l.Undo(d, n)
				}
				for len(held) > 40 || (len(held) > 0 && rng.IntN(3) == 0) {
					j := rng.IntN(len(held))
					l.Release(held[j].d.Hold(), held[j].n)
					held[j] = held[len(held)-1]
					held = held[:len(held)-1]
				}
				if i%97 == 0 {
					checkTable(t, l)
				}
			}
			checkTable(t, l)
		})
	}
}

// TestMemoryPerKey reports the heap bytes per tracked value of a full table
// of 100 000 (see doc.go), and fails if it grows past 75.
func TestMemoryPerKey(t *testing.T) {
	perKey := bytesPerKey(t, 100_000)
	t.Logf("%.1f bytes per tracked value", perKey)
	assert.Less(t, perKey, 75.0)
}

// TestIdentity: a value is its 64-bit hash. The table tells apart ids that
// differ in any one bit; a shard's debt cells do too, but for the two
// lowest bits, which choose the shard in a table of 4 shards or more and
// which a table of fewer shards confuses (see doc.go).
func TestIdentity(t *testing.T) {
	for _, maxKeys := range []int{100_000, 256} {
		tab := newTable(maxKeys, true)
		k := tab.idOf("alice")
		si, s := tab.shard(k)
		require.EqualValues(t, 0, s.insert(k, 0, 0, nil, 0))
		for b := range 64 {
			o := k ^ 1<<b
			if oi, _ := tab.shard(o); oi != si {
				continue // another shard: told apart
			}
			require.EqualValues(t, -1, s.find(o), "MaxKeys %d: bit %d", maxKeys, b)
			d := tab.debtsOf(si)
			d.record(k, 10, 0, true, s.capRecs)
			if b < 2 {
				assert.EqualValues(t, 10, d.take(o, 0), "MaxKeys %d: bit %d is not in the cells' identity", maxKeys, b)
				continue
			}
			assert.Equal(t, int64(noDebt), d.take(o, 0), "MaxKeys %d: bit %d", maxKeys, b)
			assert.EqualValues(t, 10, d.take(k, 0), "MaxKeys %d: bit %d: k's debt kept", maxKeys, b)
		}
		assert.EqualValues(t, 0, s.find(k))
	}
}

// TestLargestShard fills a shard of maxShardKeys records, the most an
// index entry numbers, then gives every record to a new value: each value
// tracked is found in its record, and none evicted is.
func TestLargestShard(t *testing.T) {
	tab := newTable(64*maxShardKeys, true)
	s := &tab.shards[0]
	require.EqualValues(t, maxShardKeys, s.capRecs)
	ids := make([]id, 2*maxShardKeys)
	for i := range ids {
		ids[i] = tab.idOf(strconv.Itoa(i))
	}
	for i, k := range ids[:maxShardKeys] {
		require.EqualValues(t, i, s.insert(k, 0, 0, nil, 0))
	}
	require.Len(t, s.slots, 2*(maxShardKeys+1), "at most half full")
	for i, k := range ids[maxShardKeys:] {
		require.GreaterOrEqual(t, s.insert(k, 0, 0, nil, 0), int32(0))
		require.EqualValues(t, -1, s.find(ids[i]), "value %d, evicted", i)
	}
	for i, k := range ids[maxShardKeys:] {
		r := s.find(k)
		require.GreaterOrEqual(t, r, int32(0), "value %d", maxShardKeys+i)
		require.Equal(t, k, s.recs[r].id)
	}
}
