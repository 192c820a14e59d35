package core_test

import (
	"testing"

	"github.com/sluicekit/sluice/core"
)

// BenchmarkGuardSeveralRulesBlocked is a request that the first of a flow
// rule, a hotspot rule and a concurrency rule rejects: the cost of a
// rejection that asks the rules after the rejecting one too.
func BenchmarkGuardSeveralRulesBlocked(b *testing.B) {
	params := core.ParamMap{"header:X-User-ID": {"user-42"}}
	benchGuardWith(b, true, []core.EnterOption{core.WithParams(params)},
		core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindFlow, Limit: 0},
		core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 500_000_000},
		core.Rule{Resource: "GET /api/items/{id}", Kind: core.KindConcurrency, Limit: 1 << 20},
	)
}
