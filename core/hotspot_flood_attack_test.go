package core_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core"
)

// TestHotspotHeavyFloodLeavesNewUsersTheirAttempts attacks the flood
// promise as an attacker would who reads it: the promise holds for junk
// user IDs sent twice (TestHotspotFloodLeavesNewUsersTheirAttempts), so
// send each three or five times instead, 10x and 100x MaxKeys of them,
// against "5 login attempts per 15 minutes" (MaxKeys 1000). Right after
// the flood and a minute later, at least 95% (10x) or 80% (100x) of 200
// new users must have their 5 attempts, while alice, who spent hers before
// the flood, stays refused.
//
// Fails on main at 4fe9240, every case: 200 of 200 new users get 0 of
// their 5 attempts right after the flood and at +1 minute, and 2 of 5 at
// +6 minutes; alice stays refused. Values sent three times leave debts
// over half a bucket, which the table keeps (to reset no limited value) at
// the cost of every new value: one unauthenticated client still denies a
// login limit to every newcomer. Skipped: the fix is a design choice in
// core/internal/hotspot (owner: hotspot), not a few lines.
func TestHotspotHeavyFloodLeavesNewUsersTheirAttempts(t *testing.T) {
	t.Skip("hotspot: junk values sent 3 or 5 times lock every new user out for minutes (0 of 5 attempts for 200 of 200 at +1m); core/internal/hotspot")
	const maxKeys = 1000
	for _, tc := range []struct{ times, mult, want int }{{3, 10, 95}, {5, 10, 95}, {3, 100, 80}} {
		g, fc := newGuard(t, loginRule(maxKeys))
		ctx := context.Background()
		login := func(user string) error {
			e, err := g.Enter(ctx, "POST /login", core.WithParams(core.ParamMap{"header:X-User-ID": {user}}))
			e.Exit(nil)
			return err
		}
		for range 5 {
			_ = login("alice")
		}
		n := tc.mult * maxKeys
		for i := range n {
			for range tc.times {
				_ = login("junk-" + strconv.Itoa(i))
			}
			if i%(n/100) == n/100-1 {
				fc.Advance(100 * ms) // the flood takes 10 s
			}
		}
		blockedBy(t, login("alice"))
		for _, after := range []time.Duration{0, time.Minute} {
			fc.Advance(after)
			full := 0
			for u := range 200 {
				passed := 0
				for range 5 {
					if login("new-"+after.String()+"-"+strconv.Itoa(u)) == nil {
						passed++
					}
				}
				if passed == 5 {
					full++
				}
			}
			assert.GreaterOrEqual(t, full*100/200, tc.want, "junk %dx MaxKeys sent %d times: new users with their 5 attempts %s after the flood", tc.mult, tc.times, after)
		}
		blockedBy(t, login("alice"))
	}
}
