package core

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResourceTableHotSlots: names that share a hot slot (the same length,
// or lengths 16 apart) each get their own resource, whichever was looked
// up first, and again on every later lookup, from the map or the slot.
func TestResourceTableHotSlots(t *testing.T) {
	tb := newResourceTable(100)
	names := []string{"GET /a", "GET /b", "GET /a/b/c/d/e/f/g/h/i", "PUT /a", string([]byte("GET /a"))}
	for round := range 3 {
		for _, name := range names {
			r, ok := tb.get(name)
			require.True(t, ok)
			assert.Equal(t, name, r.name, "round %d", round)
		}
	}
	seen := map[*resource]string{}
	for _, name := range names {
		r, _ := tb.get(name)
		if other, ok := seen[r]; ok {
			assert.Equal(t, other, name, "two names share a resource")
		}
		seen[r] = name
	}
	assert.Len(t, seen, 4)
	// Beyond the bound, names go to the overflow resource, never to a
	// hot slot's.
	small := newResourceTable(1)
	first, ok := small.get("GET /x")
	require.True(t, ok)
	for i := range 40 {
		name := fmt.Sprint("GET /", i)
		r, ok := small.get(name)
		assert.False(t, ok, name)
		assert.Same(t, small.overflow, r, name)
	}
	again, _ := small.get("GET /x")
	assert.Same(t, first, again)
}

// TestBeyondBoundBindings: names beyond the resource bound share the
// binding of the names the same rules match, and only theirs: each
// rejection names a rule that matches its own name, a name no rule
// matches passes, and a flood of such names allocates nothing.
func TestBeyondBoundBindings(t *testing.T) {
	hour := time.Hour
	g, err := New(WithMaxResources(1), WithRules(
		Rule{Name: "a", Resource: "GET /a*", Kind: KindFlow, Limit: 1, Window: hour},
		Rule{Name: "b", Resource: "GET /b*", Kind: KindFlow, Limit: 1, Window: hour},
		Rule{Name: "ab", Resource: "GET /ab*", Kind: KindFlow, Limit: 2, Window: hour},
		// The rules of "GET /d" and those of "GET /c" (none) have the
		// same slot in ruleSet.beyond.
		Rule{Name: "d", Resource: "GET /d*", Kind: KindFlow, Limit: 1, Window: hour},
	))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	ctx := context.Background()
	e, err := g.Enter(ctx, "GET /x") // the bound
	require.NoError(t, err)
	e.Exit(nil)
	want := map[string][]string{"GET /a": {"a"}, "GET /b": {"b"}, "GET /ab": {"a", "ab"}, "GET /c": nil, "GET /d": {"d"}}
	for round := range 4 {
		for prefix, rules := range want {
			name := fmt.Sprint(prefix, round)
			e, err := g.Enter(ctx, name)
			if err == nil {
				e.Exit(nil)
				assert.True(t, rules == nil || round == 0, "%s admitted", name)
				continue
			}
			var b *BlockedError
			require.True(t, errors.As(err, &b), "%s: %v", name, err)
			assert.Contains(t, rules, b.Rule, "%s blocked by a rule not its own", name)
			assert.Equal(t, name, b.Resource)
		}
	}
	if !raceEnabled {
		names := []string{"GET /c10", "GET /c11", "GET /c12"}
		i := 0
		allocs := testing.AllocsPerRun(100, func() {
			i++
			e, _ := g.Enter(ctx, names[i%len(names)])
			e.Exit(nil)
		})
		assert.Zero(t, allocs)
	}
}
