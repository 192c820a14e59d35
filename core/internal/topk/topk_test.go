package topk_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/topk"
)

func TestSketchCountsExactlyWithinK(t *testing.T) {
	_, err := topk.New(0)
	require.Error(t, err)
	tk, err := topk.New(3)
	require.NoError(t, err)
	for _, c := range []struct {
		v string
		n int64
	}{{"a", 1}, {"b", 5}, {"a", 2}, {"c", 1}} {
		tk.Add(c.v, c.n)
	}
	assert.Equal(t, []topk.Count{{"b", 5, 0}, {"a", 3, 0}, {"c", 1, 0}}, tk.Top(nil))
	// A fourth value takes the least counted one's counter.
	tk.Add("d", 1)
	assert.Equal(t, []topk.Count{{"b", 5, 0}, {"a", 3, 0}, {"d", 2, 1}}, tk.Top(nil))
}

// TestSketchFindsTheHeavyHittersInAFlood adds a few heavy values among many
// that come once each (a flood of random user IDs), concurrently: the
// heavy ones, each more than 1/k of all, are counted above every other,
// each count within its error of the truth.
func TestSketchFindsTheHeavyHittersInAFlood(t *testing.T) {
	const k, workers, cold = 16, 4, 5000
	tk, err := topk.New(k)
	require.NoError(t, err)
	perWorker := map[string]int{"mallory": 2000, "eve": 1500, "trudy": 1000}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range cold {
				tk.Add(fmt.Sprintf("cold-%d-%d", w, r.IntN(1<<30)), 1)
				for v, n := range perWorker {
					if i < n {
						tk.Add(v, 1)
					}
				}
			}
		})
	}
	wg.Wait()
	// 38000 in all: a 1/16 share is 2375, below trudy's 4000.
	top := tk.Top(nil)
	require.Len(t, top, k)
	var first []string
	for _, c := range top[:3] {
		first = append(first, c.Value)
		truth := int64(workers * perWorker[c.Value])
		assert.GreaterOrEqual(t, c.Count, truth, "%s: never below the true count", c.Value)
		assert.LessOrEqual(t, c.Count-c.Err, truth, "%s: at most its error above", c.Value)
	}
	assert.ElementsMatch(t, []string{"mallory", "eve", "trudy"}, first)
}

func TestSketchCutsLongValues(t *testing.T) {
	tk, err := topk.New(2)
	require.NoError(t, err)
	long := strings.Repeat("x", 1000)
	tk.Add(long, 1)
	tk.Add(long+"y", 1)
	top := tk.Top(nil)
	require.Len(t, top, 1)
	assert.Len(t, top[0].Value, topk.MaxValueLen)
	assert.Equal(t, int64(2), top[0].Count)
}

func TestMerge(t *testing.T) {
	got := topk.Merge([]topk.Count{{"a", 3, 1}, {"b", 5, 0}, {"a", 4, 0}, {"c", 1, 0}}, 2)
	assert.Equal(t, []topk.Count{{"a", 7, 1}, {"b", 5, 0}}, got)
	assert.Empty(t, topk.Merge(nil, 3))
}
