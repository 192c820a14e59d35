package sluicehttp_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// TestHotspotFloodOverHTTP: "5 login attempts per 15 minutes per user"
// (X-User-ID) holds through a real server on loopback, on the Guard's own
// clock, while 4 clients flood it with 10 x MaxKeys junk user IDs, each sent
// twice: alice, who spent her 5 attempts, gets 429 throughout and after it,
// and bob, who made one attempt, has at most 4 left, not 5. Before evicted
// values kept their debt, both got a full bucket back after about
// 2 x MaxKeys junk requests. Right after the flood, at least 95% of 40 new
// users have their 5 attempts (before, none had any: they inherited the
// junk IDs' debts).
func TestHotspotFloodOverHTTP(t *testing.T) {
	const (
		maxKeys = 200
		clients = 4
		rounds  = 5 // alice tries after each round of 2 x MaxKeys junk values
	)
	g, err := core.New(core.WithRules(core.Rule{
		Name: "login", Resource: "POST /login", Kind: core.KindHotspot,
		Param: "header:X-User-ID", Limit: 5, Window: 15 * time.Minute, MaxKeys: maxKeys,
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", ok)
	srv := serve(t, sluicehttp.Middleware(g)(mux))
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = clients
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}

	// login posts an attempt of user and returns the response's status and
	// Retry-After.
	login := func(user string) (int, string, error) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/login", nil)
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("X-User-ID", user)
		res, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("Retry-After"), nil
	}
	attempts := func(user string, n int) (passed int) {
		for range n {
			code, _, err := login(user)
			require.NoError(t, err)
			if code == http.StatusOK {
				passed++
			}
		}
		return passed
	}
	require.Equal(t, 5, attempts("alice", 6))
	require.Equal(t, 1, attempts("bob", 1))

	next := 0 // next junk value
	for round := range rounds {
		var wg sync.WaitGroup
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := c; i < 2*maxKeys; i += clients {
					junk := "junk-" + strconv.Itoa(next+i)
					for range 2 {
						if _, _, err := login(junk); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		next += 2 * maxKeys
		code, retry, err := login("alice")
		require.NoError(t, err)
		require.Equal(t, http.StatusTooManyRequests, code, "alice after round %d", round)
		secs, err := strconv.Atoi(retry)
		require.NoError(t, err, "Retry-After %q", retry)
		assert.Positive(t, secs)
	}
	require.Equal(t, 10*maxKeys, next)
	assert.LessOrEqual(t, attempts("bob", 6), 4, "bob had made one attempt")
	full := 0
	for u := range 40 {
		if attempts("new-"+strconv.Itoa(u), 5) == 5 {
			full++
		}
	}
	assert.GreaterOrEqual(t, full, 38, "new users with their 5 attempts right after the flood")
}
