package sluicehttp_test

import (
	"net/http"
	"testing"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
)

// BenchmarkRateLimitFields measures the middleware on a route with a path
// parameter under adaptertest.BenchGuard's two rate rules, with the
// RateLimit fields on admitted responses ("on", the default) and without
// them ("off"), each on its own, then both in alternating batches
// ("pair", adaptertest.BenchPair: "added-ns/op" is what the fields add):
//
//	go test -run '^$' -bench RateLimitFields -benchmem .
func BenchmarkRateLimitFields(b *testing.B) {
	var hs [2]http.Handler
	for i, name := range []string{"on", "off"} {
		mux := http.NewServeMux()
		for _, rt := range adaptertest.BenchRoutes() {
			mux.HandleFunc(rt.Method+" "+rt.Path, rt.Handler)
		}
		var opts []sluicehttp.Option
		if name == "off" {
			opts = append(opts, sluicehttp.WithRateLimitFields(false))
		}
		hs[i] = sluicehttp.Middleware(adaptertest.BenchGuard(b), opts...)(mux)
		b.Run(name, func(b *testing.B) { adaptertest.BenchServe(b, hs[i], "/items/42") })
	}
	b.Run("pair", func(b *testing.B) { adaptertest.BenchPair(b, hs[0], hs[1], "/items/42") })
}
