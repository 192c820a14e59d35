package sluicehttp_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// TestAdaptiveRuleShedsOverLoopback: a request over an adaptive rule's
// limit (held at 2 here) is shed with 503, Retry-After and the overload
// problem type, and counted as blocked by the adaptive rule. How the rule
// finds its limit is simulated on the fake clock in core; over loopback,
// against real time, BenchmarkAdaptiveRuleFindsALimitOverLoopback
// measures it.
func TestAdaptiveRuleShedsOverLoopback(t *testing.T) {
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(core.Rule{Name: "api-adaptive", Resource: "GET /work", Kind: core.KindAdaptive, MinLimit: 2, MaxLimit: 2}))
	require.NoError(t, err)
	defer g.Close()
	entered, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	sluicehttp.Handle(g, mux, "GET /work", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		_, _ = io.WriteString(w, "ok")
	}))
	srv := serve(t, sluicehttp.Middleware(g)(mux))
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			res, err := srv.Client().Get(srv.URL + "/work")
			if assert.NoError(t, err) {
				assert.Equal(t, http.StatusOK, res.StatusCode)
				res.Body.Close()
			}
		})
		<-entered
	}
	res, err := srv.Client().Get(srv.URL + "/work")
	close(release)
	wg.Wait()
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.Equal(t, "1", res.Header.Get("Retry-After"))
	assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
	var p struct{ Type, Rule string }
	require.NoError(t, json.Unmarshal(b, &p), "%s", b)
	assert.Equal(t, "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity", p.Type)
	assert.Equal(t, "api-adaptive", p.Rule)
	assert.Equal(t, int64(1), g.Snapshot().Resources[0].Total.BlockedBy[string(core.KindAdaptive)])
}

// BenchmarkAdaptiveRuleFindsALimitOverLoopback serves a handler whose latency
// (10ms) grows with the requests in flight beyond 40 (a backend of
// capacity 40) to 150 clients at once, which wait 50ms after a 503, under
// an adaptive rule with no capacity given: the rule raises its limit above
// its initial 20 towards the backend's capacity, far below the clients'
// concurrency, and sheds the rest with 503, Retry-After and the overload
// problem type. The load runs until that happened or a budget of requests
// is spent. A benchmark, not a test: it measures a controller against real
// time, which a busy machine changes (go test -run x -bench Adaptive
// -benchtime 1x).
//
// The controller reads the CPU's own delay as the backend's: with a 2ms
// backend and clients retrying at once, the test's own requests filled
// the CPU under -race, and beside two busy loops the limit fell to 4. A
// backend five times slower, and clients that back off, leave that delay a
// small part of the response time.
func BenchmarkAdaptiveRuleFindsALimitOverLoopback(b *testing.B) {
	for b.Loop() {
		findLimit(b)
	}
}

// findLimit is one run of BenchmarkAdaptiveRuleFindsALimitOverLoopback.
func findLimit(b *testing.B) {
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(core.Rule{Name: "api-adaptive", Resource: "GET /work", Kind: core.KindAdaptive, MaxLimit: 200}))
	require.NoError(b, err)
	defer g.Close()
	var inFlight atomic.Int64
	mux := http.NewServeMux()
	sluicehttp.Handle(g, mux, "GET /work", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		time.Sleep(time.Millisecond * time.Duration(max(n, 40)) / 4)
		_, _ = io.WriteString(w, "ok")
	}))
	srv := httptest.NewServer(sluicehttp.Middleware(g)(mux))
	defer srv.Close()
	limit := func() int64 { return g.Snapshot().Rules[0].Adaptive.Limit }

	const clients, budget = 150, 50_000
	var spent, shed, reached atomic.Int64
	var stop atomic.Bool
	var first sync.Once
	var blocked *http.Response
	var body []byte
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() && spent.Add(1) <= budget {
				res, err := srv.Client().Get(srv.URL + "/work")
				if err != nil {
					b.Error(err)
					return
				}
				rb, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusServiceUnavailable {
					first.Do(func() { blocked, body = res, rb })
					if l := limit(); shed.Add(1) >= 200 && l > 20 && l <= 100 {
						// The limit found; the controller goes on moving
						// (and probing) afterwards, so keep this value.
						reached.CompareAndSwap(0, l)
						stop.Store(true)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	found := reached.Load()
	if found == 0 {
		found = limit() // the budget ran out first: report where it is
	}
	b.Logf("%d requests, %d shed, limit %d", min(spent.Load(), budget), shed.Load(), found)
	b.ReportMetric(float64(found), "limit")
	assert.Greater(b, found, int64(20), "the rule raised its limit from its initial 20 towards the backend's capacity")
	assert.LessOrEqual(b, found, int64(100), "and kept it far below the clients' concurrency")
	require.NotNil(b, blocked, "some requests were shed")
	assert.Equal(b, "1", blocked.Header.Get("Retry-After"))
	assert.Equal(b, "application/problem+json", blocked.Header.Get("Content-Type"))
	var p struct{ Type, Rule string }
	require.NoError(b, json.Unmarshal(body, &p), "%s", body)
	assert.Equal(b, "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity", p.Type)
	assert.Equal(b, "api-adaptive", p.Rule)
	snap := g.Snapshot()
	assert.Equal(b, shed.Load(), snap.Resources[0].Total.BlockedBy[string(core.KindAdaptive)])
}
