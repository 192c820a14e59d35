package sluiceotel_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
)

// TestScrapesDuringReloadsNeverFail attacks "a scrape never fails" where
// rules change under it: while traffic flows, a goroutine swaps the rules
// between sets that reorder them, change a rule's kind under the same name
// and resource, rename one and remove one, and both exporters are scraped
// over loopback all the while. Every scrape answers 200 with a parseable
// exposition of unique series (a rule seen twice in one scrape would be a
// duplicate series, which the registry refuses with a 500).
func TestScrapesDuringReloadsNeverFail(t *testing.T) {
	sets := [][]core.Rule{
		{
			{Name: "x", Resource: "GET /a", Kind: core.KindFlow, Limit: 1000},
			{Name: "y", Resource: "*", Kind: core.KindConcurrency, Limit: 1000},
			{Name: "b", Resource: "GET /b", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 5, MinRequests: 1},
		},
		{
			{Name: "y", Resource: "*", Kind: core.KindConcurrency, Limit: 500},
			{Name: "x", Resource: "GET /a", Kind: core.KindConcurrency, Limit: 1000},
		},
		{
			{Name: "x2", Resource: "GET /a", Kind: core.KindFlow, Limit: 1000},
			{Name: "y", Resource: "*", Kind: core.KindFlow, Limit: 1000, Shadow: true},
			{Name: "b", Resource: "GET /b", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 5, MinRequests: 1},
		},
	}
	g, err := core.New(quiet, core.WithRules(sets[0]...))
	require.NoError(t, err)
	defer g.Close()
	ph, err := sluiceprom.Handler(g)
	require.NoError(t, err)
	servers := map[string]*httptest.Server{
		"prometheus":    httptest.NewServer(ph),
		"opentelemetry": httptest.NewServer(otelHandler(t, g)),
	}
	for _, s := range servers {
		defer s.Close()
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // reloads
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			assert.NoError(t, g.SetRules(sets[i%len(sets)]))
			time.Sleep(time.Millisecond)
		}
	})
	for _, r := range []string{"GET /a", "GET /b", "GET /c"} {
		wg.Go(func() { // traffic
			for {
				select {
				case <-stop:
					return
				default:
				}
				if e, err := g.Enter(context.Background(), r); err == nil {
					e.Exit(nil)
				}
			}
		})
	}
	for i := range 20 {
		for name, s := range servers {
			req, err := http.NewRequest(http.MethodGet, s.URL, nil)
			require.NoError(t, err)
			req.Header.Set("Accept", "text/plain;version=0.0.4")
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body := new(bytes.Buffer)
			_, err = body.ReadFrom(res.Body)
			require.NoError(t, err)
			require.NoError(t, res.Body.Close())
			require.Equal(t, http.StatusOK, res.StatusCode, "%s scrape %d: %s", name, i, body)
			require.NotEmpty(t, series(t, body.String()), "%s scrape %d", name, i) // parses; no series twice
		}
	}
	close(stop)
	wg.Wait()
}
