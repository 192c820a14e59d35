package routecheck_test

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/logtest"
	"github.com/sluicekit/sluice/core/internal/routecheck"
)

// TestOnlyHTTPRulesAreChecked gives rules that match nothing, each on a
// resource in canonical form: only the HTTP ones are logged as matching no
// route.
func TestOnlyHTTPRulesAreChecked(t *testing.T) {
	for _, c := range []struct {
		resource string
		http     bool
	}{
		{"GET /items/{id}", true},
		{"* /items", true},
		{"OTHER /items", true},
		{"/items/{id}", true},        // a template alone: every method
		{"/static/{path...}", true},  // one segment with no '.'
		{"/v1.items/list/all", true}, // three segments: not a gRPC method
		{"/pkg.Service", true},       // one segment: not a gRPC method
		{"/pkg.Service/Method", false},
		{"/pkg.Service/*", false},
		{"checkout", false},
		{"db query", false},
		{"LIST /items", false}, // not a method of resource names
		{"GET items", false},
	} {
		logs := &logtest.Recorder{}
		ch := routecheck.New(slog.New(logs), []string{"GET", "POST", "OTHER"}, 20)
		ch.Add("GET /elsewhere")
		ch.SetRules([]routecheck.Rule{{Index: 0, Name: "r", Resource: c.resource, Match: func(string) bool { return false }}})
		ch.Check()
		if !c.http {
			assert.Empty(t, logs.Records(), "%s is not an HTTP rule", c.resource)
			continue
		}
		require.Len(t, logs.Records(), 1, "%s is an HTTP rule", c.resource)
		assert.Equal(t, slog.LevelWarn, logs.Records()[0].Level)
		assert.Contains(t, logs.Records()[0].Attrs["rules"], "rules[0] (r)", c.resource)
	}
}
