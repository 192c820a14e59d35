package sluicehttp_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestWindowLastAdmittedHintMatchesNextBlock: over a real loopback server,
// the RateLimit t of the 200 that uses up a fixed-window, sliding-log,
// sliding-counter or leap-array rule equals the t and Retry-After of the
// 429 right after it: the seconds until the next request passes. Limits of
// 2 per 10s, the requests at 3s and 7s of the Guard's fake clock (before,
// the 200 said t=10, the whole window, and the 429 the real wait).
func TestWindowLastAdmittedHintMatchesNextBlock(t *testing.T) {
	for _, c := range []struct {
		alg string
		t   string // the t of both
	}{
		{"fixed-window", "3"},    // the window ends at 10s
		{"sliding-log", "6"},     // the request at 3s leaves at 13s
		{"sliding-counter", "8"}, // the next window, 2 in the previous one: 1 fits once half of it passed, at 15s
		{"leap-array", "6"},      // the bucket of 3s leaves at 13s
	} {
		t.Run(c.alg, func(t *testing.T) {
			rule := core.Rule{Name: "api", Kind: core.KindFlow, Resource: "GET /items", Algorithm: core.Algorithm(c.alg), Limit: 2, Window: 10 * time.Second}
			fake := clock.NewFake(0)
			g, err := core.New(core.WithClock(fake), core.WithRules(rule))
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Close() })
			mux := http.NewServeMux()
			mux.HandleFunc(rule.Resource, ok)
			srv := serve(t, sluicehttp.Middleware(g)(mux))
			get := func() *http.Response {
				res, err := srv.Client().Get(srv.URL + "/items")
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				return res
			}
			fake.Set(3 * time.Second)
			res := get()
			require.Equal(t, http.StatusOK, res.StatusCode)
			fake.Set(7 * time.Second)
			res = get()
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, `"api";r=0;t=`+c.t, res.Header.Get("RateLimit"), "the 200 that uses up the limit")
			res = get()
			require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
			assert.Equal(t, `"api";r=0;t=`+c.t, res.Header.Get("RateLimit"), "the 429 right after it")
			assert.Equal(t, c.t, res.Header.Get("Retry-After"))
		})
	}
}
