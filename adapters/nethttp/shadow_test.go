package sluicehttp_test

import (
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// TestShadowRuleOverLoopback: requests a shadow rule would block get 200,
// without its RateLimit fields unless the Guard has WithShadowQuotas; an
// enforced rule's fields are sent as ever.
func TestShadowRuleOverLoopback(t *testing.T) {
	for _, report := range []bool{false, true} {
		opts := []core.Option{core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(
			core.Rule{Name: "trial", Resource: "GET /work", Kind: core.KindFlow, Limit: 1, Window: 3600e9, Shadow: true},
			core.Rule{Name: "enforced", Resource: "GET /work", Kind: core.KindFlow, Limit: 100, Window: 3600e9})}
		if report {
			opts = append(opts, core.WithShadowQuotas())
		}
		g, err := core.New(opts...)
		require.NoError(t, err)
		mux := http.NewServeMux()
		sluicehttp.Handle(g, mux, "GET /work", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "ok")
		}))
		srv := serve(t, sluicehttp.Middleware(g)(mux))
		var policies []string
		for range 3 {
			res, err := srv.Client().Get(srv.URL + "/work")
			require.NoError(t, err)
			_ = res.Body.Close()
			assert.Equal(t, http.StatusOK, res.StatusCode)
			policies = append(policies, res.Header.Get("RateLimit-Policy"))
		}
		if report {
			assert.Equal(t, `"trial";q=1;w=3600, "enforced";q=100;w=3600`, policies[2])
		} else {
			assert.Equal(t, []string{`"enforced";q=100;w=3600`, `"enforced";q=100;w=3600`, `"enforced";q=100;w=3600`}, policies)
		}
		assert.Equal(t, int64(2), g.Snapshot().Rules[0].ShadowedTotal)
		require.NoError(t, g.Close())
	}
}
