package sluiceenvoy_test

import (
	"log/slog"
	"testing"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
)

// FuzzParseDomain feeds any bytes to ParseDomain, and what it takes to New:
// neither may panic or hang, and a file New refuses leaves the Guard's
// rules as they were.
func FuzzParseDomain(f *testing.F) {
	for _, s := range []string{
		"domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}",
		"domain: d\ndescriptors:\n  - key: k\n    value: v\n    descriptors:\n      - key: u\n        rate_limit: {unit: minute, requests_per_unit: 5, sluice: {algorithm: sliding-log}}",
		"domain: d\ndescriptors:\n  - key: k*\n    share_threshold: true\n    rate_limit: {unit: hour, requests_per_unit: 3, name: a, replaces: [{name: b}]}",
		"domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unlimited: true}",
		"]}[", "{", "domain: [", "descriptors: &a [*a]",
	} {
		f.Add([]byte(s))
	}
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		f.Fatal(err)
	}
	defer g.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := sluiceenvoy.ParseDomain("fuzz.yaml", data)
		if err != nil {
			return
		}
		before := len(g.Rules())
		if _, err := sluiceenvoy.New(g, sluiceenvoy.Config{Domains: []sluiceenvoy.Domain{d}}); err != nil && len(g.Rules()) != before {
			t.Fatalf("New refused the file (%v) but changed the rules: %d, then %d", err, before, len(g.Rules()))
		}
	})
}
