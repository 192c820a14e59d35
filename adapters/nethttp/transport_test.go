package sluicehttp_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/throttle"
	"github.com/sluicekit/sluice/extractors"
)

// upstream is a server over loopback that counts the requests it gets and
// answers with the status status holds (200 when 0).
type upstream struct {
	srv    *httptest.Server
	hits   atomic.Int64
	status atomic.Int64
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.srv = serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		if s := u.status.Load(); s != 0 {
			w.WriteHeader(int(s))
		}
		_, _ = io.WriteString(w, "body of "+r.URL.Path)
	}))
	return u
}

// guardedUpstream returns an upstream and a Guard whose error-count
// breaker opens on the third failed call to it, for a minute.
func guardedUpstream(t *testing.T) (*upstream, *core.Guard) {
	return newUpstream(t), newGuard(t, core.Rule{Name: "upstream-breaker", Resource: "* 127.0.0.1", Kind: core.KindBreaker,
		Strategy: breaker.ErrorCount, Threshold: 3, MinRequests: 1, Window: time.Minute, OpenFor: time.Minute})
}

// failingUpstreamOpensTheBreaker checks that three 500s of u through c
// open guardedUpstream's breaker.
func failingUpstreamOpensTheBreaker(t *testing.T, c *http.Client, u *upstream) {
	t.Helper()
	u.status.Store(http.StatusInternalServerError)
	for range 3 {
		status, err := call(c, u, "/x")
		require.NoError(t, err)
		assert.Equal(t, http.StatusInternalServerError, status)
	}
	_, err := call(c, u, "/x")
	assert.Equal(t, core.KindBreaker, blockedBy(t, err).Kind, "a failing upstream opens the breaker")
}

func client(t *testing.T, g *core.Guard, opts ...sluicehttp.Option) *http.Client {
	t.Helper()
	tr, err := sluicehttp.NewTransport(g, nil, opts...)
	require.NoError(t, err)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// call makes a GET to u's path and returns the response, body read and
// closed, or the error.
func call(c *http.Client, u *upstream, path string, header ...string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, u.srv.URL+path, nil)
	if err != nil {
		return 0, err
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return send(c, req)
}

// send sends req with c and returns the response's status, its body read
// and closed, or the error.
func send(c *http.Client, req *http.Request) (int, error) {
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}

func blockedBy(t *testing.T, err error) *core.BlockedError {
	t.Helper()
	var b *core.BlockedError
	require.ErrorAs(t, err, &b)
	return b
}

func TestTransportFlow(t *testing.T) {
	u := newUpstream(t)
	g := newGuard(t, core.Rule{Name: "upstream-rate", Resource: "GET 127.0.0.1", Kind: core.KindFlow, Limit: 2, Window: time.Minute})
	c := client(t, g)
	for range 2 {
		status, err := call(c, u, "/a")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, status)
	}
	_, err := call(c, u, "/a")
	b := blockedBy(t, err)
	assert.Equal(t, "upstream-rate", b.Rule)
	assert.Equal(t, int64(2), u.hits.Load(), "a blocked call never reaches the network")
	st, ok := g.Stats("GET 127.0.0.1")
	require.True(t, ok)
	assert.Equal(t, int64(2), st.Total.Pass)

	// A blocked request's body is closed, as a RoundTripper must.
	body := &closeRecorder{Reader: strings.NewReader("payload")}
	req, err := http.NewRequest(http.MethodGet, u.srv.URL+"/a", body)
	require.NoError(t, err)
	_, err = c.Do(req)
	blockedBy(t, err)
	assert.True(t, body.closed.Load())
}

type closeRecorder struct {
	io.Reader
	closed atomic.Bool
}

func (c *closeRecorder) Close() error { c.closed.Store(true); return nil }

// TestTransportConcurrencyUntilBodyClosed: a call holds its slot until its
// response body is closed.
func TestTransportConcurrencyUntilBodyClosed(t *testing.T) {
	u := newUpstream(t)
	g := newGuard(t, core.Rule{Name: "one-at-a-time", Resource: "* 127.0.0.1", Kind: core.KindConcurrency, Limit: 1})
	c := client(t, g)
	res, err := c.Get(u.srv.URL + "/open")
	require.NoError(t, err)
	_, err = call(c, u, "/second")
	assert.Equal(t, core.KindConcurrency, blockedBy(t, err).Kind, "the first call's body is still open")
	_, err = io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	status, err := call(c, u, "/third")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)
	st, _ := g.Stats("GET 127.0.0.1")
	assert.Zero(t, st.InFlight)
}

// TestTransportBreaker: 5xx answers and transport errors are failures; an
// open breaker keeps calls off the network.
func TestTransportBreaker(t *testing.T) {
	u := newUpstream(t)
	g := newGuard(t, core.Rule{Name: "upstream-breaker", Resource: "* 127.0.0.1", Kind: core.KindBreaker,
		Strategy: breaker.ErrorCount, Threshold: 3, MinRequests: 1, Window: time.Minute, OpenFor: time.Minute})
	c := client(t, g)
	u.status.Store(http.StatusServiceUnavailable)
	for range 2 {
		status, err := call(c, u, "/x")
		require.NoError(t, err)
		assert.Equal(t, http.StatusServiceUnavailable, status)
	}
	dead := newUpstream(t)
	dead.srv.Close() // a transport error: connection refused
	_, err := call(c, dead, "/x")
	require.Error(t, err)
	var b *core.BlockedError
	assert.False(t, errors.As(err, &b))
	st, _ := g.Stats("GET 127.0.0.1")
	assert.Equal(t, int64(3), st.Error)

	hits := u.hits.Load()
	_, err = call(c, u, "/x")
	assert.Equal(t, core.KindBreaker, blockedBy(t, err).Kind)
	assert.Equal(t, hits, u.hits.Load(), "the open breaker keeps the call off the network")
}

func TestTransportOptions(t *testing.T) {
	u := newUpstream(t)
	x, err := extractors.New(extractors.WithHTTPParam("tenant", func(r *http.Request) []string { return r.Header.Values("X-Tenant") }))
	require.NoError(t, err)
	g := newGuard(t,
		core.Rule{Name: "per-tenant", Resource: "inventory", Kind: core.KindHotspot, Param: "tenant", Limit: 1, Window: time.Minute},
	)
	c := client(t, g,
		sluicehttp.WithExtractor(x),
		sluicehttp.WithResource(func(*http.Request) string { return "inventory" }),
		sluicehttp.WithSkipper(func(r *http.Request) bool { return r.URL.Path == "/health" }),
		sluicehttp.WithErrorClassifier(func(status int, err error) bool { return err != nil || status == http.StatusTeapot }),
	)
	_, err = call(c, u, "/a", "X-Tenant", "acme")
	require.NoError(t, err)
	_, err = call(c, u, "/a", "X-Tenant", "acme")
	assert.Equal(t, "per-tenant", blockedBy(t, err).Rule)
	_, err = call(c, u, "/a", "X-Tenant", "globex")
	require.NoError(t, err, "another tenant has its own limit")
	for range 3 {
		_, err = call(c, u, "/health", "X-Tenant", "acme")
		require.NoError(t, err, "skipped")
	}
	u.status.Store(http.StatusTeapot)
	_, err = call(c, u, "/a", "X-Tenant", "initech")
	require.NoError(t, err)
	st, _ := g.Stats("inventory")
	assert.Equal(t, int64(1), st.Error, "the classifier's failures")

	for _, o := range []sluicehttp.Option{
		sluicehttp.WithBlockHandler(sluicehttp.DefaultBlockHandler),
		sluicehttp.WithRateLimitFields(false),
	} {
		_, err := sluicehttp.NewTransport(g, nil, o)
		assert.ErrorContains(t, err, "does not apply to a client's requests")
	}
	// A rule naming a param the transport's extractor lacks is refused.
	_, err = sluicehttp.NewTransport(newGuard(t, core.Rule{Name: "per-tenant", Resource: "inventory", Kind: core.KindHotspot, Param: "tenant", Limit: 1}), nil)
	assert.EqualError(t, err, `sluicehttp: NewTransport: rules[0] (per-tenant): param "tenant" is not a custom param of the HTTP extractor (registered: none): register it with extractors.WithHTTPParam or WithContextParam and give that Extractor to the Guard (core.WithParamSource)`)
}

// TestTransportThrottle: against an upstream that rejects every call, the
// client sends only a few of them; a Retry-After pauses the calls; once the
// upstream recovers and the window has passed, every call is sent again.
func TestTransportThrottle(t *testing.T) {
	u := newUpstream(t)
	g := newGuard(t)
	fc := g.Clock().(*clock.Fake)
	th, err := throttle.New(fc)
	require.NoError(t, err)
	c := client(t, g, sluicehttp.WithThrottle(th))

	u.status.Store(http.StatusTooManyRequests)
	throttled := 0
	var te *throttle.Error
	for range 200 {
		status, err := call(c, u, "/x")
		switch {
		case errors.As(err, &te):
			throttled++
			assert.True(t, errors.Is(err, core.ErrBlocked))
		case err != nil:
			t.Fatal(err)
		default:
			assert.Equal(t, http.StatusTooManyRequests, status)
		}
	}
	// Every call is counted in the throttle's window and none accepted, so
	// the share rejected grows with the calls counted, and a call goes each
	// time the shares let through add up to one (the first surely): the
	// upstream gets 3 or 4; all 200 is what no throttling gives.
	hits := u.hits.Load()
	assert.Equal(t, int64(200-throttled), hits)
	t.Logf("the upstream got %d of 200 calls", hits)
	assert.LessOrEqual(t, hits, int64(20), "an upstream that rejects everything gets a few calls, not 200")
	assert.GreaterOrEqual(t, hits, int64(1))

	fc.Advance(2 * time.Minute) // many of the throttle's default windows
	u.status.Store(0)
	for range 50 {
		status, err := call(c, u, "/x")
		require.NoError(t, err, "a recovered upstream gets every call")
		assert.Equal(t, http.StatusOK, status)
	}

	// A Retry-After pauses the resource once the upstream rejects at least
	// half the recent calls (the third in a row): the next calls stay local.
	// (Another port: the throttle knows nothing of it yet, and rejects
	// some of its first calls locally.)
	var pausingHits atomic.Int64
	pausing := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pausingHits.Add(1)
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	for i := 0; pausingHits.Load() < 3; i++ {
		require.Less(t, i, 100, "calls to reach the upstream 3 times")
		res, err := c.Get(pausing.URL)
		if err == nil {
			res.Body.Close()
		} else {
			require.ErrorAs(t, err, &te)
			require.Zero(t, te.RetryAfter, "no pause before the third answer")
		}
	}
	fc.Advance(10 * time.Second)
	_, err = c.Get(pausing.URL)
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 20*time.Second, te.RetryAfter)

	assert.PanicsWithValue(t, "sluicehttp: Middleware: WithThrottle applies only to NewTransport", func() {
		sluicehttp.Middleware(g, sluicehttp.WithThrottle(th))
	})
}

// TestTransportThrottlesPortsApart runs two upstreams on two ports of
// 127.0.0.1: the one that answers 503 to every call is throttled, and the
// healthy one still gets every call.
//
// Failed before: the throttle kept calls by host without the port, so the
// healthy upstream's calls were rejected locally with the failing one's.
func TestTransportThrottlesPortsApart(t *testing.T) {
	failing, ok := newUpstream(t), newUpstream(t)
	failing.status.Store(http.StatusServiceUnavailable)
	g := newGuard(t)
	th, err := throttle.New(g.Clock())
	require.NoError(t, err)
	c := client(t, g, sluicehttp.WithThrottle(th))
	var te *throttle.Error
	for range 100 {
		if _, err := call(c, failing, "/x"); err != nil {
			require.ErrorAs(t, err, &te)
		}
	}
	require.NotNil(t, te, "the failing upstream is throttled")
	assert.Equal(t, "GET 127.0.0.1:"+failing.srv.URL[strings.LastIndex(failing.srv.URL, ":")+1:], te.Resource)
	for i := range 100 {
		status, err := call(c, ok, "/x")
		require.NoError(t, err, "call %d to the healthy upstream", i)
		assert.Equal(t, http.StatusOK, status)
	}
}

// TestTransportCost: WithCost makes an outgoing request take the permits
// it is worth; one over the limit never reaches the network.
func TestTransportCost(t *testing.T) {
	u := newUpstream(t)
	g := newGuard(t, core.Rule{Name: "upstream-rate", Resource: "GET 127.0.0.1", Kind: core.KindFlow, Limit: 10, Window: time.Minute})
	c := client(t, g, sluicehttp.WithCost(func(r *http.Request) int64 { return adaptertest.Cost(r.Header) }))
	_, err := call(c, u, "/a", "X-Cost", "6")
	require.NoError(t, err)
	_, err = call(c, u, "/a", "X-Cost", "6")
	assert.Equal(t, "upstream-rate", blockedBy(t, err).Rule)
	_, err = call(c, u, "/a", "X-Cost", "4")
	require.NoError(t, err)
	assert.Equal(t, int64(2), u.hits.Load())
}
