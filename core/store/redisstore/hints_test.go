package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestGuardLastAdmittedHintMatchesNextBlock: a Guard on a real Redis, exact
// and approximate limits of 2 per 10s of each algorithm a Store supports:
// the Reset of the quota of the request that uses up the limit is the
// Reset of the rejection right after it, less the time that passed between
// them (Redis's clock runs on). Before, the admitted request's Reset was
// the whole window (the time to refill the bucket) for every limit in
// Redis: 10s where the rejection said 5s.
func TestGuardLastAdmittedHintMatchesNextBlock(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	for _, mode := range []store.Mode{store.Exact, store.Approximate} {
		for _, rule := range []core.Rule{
			{Algorithm: "sliding-counter", Limit: 2, Window: 10 * time.Second},
			{Algorithm: "token-bucket", Limit: 2, Window: 10 * time.Second},
			{Algorithm: "leaky-bucket", Limit: 2, Window: 10 * time.Second, MaxWait: 2 * time.Second},
		} {
			t.Run(string(mode)+"/"+string(rule.Algorithm), func(t *testing.T) {
				rule.Name, rule.Resource, rule.Kind, rule.Store, rule.Mode = "global", "GET /items", core.KindFlow, "redis", mode
				in := newInstance(t, srv, redistest.UniquePrefix(), patient, core.WithRules(rule))
				var q []core.Quota
				var start time.Time
				for i := 0; i < 3 && (i == 0 || q[0].Remaining > 0); i++ {
					q = q[:0]
					start = time.Now()
					e, err := in.g.Enter(context.Background(), rule.Resource, core.WithQuotas(&q))
					require.NoError(t, err, "request %d", i)
					e.Exit(nil)
					require.Len(t, q, 1)
				}
				require.Zero(t, q[0].Remaining)
				_, err := in.g.Enter(context.Background(), rule.Resource)
				passed := time.Since(start)
				var b *core.BlockedError
				require.True(t, errors.As(err, &b), "%v", err)
				require.Len(t, b.Policies, 1)
				blocked := b.Policies[0].Reset
				assert.LessOrEqual(t, blocked, q[0].Reset, "the rejection's reset and the last admission's")
				assert.GreaterOrEqual(t, blocked, q[0].Reset-passed-time.Millisecond, "the rejection's reset and the last admission's, %s later", passed)
			})
		}
	}
}
