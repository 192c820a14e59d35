package sluicehttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

func TestRoutesCheckedAgainstRules(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	t.Run("Middleware", func(t *testing.T) {
		adaptertest.RouteCheck(t, func(t *testing.T, g *core.Guard) string {
			mux := http.NewServeMux()
			sluicehttp.Handle(g, mux, "GET /items/{id}", ok)
			sluicehttp.Handle(g, mux, "/files/{path...}", ok)
			srv := httptest.NewServer(sluicehttp.Middleware(g)(mux))
			t.Cleanup(srv.Close)
			return srv.URL
		})
	})
	t.Run("Wrap", func(t *testing.T) {
		adaptertest.RouteCheck(t, func(t *testing.T, g *core.Guard) string {
			mux := http.NewServeMux()
			sluicehttp.Handle(g, mux, "GET example.com/items/{id}", sluicehttp.Wrap(g, ok))
			sluicehttp.Handle(g, mux, "/files/{path...}", sluicehttp.Wrap(g, ok))
			mux.Handle("GET /items/{id}", sluicehttp.Wrap(g, ok)) // the test's requests have another host
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			return srv.URL
		})
	})
	assert.PanicsWithValue(t, "sluicehttp: Handle: nil *core.Guard (make one with core.New)", func() {
		sluicehttp.Handle(nil, http.NewServeMux(), "/", ok)
	})
}
