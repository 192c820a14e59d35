package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestApproxNewKeysDuringASyncBlip freezes Redis under an approximate
// hotspot rule until one sync round has failed, well within the sync age:
// new users' keys have never read the shared counts, so each is decided by
// the rule's local limit, and the keys that did read theirs go on deciding
// on them; the store stays healthy. Once the counts are older than the sync
// age, the store reports its approximate mode failed, since when, with the
// local limit its rule applies.
//
// Failed before: a new key's error counted as a failure of the store, so
// the fifth new user opened the approximate breaker for a second, and every
// user, the synchronized ones too, was decided by the failure policy.
func TestApproxNewKeysDuringASyncBlip(t *testing.T) {
	srv := redistest.StartOwned(t)
	const localLimit = 2
	fc := clock.NewFake(time.Hour)
	rule := core.Rule{Name: "per-user", Resource: "GET /x", Kind: core.KindHotspot, Param: "header:U", Limit: 100,
		Window: time.Hour, Store: "redis", Mode: store.Approximate, LocalLimit: localLimit}
	in := newInstance(t, srv, redistest.UniquePrefix(),
		[]redisstore.Option{redisstore.WithTimeout(time.Second), redisstore.WithSyncPeriod(500 * time.Millisecond)},
		core.WithClock(fc), core.WithRules(rule))
	enter := func(user string) error {
		e, err := in.g.Enter(context.Background(), "GET /x", core.WithParams(core.ParamMap{"header:U": {user}}))
		e.Exit(nil)
		return err
	}
	require.NoError(t, enter("old"))
	require.Zero(t, in.g.Stores()[0].Fallbacks, "decided by the store")
	require.Eventually(t, func() bool { return in.st.Stats().Syncs > 0 && in.st.Err() == nil }, 10*time.Second, time.Millisecond)

	srv.Freeze(t)
	t.Cleanup(func() { srv.Thaw(t) })
	require.Eventually(t, func() bool { return in.st.Err() != nil }, 10*time.Second, time.Millisecond, "a sync round fails")
	for i := range 10 {
		u := fmt.Sprintf("new%d", i)
		require.NoError(t, enter(u))
		require.NoError(t, enter(u))
		assert.True(t, blocked(t, enter(u)).Fallback, "user %s: the local limit", u)
	}
	for range 5 {
		require.NoError(t, enter("old"), "a synchronized key decides on its counts")
	}
	st := in.g.Stores()[0]
	require.Len(t, st.Modes, 1)
	assert.True(t, st.Healthy, "one failed sync round is no outage: %v", st.Modes[0].Err)
	assert.Zero(t, st.Errors)
	assert.Equal(t, int64(30), st.Fallbacks, "the new users' requests")

	// The counts grow older than the sync age (5s): the store fails.
	fc.Advance(time.Minute)
	var ap core.StoreModeStatus
	require.Eventually(t, func() bool {
		_ = enter("old")
		ap = in.g.Stores()[0].Modes[0]
		return !ap.Healthy
	}, 30*time.Second, 5*time.Millisecond, "the approximate mode fails")
	assert.Equal(t, time.Hour+time.Minute, ap.Since)
	assert.ErrorContains(t, ap.Err, "approximate counts not synchronized with Redis for")
	require.Len(t, ap.Rules, 1)
	assert.Equal(t, int64(localLimit), ap.Rules[0].LocalLimit)
}
