package sluicehttp_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// fakeCPU is a core.SystemSource whose CPU usage a test sets.
type fakeCPU struct {
	mu  sync.Mutex
	cpu float64
}

func (f *fakeCPU) CPU() (float64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cpu, nil
}

func (f *fakeCPU) Load() (float64, error) { return 0, nil }

func (f *fakeCPU) set(v float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cpu = v
}

// TestSystemRuleOverLoopback: a system rule on CPU usage sheds every
// request with 503, Retry-After and the overload problem type while the
// (fake) CPU is above its threshold, admits them when it is below, and
// near the threshold lets critical requests through where it sheds
// sheddable ones (the header X-Priority).
func TestSystemRuleOverLoopback(t *testing.T) {
	src := &fakeCPU{cpu: 0.95}
	rule := core.Rule{Name: "cpu", Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.8, Priority: "header:X-Priority"}
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)), core.WithSystemSource(src), core.WithRules(rule))
	require.NoError(t, err)
	defer g.Close()
	mux := http.NewServeMux()
	sluicehttp.Handle(g, mux, "GET /work", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	srv := serve(t, sluicehttp.Middleware(g)(mux))
	get := func(level string) (*http.Response, []byte) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/work", nil)
		require.NoError(t, err)
		if level != "" {
			req.Header.Set("X-Priority", level)
		}
		res, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res, body
	}
	// The Guard reads the source when the rule is set, and every half
	// second after; setting the rules again reads it at once.
	sample := func(cpu float64) {
		src.set(cpu)
		require.NoError(t, g.SetRules([]core.Rule{rule}))
	}

	res, body := get("")
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "%s", body)
	assert.Equal(t, "1", res.Header.Get("Retry-After"), "the next sample, in whole seconds")
	assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
	assert.Empty(t, res.Header.Get("RateLimit-Policy"), "a system rule is no quota")
	assert.Empty(t, res.Header.Get("RateLimit"))
	var p struct {
		Type, Rule, Kind, Detail string
		RetryAfter               int
	}
	require.NoError(t, json.Unmarshal(body, &p), "%s", body)
	assert.Equal(t, "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity", p.Type)
	assert.Equal(t, "cpu", p.Rule)
	assert.Equal(t, "system", p.Kind)
	assert.Equal(t, 1, p.RetryAfter)
	assert.Equal(t, `GET /work is overloaded: system rule "cpu" sheds requests; retry in 1s`, p.Detail)

	sample(0.3)
	res, body = get("")
	assert.Equal(t, http.StatusOK, res.StatusCode, "%s", body)

	// 0.75: under the threshold, over 90% of it.
	sample(0.75)
	res, _ = get("critical")
	assert.Equal(t, http.StatusOK, res.StatusCode, "critical passes under the threshold")
	res, _ = get("sheddable")
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "sheddable is shed above 90% of it while critical requests come")
	res, _ = get("critical")
	assert.Equal(t, http.StatusOK, res.StatusCode)

	snap := g.Snapshot()
	var blocked int64
	for _, r := range snap.Resources {
		blocked += r.Total.BlockedBy[string(core.KindSystem)]
	}
	assert.Equal(t, int64(2), blocked, "counted under their own reason")
}
