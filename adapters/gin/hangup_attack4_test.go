package sluicegin_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/core"
)

// TestHandlerErrorAfterHangUpOpensNoBreaker: handlers whose clients hang
// up attach what their downstream call then fails with (c.AbortWithError
// 502 and a gRPC client's Canceled status, which wraps no context error).
// A failure status written after the client left is "gone"
// (core.Entry.Exit) in every HTTP adapter, so that hang-ups cannot open an
// error breaker; before, the same failure with an error attached counted,
// and six clients hanging up opened the breaker against every later
// caller. The error is still in c.Errors, unchanged, and counted as an
// error in the statistics.
func TestHandlerErrorAfterHangUpOpensNoBreaker(t *testing.T) {
	for _, downstream := range []error{errors.New("rpc error: code = Canceled desc = context canceled")} {
		g := newGuard(t, core.Rule{Name: "b", Resource: "GET /call", Kind: core.KindBreaker,
			Strategy: "error-ratio", Threshold: 0.5, MinRequests: 5})
		e := gin.New()
		e.Use(sluicegin.Middleware(g))
		entered, returned := make(chan struct{}, 10), make(chan error, 10)
		e.GET("/call", func(c *gin.Context) {
			if c.Query("wait") == "" {
				c.Status(http.StatusOK)
				return
			}
			entered <- struct{}{}
			<-c.Request.Context().Done()
			returned <- downstream
			_ = c.AbortWithError(http.StatusBadGateway, downstream)
		})
		srv := serve(t, e)
		inFlight := func(n int64) func() bool {
			return func() bool { st, _ := g.Stats("GET /call"); return st.InFlight == n }
		}
		for i := range 6 {
			ctx, cancel := context.WithCancel(context.Background())
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/call?wait=1", nil)
			require.NoError(t, err)
			done := make(chan struct{})
			go func() {
				defer close(done)
				if res, err := srv.Client().Do(req); err == nil {
					res.Body.Close()
				}
			}()
			select {
			case <-entered:
			case <-done:
				cancel()
				t.Fatalf("the breaker opened after %d hang-ups returning %v", i, downstream)
			}
			cancel()
			<-done
			require.Equal(t, downstream, <-returned)
			require.Eventually(t, inFlight(0), 10*time.Second, time.Millisecond)
		}
		assert.Equal(t, http.StatusOK, do(t, srv, http.MethodGet, "/call"), "the breaker opened on hang-ups: %v", downstream)
		assert.EqualValues(t, 6, mustStats(t, g, "GET /call").Total.Error)
	}
}
