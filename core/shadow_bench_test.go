package core_test

import (
	"testing"

	"github.com/sluicekit/sluice/core"
)

// BenchmarkGuardShadowBlocked is a shadow flow rule that would block every
// request: each passes, counted as shadow-blocked.
func BenchmarkGuardShadowBlocked(b *testing.B) {
	benchGuard(b, false, core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindFlow, Limit: 0, Shadow: true})
}

// BenchmarkGuardShadowConcurrency is a shadow concurrency rule that admits
// every request: its slot is kept in the Entry until Exit.
func BenchmarkGuardShadowConcurrency(b *testing.B) {
	benchGuard(b, false, core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindConcurrency, Limit: 1 << 20, Shadow: true})
}
