package hotspot

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/flow"
)

func mustNew(t testing.TB, cfg Config, prev *Limiter) *Limiter {
	t.Helper()
	l, err := New(cfg, prev)
	require.NoError(t, err)
	return l
}

// lookup returns the record of value without using it: whether the value
// is tracked, its state (a TAT's whole nanoseconds, or requests in
// flight) and its life.
func lookup(l *Limiter, value string) (ok bool, state int64, gen uint64) {
	k := l.tab.idOf(value)
	_, s := l.tab.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.find(k)
	if i < 0 {
		return false, 0, 0
	}
	return true, s.stateOf(i).NS, s.recs[i].gen
}

// checkTable fails t unless every shard of l is consistent: at most its
// capacity of records, each indexed once and found by its id, each in
// exactly one of the two lists or pinned, the lists linked both ways with
// the tail tag of their tail, protected within its bound.
func checkTable(t testing.TB, l *Limiter) {
	t.Helper()
	total := 0
	for si := range l.tab.shards {
		s := &l.tab.shards[si]
		s.mu.Lock()
		n := int32(len(s.recs))
		total += int(n)
		require.LessOrEqual(t, n, s.capRecs, "shard %d", si)
		indexed := make([]int, n)
		for _, e := range s.slots {
			if e != 0 {
				i := int32(e&maxShardKeys) - 1
				indexed[i]++
				require.Equal(t, entry(s.recs[i].id.tag(), i), e, "shard %d record %d", si, i)
			}
		}
		inList := make([]int, n)
		for seg := range s.lists {
			ls := &s.lists[seg]
			count, prev := int32(0), int32(-1)
			for i := ls.head; count < ls.n; i = s.recs[i].next {
				r := &s.recs[i]
				require.EqualValues(t, seg, r.seg, "shard %d record %d", si, i)
				require.Zero(t, r.flags&flagPinned, "shard %d record %d", si, i)
				if seg == probation {
					require.Zero(t, r.flags&flagUsed, "shard %d record %d", si, i)
				}
				if prev >= 0 {
					require.Equal(t, prev, r.prev, "shard %d record %d", si, i)
					require.Equal(t, s.recs[prev].id.tag(), r.prevTag, "shard %d record %d", si, i)
				}
				inList[i]++
				prev = i
				count++
			}
			if ls.n > 0 {
				require.Equal(t, prev, ls.tail, "shard %d segment %d", si, seg)
				require.Equal(t, s.recs[prev].id.tag(), ls.tailTag, "shard %d segment %d", si, seg)
			}
		}
		require.LessOrEqual(t, s.lists[protected].n, s.protCap, "shard %d", si)
		for i := range n {
			r := &s.recs[i]
			require.Equal(t, 1, indexed[i], "shard %d record %d indexed", si, i)
			require.Equal(t, i, s.find(r.id), "shard %d record %d found", si, i)
			if r.flags&flagPinned != 0 {
				require.Zero(t, inList[i], "shard %d pinned record %d", si, i)
				require.Positive(t, r.state.NS, "shard %d pinned record %d", si, i)
			} else {
				require.Equal(t, 1, inList[i], "shard %d record %d in lists", si, i)
			}
		}
		// Gaps: counted by their record, at most maxGaps, each non-empty
		// and before its record's TAT, those of a record disjoint.
		require.LessOrEqual(t, len(s.gaps.List), maxGaps, "shard %d", si)
		gaps := make([]uint16, n)
		for j, g := range s.gaps.List {
			require.Less(t, g.Owner, n, "shard %d gap %d", si, j)
			gaps[g.Owner]++
			require.True(t, g.To.After(g.From), "shard %d gap %d empty", si, j)
			require.False(t, g.To.After(*s.stateOf(g.Owner)), "shard %d gap %d after its TAT", si, j)
			for _, h := range s.gaps.List[j+1:] {
				require.False(t, h.Owner == g.Owner && h.To.After(g.From) && g.To.After(h.From), "shard %d: gaps %+v and %+v overlap", si, g, h)
			}
		}
		for i := range n {
			require.Equal(t, gaps[i], s.recs[i].gaps, "shard %d record %d gaps", si, i)
		}
		s.mu.Unlock()
	}
	require.Equal(t, total, l.Len())
	require.LessOrEqual(t, total, l.cfg.MaxKeys)
}

// outcome returns what d tells its caller: its exported fields, without
// the mark that Undo uses.
func outcome(d Decision) flow.Decision {
	return flow.Decision{OK: d.OK, Wait: d.Wait, Limit: d.Limit, Remaining: d.Remaining, RetryAfter: d.RetryAfter}
}
