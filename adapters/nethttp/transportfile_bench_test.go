//go:build unix

package sluicehttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// BenchmarkTransportFileUpload uploads a 4 MiB file over loopback HTTP,
// through net/http's Transport ("bare") and through NewTransport over it
// ("sluice"), and reports the process's CPU time per upload (client and
// server: cpu-ns/op) and its allocations. net/http sends a file with
// sendfile when it can see it; the difference is what NewTransport's body
// wrapper costs.
//
//	go test -run '^$' -bench TransportFileUpload -benchmem -count 5 ./adapters/nethttp
func BenchmarkTransportFileUpload(b *testing.B) {
	const size = 4 << 20
	path := filepath.Join(b.TempDir(), "upload")
	if err := os.WriteFile(path, make([]byte, size), 0o600); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	b.Cleanup(srv.Close)
	g, err := core.New(core.WithRules(core.Rule{Name: "upstream", Resource: "* 127.0.0.1", Kind: core.KindFlow, Limit: 1_000_000_000}))
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"bare", "sluice"} {
		b.Run(name, func(b *testing.B) {
			base := &http.Transport{}
			b.Cleanup(base.CloseIdleConnections)
			var rt http.RoundTripper = base
			if name == "sluice" {
				if rt, err = sluicehttp.NewTransport(g, base); err != nil {
					b.Fatal(err)
				}
			}
			c := &http.Client{Transport: rt}
			b.SetBytes(size)
			b.ReportAllocs()
			start := processCPU()
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				req, err := http.NewRequest(http.MethodPut, srv.URL+"/upload", f) // closes f
				if err != nil {
					b.Fatal(err)
				}
				req.ContentLength = size
				res, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU returns the CPU time the process has used so far, every
// thread's, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
