package sluicehttp_test

import (
	"net/http"
	"testing"

	"github.com/sluicekit/sluice/adapters/internal/adaptertest"
	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
)

// BenchmarkRateLimitFields measures the middleware on a route with a path
// parameter under adaptertest.BenchGuard's two rate rules, with the
// RateLimit fields on admitted responses ("on", the default) and without
// them ("off"):
//
//	go test -run '^$' -bench RateLimitFields -benchmem .
func BenchmarkRateLimitFields(b *testing.B) {
	for _, off := range []bool{false, true} {
		mux := http.NewServeMux()
		for _, rt := range adaptertest.BenchRoutes() {
			mux.HandleFunc(rt.Method+" "+rt.Path, rt.Handler)
		}
		var opts []sluicehttp.Option
		name := "on"
		if off {
			opts, name = append(opts, sluicehttp.WithRateLimitFields(false)), "off"
		}
		h := sluicehttp.Middleware(adaptertest.BenchGuard(b), opts...)(mux)
		b.Run(name, func(b *testing.B) { adaptertest.BenchServe(b, h, "/items/42") })
	}
}
