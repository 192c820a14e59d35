package coarse_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicekit/sluice/core/internal/testmain"
)

func TestMain(m *testing.M) { testmain.Run(m, nil) }

// testCtx returns a context that ends the test's waits if the code under test
// never wakes up, instead of hanging until the test binary times out.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
