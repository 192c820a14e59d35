package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// TestNamesOfInvalidUTF8AreOneResource: names that differ only in invalid
// bytes are one resource, named with U+FFFD, found by Stats under any of
// them, and a rule naming one with invalid bytes limits them all, within
// the resource bound and beyond it (where rules are matched per call).
func TestNamesOfInvalidUTF8AreOneResource(t *testing.T) {
	ctx := context.Background()
	for _, beyond := range []bool{false, true} {
		opts := []core.Option{core.WithRules(core.Rule{Name: "x", Resource: "GET /x\xfe", Kind: core.KindFlow, Limit: 2, Window: time.Hour})}
		if beyond {
			opts = append(opts, core.WithMaxResources(1))
		}
		g, err := core.New(opts...)
		require.NoError(t, err)
		if beyond {
			e, err := g.Enter(ctx, "GET /first") // takes the only place
			require.NoError(t, err)
			e.Exit(nil)
		}
		passed := 0
		for _, name := range []string{"GET /x\xff", "GET /x\xfe", "GET /x\uFFFD", "GET /x\xff\xff"} {
			if e, err := g.Enter(ctx, name); err == nil {
				passed++
				e.Exit(nil)
			}
		}
		assert.Equal(t, 2, passed, "beyond the bound: %v", beyond)
		if beyond {
			continue
		}
		var names []string
		for _, r := range g.Snapshot().Resources {
			names = append(names, r.Resource)
		}
		assert.Equal(t, []string{"GET /x\uFFFD"}, names)
		st, ok := g.Stats("GET /x\xfe")
		require.True(t, ok)
		assert.Equal(t, int64(2), st.Total.Pass)
		assert.Equal(t, int64(2), st.Total.Block)
		g.Close()
	}
}
