package sluicegrpc_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sluicenethttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// budgetKind is a kind of rule defined outside sluice: a budget of limit
// requests per window, spent by every client together, enforced by a flow
// rule of algorithm fixed-window, whose blocks say the service's budget is
// spent: 503 and a problem type of its own over HTTP, Unavailable and
// reason BUDGET_SPENT over gRPC.
func budgetKind() core.KindDef {
	return core.KindDef{
		Kind: "budget", Doc: "requests per window, all clients together",
		Fields: []string{"limit", "window"},
		Check: func(r core.Rule) []core.Problem {
			var ps []core.Problem
			if r.Limit < 1 {
				ps = append(ps, core.Problem{Field: "limit", Msg: fmt.Sprintf("must be >= 1, got %d", r.Limit)})
			}
			if r.Window < time.Second {
				ps = append(ps, core.Problem{Field: "window", Msg: fmt.Sprintf("must be >= 1s, got %s", r.Window)})
			}
			return ps
		},
		Enforce: func(r core.Rule) core.Rule {
			return core.Rule{Kind: core.KindFlow, Algorithm: core.AlgorithmFixedWindow, Limit: r.Limit, Window: r.Window}
		},
		Block: core.BlockClass{Status: http.StatusServiceUnavailable, Problem: "https://example.com/problems/budget-spent",
			Title: "Budget Spent", GRPCCode: uint32(codes.Unavailable), Reason: "BUDGET_SPENT", Quota: true},
	}
}

// writeRules writes a rules file of text and returns its path.
func writeRules(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// TestNewKind defines a kind in this file and registers it with
// core.WithKind: a rules file naming it is parsed and validated, the rule
// is enforced through the net/http and gRPC adapters with the kind's status
// and reason, shown in Snapshot, and a rule with a wrong field is refused
// with the rule, line, field, value and what is allowed.
func TestNewKind(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	path := writeRules(t, "rules:\n  - name: daily\n    resource: \"*\"\n    kind: budget\n    limit: 2\n    window: 1m\n")
	g, err := rulesfile.NewGuard(path, core.WithKind(budgetKind()), core.WithClock(fc))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	require.Len(t, g.Rules(), 1)
	assert.Equal(t, core.Kind("budget"), g.Rules()[0].Kind)

	srv := httptest.NewServer(sluicenethttp.Middleware(g)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("hello"))
	})))
	t.Cleanup(srv.Close)
	get := func() *http.Response {
		resp, err := http.Get(srv.URL + "/hello")
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	for i := range 2 {
		assert.Equal(t, http.StatusOK, get().StatusCode, "request %d", i)
	}
	resp := get()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
	var problem struct {
		Type, Title, Rule string
		Status            int
		Limit             int64
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&problem))
	assert.Equal(t, "https://example.com/problems/budget-spent", problem.Type)
	assert.Equal(t, "Budget Spent", problem.Title)
	assert.Equal(t, "daily", problem.Rule)
	assert.Equal(t, http.StatusServiceUnavailable, problem.Status)
	assert.EqualValues(t, 2, problem.Limit)

	// The rule matches every resource with one budget: spent over HTTP, it
	// blocks the first gRPC call.
	_, c, _ := serve(t, guarded(g)...)
	err = hello(ctxT(t), c, "alice")
	st, ok := status.FromError(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, codes.Unavailable, st.Code())
	var info *errdetails.ErrorInfo
	for _, d := range st.Details() {
		if x, ok := d.(*errdetails.ErrorInfo); ok {
			info = x
		}
	}
	require.NotNil(t, info)
	assert.Equal(t, "BUDGET_SPENT", info.GetReason())
	assert.Equal(t, map[string]string{"rule": "daily", "resource": sayHello, "kind": "budget", "limit": "2"}, info.GetMetadata())

	snap := g.Snapshot()
	require.Len(t, snap.Rules, 1)
	assert.Equal(t, core.Kind("budget"), snap.Rules[0].Rule.Kind)
	assert.EqualValues(t, 2, snap.Rules[0].BlockedTotal, "one HTTP request, one gRPC call")
	assert.EqualValues(t, 2, snap.Rules[0].Limit)
	require.Len(t, snap.Resources, 2)
	for _, res := range snap.Resources {
		assert.Equal(t, map[string]int64{"flow": 1}, res.Total.BlockedBy, "%s: counted under the enforcing rule's kind", res.Resource)
	}

	fc.Advance(time.Minute)
	assert.Equal(t, http.StatusOK, get().StatusCode, "a new window, a new budget")

	// Wrong fields, in the file and in the Guard's rules.
	bad := writeRules(t, "rules:\n  - name: daily\n    resource: \"*\"\n    kind: budget\n    limit: 0\n    window: 1m\n    burst: 5\n")
	_, err = rulesfile.NewGuard(bad, core.WithKind(budgetKind()))
	require.Error(t, err)
	assert.Equal(t, "rules file "+bad+": rules[0] (daily): line 5: limit must be >= 1, got 0\n"+
		"rules[0] (daily): line 7: burst does not apply to kind budget (only to kinds flow and hotspot)", err.Error())
	err = g.SetRules([]core.Rule{{Name: "daily", Resource: "*", Kind: "budget", Limit: 2, Window: time.Millisecond}})
	assert.EqualError(t, err, "rules[0] (daily): window must be >= 1s, got 1ms")
	_, err = rulesfile.NewGuard(path)
	assert.ErrorContains(t, err, `kind must be flow, concurrency, hotspot, breaker, adaptive or system, got "budget"`,
		"a Guard without the kind refuses it")
}
