package redistest_test

import (
	"context"
	"testing"

	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// A test that needs a Redis starts one; a fault test starts one it owns,
// and kills and restarts it. (Examples cannot take a *testing.T: this one
// only shows the calls.)
func Example() {
	testSomething := func(t *testing.T) {
		srv := redistest.Start(t) // stopped when t ends
		client := srv.Client(t)   // closed when t ends
		prefix := redistest.UniquePrefix()
		_ = client.Set(context.Background(), prefix+":k", "v", 0).Err()
	}
	testOutage := func(t *testing.T) {
		srv := redistest.StartOwned(t)
		srv.Kill()     // connections break, new ones are refused
		srv.Restart(t) // the same address, empty again
		srv.Freeze(t)  // nothing answers (skips on miniredis)
		srv.Thaw(t)
	}
	_, _ = testSomething, testOutage
}
