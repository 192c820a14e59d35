//go:build !race

package sluiceenvoy_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
)

// heapPerLimit returns the heap a Server and its Guard take per limit of a
// config of n exact-named limits (flow rules) that no request asked yet.
func heapPerLimit(t *testing.T, n int) float64 {
	var b strings.Builder
	b.WriteString("domain: edge\ndescriptors:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - key: tenant\n    value: t%d\n    rate_limit: {unit: minute, requests_per_unit: 100}\n", i)
	}
	d, err := sluiceenvoy.ParseDomain("edge.yaml", []byte(b.String()))
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g, err := core.New()
	require.NoError(t, err)
	s, err := sluiceenvoy.New(g, sluiceenvoy.Config{Domains: []sluiceenvoy.Domain{d}})
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	require.NoError(t, g.Close())
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}

// TestMemoryPerLimit: a limit that no request asked yet takes under 4 kB of
// heap whatever the CPUs: 10,000 on 16 CPUs take about 28 MB (1.9 kB a
// limit on 1 CPU, 2.8 kB on 16). Its resource's and its rule's statistics
// stripes, one per CPU, are made at its first request. Before, they were
// made when the rules were set: 2.6 kB on 1 CPU, 14.4 kB on 16 (144 MB).
// Not parallel: it reads the heap of the process.
//
//	go test -run TestMemoryPerLimit -v .
func TestMemoryPerLimit(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, cpus := range []int{1, 2, 4, 16} {
		runtime.GOMAXPROCS(cpus)
		per := heapPerLimit(t, 10_000)
		t.Logf("GOMAXPROCS %d: %.0f bytes per limit (10,000 limits)", cpus, per)
		assert.Less(t, per, 4000.0, "GOMAXPROCS %d", cpus)
	}
}
