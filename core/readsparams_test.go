package core_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// TestReadsParams checks that ReadsParams tells the resources a rule reads
// params for (a hotspot rule's param, an adaptive rule's priority param)
// from the others, under the rules in force, resources beyond the bound
// included.
func TestReadsParams(t *testing.T) {
	perUser := core.Rule{Name: "per-user", Resource: "GET /a", Kind: core.KindHotspot, Param: "header:X-User", Limit: 10, Window: time.Second}
	byLevel := core.Rule{Name: "by-level", Resource: "GET /b", Kind: core.KindAdaptive, Priority: "header:X-Priority"}
	rate := core.Rule{Name: "rate", Resource: "GET /*", Kind: core.KindFlow, Limit: 10, Window: time.Second}
	g, err := core.New(core.WithRules(perUser, byLevel, rate), core.WithMaxResources(3))
	require.NoError(t, err)
	defer g.Close()
	for _, c := range []struct {
		resource string
		want     bool
	}{{"GET /a", true}, {"GET /b", true}, {"GET /c", false}, {"other", false}, {"GET /a", true}} {
		assert.Equal(t, c.want, g.ReadsParams(c.resource), c.resource)
	}
	// "GET /d" is beyond the bound of 3 resources: its rules are still told.
	assert.False(t, g.ReadsParams("GET /d"))
	require.NoError(t, g.SetRules([]core.Rule{rate, {Name: "per-user", Resource: "GET /*", Kind: core.KindHotspot, Param: "header:X-User", Limit: 10, Window: time.Second}}))
	for _, r := range []string{"GET /a", "GET /b", "GET /c", "GET /d"} {
		assert.True(t, g.ReadsParams(r), r)
	}
	assert.False(t, g.ReadsParams("other"))
	require.NoError(t, g.SetRules([]core.Rule{rate}))
	assert.False(t, g.ReadsParams("GET /a"))
}
