package sluiceotel_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
	"github.com/sluicekit/sluice/core/stripe"
)

// TestExportersAgreeOnTheSystemClockUnderAFlood attacks the promise that
// both exporters expose the same series with the same labels and values
// (package doc, "the same names, labels and values whichever exporter")
// where the fake-clock tests cannot: a Guard on the system clock, whose
// response times are sampled (one request in 32 timed, counting 32 times),
// flooded by goroutines on a saturated CPU with thousands of distinct
// resource names and hotspot param values, while both exporters are
// scraped. Once the flood ends, the two scrapes are the same series with
// the same values, histograms included; the resources are those of the
// bound, the rule's own (GET /u, made by New beyond the bound) and
// (overflow), and no param value is a label.
func TestExportersAgreeOnTheSystemClockUnderAFlood(t *testing.T) {
	const maxResources = 16 // windows of an hour: no count changes between the two scrapes
	g, err := core.New(quiet, core.WithMaxResources(maxResources), core.WithRules(
		core.Rule{Name: "per-user", Resource: "GET /u", Kind: core.KindHotspot, Param: "user", Limit: 3, Window: time.Hour},
		core.Rule{Name: "all", Resource: "*", Kind: core.KindFlow, Limit: 1 << 40, Window: time.Hour},
		core.Rule{Name: "inflight", Resource: "GET /*", Kind: core.KindConcurrency, Limit: 1 << 20},
	))
	require.NoError(t, err)
	defer g.Close()
	ph, err := sluiceprom.Handler(g)
	require.NoError(t, err)
	oh := otelHandler(t, g)

	// Busy goroutines saturate the CPUs for the flood's length.
	var stop atomic.Bool
	var busy sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		busy.Go(func() {
			for !stop.Load() {
			}
		})
	}
	var flood sync.WaitGroup
	var sent atomic.Int64
	for w := range 4 {
		flood.Go(func() {
			for i := range 3000 {
				resource := "GET /u"
				if i%2 == 1 {
					resource = fmt.Sprintf("GET /junk/%d/%d\xff\"\n", w, i)
				}
				user := core.WithParams(core.ParamMap{"user": {fmt.Sprintf("user-%d-%d\"}", w, i)}})
				if e, err := g.Enter(context.Background(), resource, user); err == nil {
					e.Exit(nil)
				}
				sent.Add(1)
			}
		})
	}
	for range 5 { // scrapes during the flood never fail
		scrapeText(t, ph)
		scrapeText(t, oh)
	}
	flood.Wait()
	stop.Store(true)
	busy.Wait()
	require.EqualValues(t, 12000, sent.Load())

	prom, otel := series(t, scrapeText(t, ph)), series(t, scrapeText(t, oh))
	assert.Equal(t, prom, otel, "after the flood, the same series and values")
	resources := 0
	for k, v := range prom {
		assert.NotContains(t, k, "user-", "a param value is never a label")
		if strings.HasPrefix(k, "sluice_active_requests{") {
			resources++
		}
		// The histogram counts sampled response times (core.ResourceStats):
		// within 31 requests a CPU of the completed requests.
		if labels, ok := strings.CutPrefix(k, "sluice_request_duration_seconds{"); ok {
			var count, completed int
			_, err := fmt.Sscanf(v, "HISTOGRAM %d", &count)
			require.NoError(t, err, v)
			_, err = fmt.Sscanf(prom["sluice_completed_requests_total{"+labels], "COUNTER %d", &completed)
			require.NoError(t, err, k)
			assert.InDelta(t, completed, count, float64(31*stripe.Count()), "%s: histogram count %d, completed %d", k, count, completed)
		}
	}
	assert.Equal(t, maxResources+2, resources, "the bound's resources, GET /u and (overflow)")
	assert.Contains(t, prom, `sluice_active_requests{sluice_resource="(overflow)"}`)
}
