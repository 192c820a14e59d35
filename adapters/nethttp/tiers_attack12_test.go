package sluicehttp_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestRateLimitFieldsOfManyTiersAllocateNothing attacks "the RateLimit
// fields add none per response: the RateLimit-Policy text is made once per
// rule and rule set" (package doc, Cost) with a per-tenant rule whose
// overrides give 64 tiers limits of their own, tenants of every tier
// calling in turn. Before, the texts were cached by rule name alone: past
// the first few tiers each response made its rule's texts again and copied
// the cache's map under a lock (5 to 8 allocations more per request, about
// three times the time), whatever the number of rules.
func TestRateLimitFieldsOfManyTiersAllocateNothing(t *testing.T) {
	if adaptertest.RaceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	allocs := func(tiers int) float64 {
		overrides := map[string]int64{}
		for i := range tiers {
			overrides[fmt.Sprintf("tenant-%d", i)] = int64(1_000_000 + i)
		}
		rules := []core.Rule{{Name: "per-tenant", Resource: "GET /items", Kind: core.KindHotspot,
			Param: "header:X-Tenant", Limit: 1_000_000, Overrides: overrides}}
		for i := range 50 {
			rules = append(rules, core.Rule{Name: fmt.Sprintf("other-%d", i), Resource: fmt.Sprintf("GET /other/%d", i), Kind: core.KindFlow, Limit: 10})
		}
		g, err := core.New(core.WithClock(clock.NewFake(0)), core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(rules...))
		require.NoError(t, err)
		defer g.Close()
		mux := http.NewServeMux()
		mux.HandleFunc("GET /items", func(http.ResponseWriter, *http.Request) {})
		h := sluicehttp.Middleware(g)(mux)
		reqs := make([]*http.Request, tiers)
		for i := range reqs {
			reqs[i] = httptest.NewRequest(http.MethodGet, "/items", nil)
			reqs[i].Header.Set("X-Tenant", fmt.Sprintf("tenant-%d", i))
		}
		w, i := httptest.NewRecorder(), 0
		n := testing.AllocsPerRun(20*tiers, func() {
			r := reqs[i%tiers]
			i++
			r.Pattern = ""
			h.ServeHTTP(w, r)
		})
		require.Equal(t, http.StatusOK, w.Code)
		require.Contains(t, w.Header().Get("RateLimit-Policy"), `"per-tenant";q=100000`)
		return n
	}
	one := allocs(1)
	for _, tiers := range []int{16, 64} {
		assert.Equal(t, one, allocs(tiers), "allocations per request with %d tiers", tiers)
	}
}
