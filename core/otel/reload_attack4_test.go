package sluiceotel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
)

// TestExportersAgreeAcrossReloadAndHostileNames: one Prometheus handler
// and one OpenTelemetry meter provider, scraped before and after a reload
// that renames a rule, changes another's kind and removes a third, over
// resources whose names carry quotes, backslashes, newlines, braces, a
// 600-byte run and invalid UTF-8, beyond the Guard's resource bound. Both
// exporters expose the same series with the same values each time; after
// the reload neither keeps a series of the rules that went (a cumulative
// OpenTelemetry reader could keep the last point of an attribute set no
// longer observed), and the resources are those of the bound, the rules'
// own (GET /a, GET /b, made by New beyond the bound) and (overflow),
// however many names were sent.
func TestExportersAgreeAcrossReloadAndHostileNames(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), quiet, core.WithMaxResources(8), core.WithRules(
		core.Rule{Name: "old-name", Resource: "*", Kind: core.KindFlow, Limit: 40, Window: time.Hour},
		core.Rule{Name: "becomes-concurrency", Resource: "GET /a", Kind: core.KindFlow, Limit: 5, Window: time.Hour},
		core.Rule{Name: "removed", Resource: "GET /b", Kind: core.KindConcurrency, Limit: 5},
	))
	require.NoError(t, err)
	defer g.Close()
	ph, err := sluiceprom.Handler(g)
	require.NoError(t, err)
	oh := otelHandler(t, g)

	hostile := []string{"GET /a", "GET /b", "q\"uote", `back\slash`, "new\nline", "br{ace}=\"x\"", strings.Repeat("é", 300), "bad\xff\xfe", "bad\xff\xfd"}
	for i := range 50 {
		hostile = append(hostile, fmt.Sprintf("flood %d", i))
	}
	for _, r := range hostile {
		if e, err := g.Enter(context.Background(), r); err == nil {
			fc.Advance(time.Millisecond)
			e.Exit(nil)
		}
	}
	check := func(stage string, gone ...string) {
		t.Helper()
		prom, otel := series(t, scrapeText(t, ph)), series(t, scrapeText(t, oh))
		require.NotEmpty(t, prom)
		for k, v := range prom {
			assert.Equal(t, v, otel[k], "%s: %s", stage, k)
		}
		for k := range otel {
			assert.Contains(t, prom, k, "%s: only OpenTelemetry has it", stage)
		}
		resources := map[string]bool{}
		for k := range prom {
			for _, name := range gone {
				assert.NotContains(t, k, `"`+name+`"`, "%s: %s", stage, k)
			}
			if strings.HasPrefix(k, "sluice_active_requests{") {
				resources[k] = true
			}
		}
		assert.Len(t, resources, 11, "%s: 8 resources, GET /a, GET /b and (overflow)", stage)
	}
	check("before")
	for _, name := range []string{"old-name", "removed"} {
		assert.Contains(t, scrapeText(t, oh), `sluice_rule_name="`+name+`"`)
	}
	require.NoError(t, g.SetRules([]core.Rule{
		{Name: "new-name", Resource: "*", Kind: core.KindFlow, Limit: 40, Window: time.Hour},
		{Name: "becomes-concurrency", Resource: "GET /a", Kind: core.KindConcurrency, Limit: 5},
	}))
	for _, r := range hostile[:3] {
		if e, err := g.Enter(context.Background(), r); err == nil {
			e.Exit(nil)
		}
	}
	check("after", "old-name", "removed", "flow\",sluice_rule_name=\"becomes-concurrency")
}
