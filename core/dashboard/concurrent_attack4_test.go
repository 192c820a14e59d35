package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/dashboard"
)

// TestSnapshotWhileRulesChangeUnderHostileNames: the page polls the
// snapshot while the rules are replaced again and again (renamed, kinds
// changed, removed) and clients enter resources named with markup, JSON
// breakers, line separators and invalid UTF-8, past the Guard's resource
// bound. Every answer is 200 and valid JSON, holds no raw markup, lists at
// most the bound of resources plus (overflow), and the history's clock
// jumps (here hours either way, with the "after" parameter at its
// extremes) leave it valid.
func TestSnapshotWhileRulesChangeUnderHostileNames(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithLogger(slog.New(slog.DiscardHandler)), core.WithMaxResources(50))
	require.NoError(t, err)
	defer g.Close()
	h, err := dashboard.New(g)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	hostile := []string{"</script><script>alert(1)</script>", `"},{"name":"x`, "line\u2028sep\u2029", "bad\xff", "<!--", "\x00nul"}
	ruleSets := [][]core.Rule{
		{{Name: "a", Resource: "*", Kind: core.KindFlow, Limit: 100}, {Name: "b", Resource: hostile[0], Kind: core.KindConcurrency, Limit: 1}},
		{{Name: "a2", Resource: "*", Kind: core.KindConcurrency, Limit: 100}, {Name: "b", Resource: hostile[1], Kind: core.KindBreaker, Strategy: "error-count", Threshold: 1, MinRequests: 1}},
		{},
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 300 {
			assert.NoError(t, g.SetRules(ruleSets[i%len(ruleSets)]))
		}
	})
	wg.Go(func() {
		for i := range 600 {
			name := hostile[i%len(hostile)] + fmt.Sprint(i%80)
			if e, err := g.Enter(context.Background(), name); err == nil {
				e.Exit(fmt.Errorf("x"))
			}
			if i%100 == 0 {
				fc.Advance(time.Second)
			}
		}
	})
	get := func(query string) {
		res, err := http.Get(srv.URL + "/api/snapshot" + query)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
		assert.False(t, strings.ContainsAny(string(body), "<>\u2028\u2029"), "raw markup or line separators")
		var s struct {
			Resources []struct{ Name string } `json:"resources"`
		}
		require.NoError(t, json.Unmarshal(body, &s))
		assert.LessOrEqual(t, len(s.Resources), 51)
	}
	for i := range 60 {
		get("")
		if i == 30 {
			fc.Advance(5 * time.Hour)
		}
	}
	wg.Wait()
	fc.Advance(-10 * time.Hour)
	for _, q := range []string{"", "?after=-9223372036854775808", "?after=9223372036854775807", "?after=0"} {
		get(q)
	}
}
