package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// sliceSource is a ParamSource of a type that is not comparable.
type sliceSource []string

func (s sliceSource) CheckParam(param string) error {
	for _, p := range s {
		if p == param {
			return nil
		}
	}
	return errors.New("not in sliceSource")
}

func TestParamSources(t *testing.T) {
	perUser := core.Rule{Name: "per-user", Resource: "checkout", Kind: core.KindHotspot, Param: "user", Limit: 1, Window: time.Second}
	perIP := core.Rule{Name: "per-ip", Resource: "checkout", Kind: core.KindHotspot, Param: "ip", Limit: 1, Window: time.Second}

	// Without sources, any well-formed param: the program passes it.
	g, _ := newGuard(t, perUser)
	_, err := g.Enter(context.Background(), "checkout", core.WithParams(core.ParamMap{"user": {"alice"}}))
	require.NoError(t, err)
	_, err = g.Enter(context.Background(), "checkout", core.WithParams(core.ParamMap{"user": {"alice"}}))
	require.Error(t, err, "the rule limits")

	// New refuses a rule no source supplies, naming rule, field and value.
	_, err = core.New(core.WithParamSource(core.CustomParams("tenant")), core.WithRules(perIP, perUser))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `rules[1] (per-user): param "user" is not among the CustomParams "tenant"`)
	_, err = core.New(core.WithParamSource(nil))
	assert.ErrorContains(t, err, "WithParamSource: source is nil")

	// One source supplying the param is enough; the others' reasons are
	// all given when none does.
	g2, err := core.New(core.WithParamSource(core.CustomParams("tenant")), core.WithParamSource(core.CustomParams("user")), core.WithRules(perUser))
	require.NoError(t, err)
	require.NoError(t, g2.Close())
	_, err = core.New(core.WithParamSource(core.CustomParams("a")), core.WithParamSource(sliceSource{"b"}), core.WithRules(perUser))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `param "user" is not among the CustomParams "a"; not in sliceSource`)

	// AddParamSource checks the rules in force and adds nothing when they
	// fail; afterwards SetRules checks every new rule set.
	g, _ = newGuard(t, perUser)
	err = g.AddParamSource(core.CustomParams("tenant"))
	var re *core.RulesError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, []core.Problem{{Index: 0, Name: "per-user", Field: "param", Msg: `"user" is not among the CustomParams "tenant"`}}, re.Problems)
	require.NoError(t, g.SetRules([]core.Rule{perUser}), "the refused source was not added")
	require.NoError(t, g.AddParamSource(sliceSource{"user"}))
	require.NoError(t, g.AddParamSource(sliceSource{"user"}), "a source of a type that is not comparable is added, not compared")
	require.NoError(t, g.AddParamSource(core.CustomParams("user")))
	err = g.SetRules([]core.Rule{perUser, {Name: "per-tenant", Resource: "checkout", Kind: core.KindHotspot, Param: "tenant", Limit: 1}})
	require.ErrorContains(t, err, `rules[1] (per-tenant): param not in sliceSource; "tenant" is not among the CustomParams "user"`)
	assert.Equal(t, "per-user", g.Rules()[0].Name, "the rules in force stay")
	assert.ErrorContains(t, g.AddParamSource(nil), "source is nil")
}

// TestGuardParamSources checks that ParamSources lists the sources given to
// New and added afterwards, in order, without the refused or repeated ones,
// and that changing the list it returns changes nothing in the Guard.
func TestGuardParamSources(t *testing.T) {
	perUser := core.Rule{Name: "per-user", Resource: "checkout", Kind: core.KindHotspot, Param: "user", Limit: 1, Window: time.Second}
	g, _ := newGuard(t, perUser)
	assert.Empty(t, g.ParamSources())
	require.Error(t, g.AddParamSource(core.CustomParams("tenant")), "refused: it does not supply user")
	assert.Empty(t, g.ParamSources())

	users, tenants := core.CustomParams("user"), core.CustomParams("tenant")
	g, err := core.New(core.WithParamSource(users), core.WithRules(perUser))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	require.NoError(t, g.AddParamSource(tenants))
	require.NoError(t, g.AddParamSource(users), "already there")
	got := g.ParamSources()
	require.Equal(t, []core.ParamSource{users, tenants}, got)
	got[0] = nil
	assert.Equal(t, []core.ParamSource{users, tenants}, g.ParamSources(), "a copy")
}
