package sluicehttp_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// TestHotspotOnMissing serves a hotspot rule on header:X-User-ID over
// loopback: with onMissing reject a request without the header gets 403
// and no retry hint; with shared the requests without it share one limit,
// apart from each user's.
func TestHotspotOnMissing(t *testing.T) {
	serveRule := func(m core.OnMissing) (*core.Guard, func(header ...string) *http.Response) {
		g := newGuard(t, core.Rule{Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot,
			Param: "header:X-User-ID", Limit: 2, OnMissing: m})
		mux := http.NewServeMux()
		mux.HandleFunc("GET /items/{id}", ok)
		srv := serve(t, sluicehttp.Middleware(g)(mux))
		return g, func(header ...string) *http.Response { return get(t, srv, "/items/1", header...) }
	}

	t.Run("reject", func(t *testing.T) {
		g, do := serveRule(core.MissingReject)
		for range 3 {
			res := do()
			assert.Equal(t, http.StatusForbidden, res.StatusCode, "a request without the header will never pass")
			assert.Empty(t, res.Header.Get("Retry-After"))
		}
		assert.Equal(t, http.StatusOK, do("X-User-ID", "alice").StatusCode)
		s := g.Snapshot()
		require.Len(t, s.Rules, 1)
		assert.Equal(t, int64(3), s.Rules[0].BlockedTotal, "each counts as a block of the rule")
	})

	t.Run("shared", func(t *testing.T) {
		_, do := serveRule(core.MissingShared)
		var codes []int
		for range 3 {
			codes = append(codes, do().StatusCode)
		}
		assert.Equal(t, []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests}, codes, "header-less requests share one limit of 2")
		assert.NotEmpty(t, do().Header.Get("Retry-After"))
		assert.Equal(t, http.StatusOK, do("X-User-ID", "alice").StatusCode, "a user has a limit of their own")
	})

	t.Run("skip", func(t *testing.T) {
		_, do := serveRule("")
		for range 5 {
			assert.Equal(t, http.StatusOK, do().StatusCode)
		}
	})
}
