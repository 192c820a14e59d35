package sluiceenvoy_test

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
)

// TestBreakerRulesRefused: a breaker rule in a domain of sluice rules
// could never open: each ShouldRateLimit call exits at once with no
// outcome, a success for the breaker, whatever the service behind Envoy
// does. A rule that cannot apply is refused loudly, by New and by
// SetConfig (a reload), naming the rule and its kind; the config in force
// stays. Before, it was accepted, and silently did nothing.
func TestBreakerRulesRefused(t *testing.T) {
	b := core.Rule{Name: "api-breaker", Resource: "api/*", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 1, MinRequests: 1}
	flow := core.Rule{Name: "api", Resource: "api/*", Kind: core.KindFlow, Limit: 10}
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	defer g.Close()
	_, err = sluiceenvoy.New(g, sluiceenvoy.Config{Rules: []core.Rule{b}})
	require.ErrorContains(t, err, `rule "api-breaker": kind breaker`)

	s, err := sluiceenvoy.New(g, sluiceenvoy.Config{Rules: []core.Rule{flow}})
	require.NoError(t, err)
	require.ErrorContains(t, s.SetConfig(sluiceenvoy.Config{Rules: []core.Rule{flow, b}}), `rule "api-breaker": kind breaker`)
	assert.Len(t, g.Rules(), 1, "the config in force stays")
}
