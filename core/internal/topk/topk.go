package topk

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/sluicekit/sluice/core/internal/window"
)

// Sketch counts the values added most, approximately, in fixed memory: the
// Space-Saving algorithm (Metwally, Agrawal and El Abbadi, "Efficient
// computation of frequent and top-k elements in data streams", 2005). It
// keeps k counters; a value not counted takes the counter of the least
// counted one, and its count from there, with that count as its error (see
// the package doc for its bounds). A Sketch is safe for concurrent use.
type Sketch struct {
	mu   sync.Mutex
	k    int
	idx  map[string]int // value -> index in ents; guarded by mu
	ents []Count        // guarded by mu
}

// Count is a value and how many times it was added: at most Err more than
// the true count.
type Count struct {
	Value      string
	Count, Err int64
}

// MaxValueLen bounds the bytes of a value a Sketch keeps: longer ones are
// cut, so that a counter holds no more than that of a request's memory.
const MaxValueLen = 128

// New returns a Sketch of k counters.
func New(k int) (*Sketch, error) {
	if k < 1 {
		return nil, fmt.Errorf("topk.New(%d): k must be >= 1", k)
	}
	return &Sketch{k: k, idx: make(map[string]int, k), ents: make([]Count, 0, k)}, nil
}

// K returns the number of counters of t.
func (t *Sketch) K() int { return t.k }

// Add counts n more of v.
func (t *Sketch) Add(v string, n int64) {
	if len(v) > MaxValueLen {
		v = v[:MaxValueLen]
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.idx[v]; ok {
		t.ents[i].Count = window.Plus(t.ents[i].Count, n)
		return
	}
	if len(v) == MaxValueLen {
		v = strings.Clone(v) // not the whole of a longer one
	}
	if len(t.ents) < t.k {
		t.idx[v] = len(t.ents)
		t.ents = append(t.ents, Count{Value: v, Count: n})
		return
	}
	low := 0
	for i := range t.ents {
		if t.ents[i].Count < t.ents[low].Count {
			low = i
		}
	}
	e := &t.ents[low]
	delete(t.idx, e.Value)
	t.idx[v] = low
	*e = Count{Value: v, Count: window.Plus(e.Count, n), Err: e.Count}
}

// Top appends the counters of t to dst, highest count first.
func (t *Sketch) Top(dst []Count) []Count {
	t.mu.Lock()
	start := len(dst)
	dst = append(dst, t.ents...)
	t.mu.Unlock()
	sortCounts(dst[start:])
	return dst
}

// Merge returns the k highest counts of counts, those of one value added
// up (counters of several Sketches: their errors add up too), highest first.
func Merge(counts []Count, k int) []Count {
	sum := map[string]int{}
	var out []Count
	for _, c := range counts {
		if i, ok := sum[c.Value]; ok {
			out[i].Count = window.Plus(out[i].Count, c.Count)
			out[i].Err = window.Plus(out[i].Err, c.Err)
			continue
		}
		sum[c.Value] = len(out)
		out = append(out, c)
	}
	sortCounts(out)
	return out[:min(len(out), k)]
}

func sortCounts(c []Count) {
	slices.SortFunc(c, func(a, b Count) int {
		if n := cmp.Compare(b.Count, a.Count); n != 0 {
			return n
		}
		return strings.Compare(a.Value, b.Value)
	})
}
