package sluicegin_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestClientGoneBeforeAnswer: a client gives up (cancels its request) on
// a gin handler that waits for the request's context to end, 10ms of the
// Guard's clock, and returns. When the handler writes nothing, the request
// is gone (core.Entry.Exit): a failure, and no completion for a system
// rule, whose average response time stays 0. When it writes a response
// after the client left, it is a success, and a completion of 10ms.
func TestClientGoneBeforeAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		write  bool
		errors int64
		avgRT  time.Duration
	}{
		{name: "unwritten", errors: 1},
		{name: "written", write: true, avgRT: 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(0)
			rule := core.Rule{Name: "inflight", Resource: "*", Kind: core.KindSystem, Signal: core.SignalInFlight, Threshold: 100}
			g, err := core.New(core.WithClock(clk), core.WithRules(rule))
			require.NoError(t, err)
			defer g.Close()
			started := make(chan struct{})
			r := gin.New()
			r.Use(sluicegin.Middleware(g))
			r.GET("/wait", func(c *gin.Context) {
				close(started)
				<-c.Request.Context().Done()
				clk.Advance(10 * time.Millisecond)
				if tc.write {
					c.String(http.StatusOK, "late")
				}
			})
			srv := serve(t, r)
			ctx, cancel := context.WithCancel(t.Context())
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/wait", nil)
			require.NoError(t, err)
			go func() { <-started; cancel() }()
			_, err = srv.Client().Do(req)
			require.ErrorIs(t, err, context.Canceled)
			require.Eventually(t, func() bool { st, _ := g.Stats("GET /wait"); return st.Total.Pass == 1 && st.InFlight == 0 },
				10*time.Second, time.Millisecond, "the request never exited")
			st := mustStats(t, g, "GET /wait")
			require.Equal(t, tc.errors, st.Total.Error)
			sys := g.Snapshot().Rules[0].System
			require.Equal(t, int64(1), sys.Pass)
			require.Equal(t, tc.avgRT, sys.AvgRT)
		})
	}
}
