package sluiceprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
)

// TestRuleCountersNeverGoDownWhenAReloadChangesOnlyTheParam: a rule's
// series are labelled by its name, kind and resource, and such a rule
// keeps its counts across a reload (the docs say so). An operator moves a
// per-user hotspot rule from header:X-User to header:X-Tenant, keeping its
// name: its blocked and evaluated counters must not go down under the same
// labels (Prometheus reads a decrease as a restart of the process;
// OpenTelemetry's cumulative points keep their start time).
func TestRuleCountersNeverGoDownWhenAReloadChangesOnlyTheParam(t *testing.T) {
	rule := core.Rule{Name: "per-user", Resource: "GET /a", Kind: core.KindHotspot, Param: "header:X-User", Limit: 1, Window: time.Hour}
	g, err := core.New(quiet, core.WithClock(clock.NewFake(time.Hour)), core.WithRules(rule))
	require.NoError(t, err)
	defer g.Close()
	c, err := sluiceprom.NewCollector(g)
	require.NoError(t, err)
	url := serve(t, c)
	for range 5 {
		if e, err := g.Enter(context.Background(), "GET /a", core.WithParams(core.ParamMap{"header:X-User": {"u"}})); err == nil {
			e.Exit(nil)
		}
	}
	labels := []string{"sluice_rule_name", "per-user", "sluice_rule_kind", "hotspot", "sluice_rule_resource", "GET /a"}
	fams := scrape(t, url)
	must(t, fams, 4, "sluice_rule_blocked_total", labels...)
	must(t, fams, 5, "sluice_rule_evaluated_total", labels...)

	rule.Param = "header:X-Tenant"
	require.NoError(t, g.SetRules([]core.Rule{rule}))
	fams = scrape(t, url)
	blocked, _ := value(fams, "sluice_rule_blocked_total", labels...)
	evaluated, _ := value(fams, "sluice_rule_evaluated_total", labels...)
	assert.GreaterOrEqual(t, blocked, 4.0, "rule_blocked_total went down")
	assert.GreaterOrEqual(t, evaluated, 5.0, "rule_evaluated_total went down")

	// The new param limits afresh: its values have counts of their own.
	e, err := g.Enter(context.Background(), "GET /a", core.WithParams(core.ParamMap{"header:X-Tenant": {"u"}}))
	require.NoError(t, err, "a value of the new param")
	e.Exit(nil)
}
