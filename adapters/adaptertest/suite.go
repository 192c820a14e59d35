package adaptertest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/extractors"
)

// Options are the adapter options a test asks for; each adapter's factory
// translates them into its own options.
type Options struct {
	// Extractor, when not nil, is given with the adapter's WithExtractor.
	Extractor *extractors.Extractor
	// SkipPath, when not "", is the path whose requests skip the
	// middleware (the adapter's WithSkipper).
	SkipPath string
	// Classifier, when not nil, is the adapter's WithErrorClassifier.
	Classifier func(status int, err error) bool
	// NoRateLimitFields asks for WithRateLimitFields(false).
	NoRateLimitFields bool
	// BlockStatus, when not 0, asks for a WithBlockHandler that answers
	// blocked requests with this status, the header X-Blocked-By set to
	// the rule, and no body.
	BlockStatus int
	// Auth asks for an authentication middleware before the adapter that
	// stores the AuthHeader's value where the framework keeps a request's
	// values (gin and echo: c.Set(AuthKey, v); net/http:
	// context.WithValue(ctx, AuthContextKey{}, v)), and for an Extractor
	// made with extractors.WithContextParam("user", that key).
	Auth bool
	// Cost asks for WithCost with Cost of the request's header.
	Cost bool
	// FrameworkClientIP asks for WithFrameworkClientIP, the framework
	// trusting the loopback proxy's X-Forwarded-For.
	FrameworkClientIP bool
	// Guard holds options of the Guard the test starts, after its clock
	// and rules (core.WithParamSource, say); factories ignore it.
	Guard []core.Option
	// Fail, when not nil, is called when a route's handler returns: an
	// error it returns is reported the way the framework's handlers report
	// one (gin: c.AbortWithError(http.StatusBadGateway, err); echo: the
	// handler returns it, ErrBadGateway as echo's HTTPError of status 502;
	// net/http: a 502 written, as a reverse proxy answers).
	Fail func(r *http.Request) error
}

// ErrBadGateway stands for the framework's own error of status 502 Bad
// Gateway (Options.Fail).
var ErrBadGateway = errors.New("adaptertest: bad gateway")

// The authentication of Options.Auth: the header the suite's clients send
// their user in, and the keys the authentication middlewares store it
// under.
const (
	AuthHeader = "X-Auth"
	AuthKey    = "user_id" // gin's and echo's c.Set
)

// AuthContextKey is the context key of Options.Auth for net/http.
type AuthContextKey struct{}

// Cost is the cost of Options.Cost: the X-Cost header's integer, 1 when
// there is none.
func Cost(h http.Header) int64 {
	n, err := strconv.ParseInt(h.Get("X-Cost"), 10, 64)
	if err != nil {
		return 1
	}
	return n
}

// Route is one route of the suite: the adapter registers Handler for
// Method and Path (written as a ServeMux pattern; ColonPath gives the gin
// and echo form).
type Route struct {
	Method, Path string
	Handler      http.HandlerFunc
}

// factory builds the server under test: an http.Handler of the adapter's
// framework serving routes through the adapter, configured with guard and
// o, with the framework's panic recovery (answering 500) installed before
// (outside) the adapter, so that a panicking handler passes through the
// adapter first.
type factory func(t testing.TB, guard *core.Guard, o Options, routes []Route) http.Handler

// ColonPath writes a ServeMux path with {name} wildcards as gin and echo
// write routes: /items/{id} is /items/:id.
func ColonPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = ":" + s[1:len(s)-1]
		}
	}
	return strings.Join(segs, "/")
}

// Problem is the problem+json body of a blocked response.
type Problem struct {
	Kind             string   `json:"kind"`
	Type             string   `json:"type"`
	Title            string   `json:"title"`
	Status           int      `json:"status"`
	Detail           string   `json:"detail"`
	Rule             string   `json:"rule"`
	Limit            int64    `json:"limit"`
	Window           float64  `json:"window"`
	RetryAfter       int64    `json:"retryAfter"`
	Param            string   `json:"param"`
	ViolatedPolicies []string `json:"violated-policies"`
}

// server is one adapter under test with its routes' state.
type server struct {
	t      *testing.T
	url    string
	client *http.Client
	guard  *core.Guard
	clock  *clock.Fake

	calls   sync.Map     // path template -> *atomic.Int64: handler runs
	flaky   atomic.Int64 // the status GET /flaky answers; 0 for 500
	entered chan struct{}
	release chan struct{}
	served  chan int        // statuses the server wrote, for the cancellation test
	kept    chan keptFields // the fields GET /keep kept
}

// keptFields are the RateLimit fields' values a handler of GET /keep was
// given, kept after it returned, and copies of them made then.
type keptFields struct {
	policy, limit []string
	want          [2][]string
}

// routes returns the suite's routes, bound to s.
func (s *server) routes() []Route {
	count := func(name string) {
		n, _ := s.calls.LoadOrStore(name, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
	}
	text := func(name, body string, status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			count(name)
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}
	}
	return []Route{
		{"GET", "/hello", text("/hello", "hello\n", http.StatusOK)},
		{"GET", "/health", text("/health", "ok\n", http.StatusOK)},
		{"GET", "/fail", text("/fail", "failed\n", http.StatusInternalServerError)},
		{"GET", "/missing", text("/missing", "not here\n", http.StatusNotFound)},
		{"GET", "/flaky", func(w http.ResponseWriter, r *http.Request) {
			count("/flaky")
			status := int(s.flaky.Load())
			if status == 0 {
				status = http.StatusInternalServerError
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, http.StatusText(status)+"\n")
		}},
		{"GET", "/items/{id}", func(w http.ResponseWriter, r *http.Request) {
			count("/items/{id}")
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"ok":true}`)
		}},
		{"GET", "/panic", func(w http.ResponseWriter, r *http.Request) {
			count("/panic")
			panic("adaptertest: the handler panics")
		}},
		{"GET", "/keep", func(w http.ResponseWriter, r *http.Request) {
			count("/keep")
			h := w.Header()
			k := keptFields{policy: h["Ratelimit-Policy"], limit: h["Ratelimit"]}
			for i, v := range [][]string{k.policy, k.limit} {
				for _, x := range v {
					k.want[i] = append(k.want[i], strings.Clone(x))
				}
			}
			// A handler may add to the fields it was given.
			h.Add("RateLimit-Policy", `"extra";q=9;w=9`)
			h.Add("RateLimit", `"extra";r=9;t=9`)
			_, _ = io.WriteString(w, strings.Join(k.want[1], ", ")) // the RateLimit it was given
			s.kept <- k
		}},
		{"POST", "/upload", upload(false)},
		{"POST", "/upload-panic", upload(true)},
		{"GET", "/gone", s.afterClientLeft(false)},
		{"GET", "/late", s.afterClientLeft(true)},
		{"GET", "/hold", func(w http.ResponseWriter, r *http.Request) {
			count("/hold")
			s.entered <- struct{}{}
			select {
			case <-s.release:
			case <-r.Context().Done():
			}
			_, _ = io.WriteString(w, "released\n")
		}},
	}
}

// calls returns how many times the handler of route ran.
func (s *server) callsOf(route string) int64 {
	if n, ok := s.calls.Load(route); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// start builds the adapter's server for rules and o, on a fake clock, and
// serves it on 127.0.0.1:0 until the test ends.
func start(t *testing.T, f factory, o Options, rules ...core.Rule) *server {
	t.Helper()
	return startWith(t, f, o, nil, rules...)
}

// startWith is start with header fields that a middleware outside the
// adapter sets on every response before the adapter runs.
func startWith(t *testing.T, f factory, o Options, preset http.Header, rules ...core.Rule) *server {
	t.Helper()
	fc := clock.NewFake(0)
	g, err := core.New(append([]core.Option{core.WithClock(fc), core.WithRules(rules...)}, o.Guard...)...)
	require.NoError(t, err)
	s := &server{
		t: t, guard: g, clock: fc,
		entered: make(chan struct{}, 16),
		release: make(chan struct{}),
		served:  make(chan int, 16),
		kept:    make(chan keptFields, 1024),
	}
	h := f(t, g, o, s.routes())
	// An outer recorder reports the status each request ended with (0 when
	// nothing was written), for the tests that need to know what the
	// server sent to a client that went away.
	outer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range preset {
			w.Header()[k] = slices.Clone(v)
		}
		rec := &recorder{ResponseWriter: w}
		defer func() {
			select {
			case s.served <- rec.status:
			default:
			}
		}()
		h.ServeHTTP(rec, r)
	})
	ts := httptest.NewUnstartedServer(outer)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.Start()
	t.Cleanup(func() {
		select {
		case <-s.release:
		default:
			close(s.release)
		}
		ts.Close()
	})
	s.url = ts.URL
	s.client = ts.Client()
	s.client.Timeout = 20 * time.Second
	return s
}

// recorder records the status written through it.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// response is what a test reads of a response.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends method path with the given headers ("Name: value") and reads
// the whole response.
func (s *server) do(method, path string, headers ...string) response {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, nil)
	require.NoError(s.t, err)
	for _, h := range headers {
		k, v, ok := strings.Cut(h, ":")
		require.True(s.t, ok, h)
		req.Header.Add(k, strings.TrimSpace(v))
	}
	res, err := s.client.Do(req)
	require.NoError(s.t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(s.t, err)
	s.drainServed()
	return response{status: res.StatusCode, header: res.Header, body: body}
}

func (s *server) get(path string, headers ...string) response {
	s.t.Helper()
	return s.do(http.MethodGet, path, headers...)
}

// drainServed empties the served channel, which only the cancellation test
// reads.
func (s *server) drainServed() {
	for {
		select {
		case <-s.served:
		default:
			return
		}
	}
}

// stats returns the statistics of resource.
func (s *server) stats(resource string) core.ResourceStats {
	s.t.Helper()
	st, ok := s.guard.Stats(resource)
	require.True(s.t, ok, "no statistics for %q", resource)
	return st
}

// checkBlocked checks a blocked response fully: its status, headers and
// problem body agree with each other and with the rule that decided it, the
// RateLimit fields parse as structured fields, list the rule, and no r
// exceeds its q, and Retry-After is never earlier than any RateLimit t. A
// 403 is a request that can never pass: no Retry-After, no RateLimit
// fields, no retryAfter member. It returns Retry-After in seconds (0 when
// absent).
func checkBlocked(t *testing.T, res response, status int, rule string, limit int64, window time.Duration) int64 {
	t.Helper()
	require.Equal(t, status, res.status, "body: %s", res.body)
	assert.Equal(t, "application/problem+json", res.header.Get("Content-Type"))
	assert.Equal(t, "no-store", res.header.Get("Cache-Control"))

	var p Problem
	require.NoError(t, json.Unmarshal(res.body, &p), "body: %s", res.body)
	assert.Equal(t, status, p.Status)
	assert.Equal(t, rule, p.Rule)
	assert.Contains(t, p.ViolatedPolicies, rule)
	assert.Equal(t, limit, p.Limit)
	assert.InDelta(t, window.Seconds(), p.Window, 1e-9)
	assert.NotEmpty(t, p.Detail)
	switch status {
	case http.StatusTooManyRequests:
		assert.Equal(t, "https://iana.org/assignments/http-problem-types#quota-exceeded", p.Type)
		assert.Equal(t, "Quota Exceeded", p.Title)
	case http.StatusForbidden:
		checkNever(t, res)
		return 0
	default:
		assert.Equal(t, "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity", p.Type)
		assert.Equal(t, "Temporary Reduced Capacity", p.Title)
	}

	policies, limits := rateLimitFields(t, res)
	i := slices.IndexFunc(policies, func(it Item) bool {
		name, err := Decode(it.Name)
		return err == nil && name == rule
	})
	require.GreaterOrEqual(t, i, 0, "RateLimit-Policy lists %q: %v", rule, policies)
	assert.Equal(t, limit, policies[i].Params["q"])

	retry := int64(0)
	if v := res.header.Get("Retry-After"); v != "" {
		var err error
		retry, err = strconv.ParseInt(v, 10, 64)
		require.NoError(t, err, "Retry-After %q is not delay-seconds", v)
		require.GreaterOrEqual(t, retry, int64(1))
	}
	assert.Equal(t, retry, p.RetryAfter)
	for _, l := range limits {
		if tv, ok := l.Params["t"].(int64); ok {
			assert.GreaterOrEqual(t, retry, tv, "Retry-After earlier than the RateLimit t of %q", l.Name)
		}
	}

	if window == 0 {
		assert.Equal(t, "concurrent-requests", policies[i].Params["qu"])
		assert.NotContains(t, policies[i].Params, "w")
		assert.NotContains(t, limits[i].Params, "t")
		assert.Zero(t, retry, "no Retry-After for a limit on requests in flight")
		return 0
	}
	w := int64(window / time.Second)
	if window%time.Second != 0 {
		w++
	}
	assert.Equal(t, w, policies[i].Params["w"])
	tv, ok := limits[i].Params["t"].(int64)
	require.True(t, ok, "RateLimit t: %v", limits[i].Params)
	assert.GreaterOrEqual(t, tv, int64(1))
	return retry
}

// rateLimitFields parses the RateLimit-Policy and RateLimit fields of res,
// which must list the same policies in the same order, each r between 0
// and its q.
func rateLimitFields(t *testing.T, res response) (policies, limits []Item) {
	t.Helper()
	policies, err := ParseList(strings.Join(res.header.Values("RateLimit-Policy"), ", "))
	require.NoError(t, err)
	limits, err = ParseList(strings.Join(res.header.Values("RateLimit"), ", "))
	require.NoError(t, err)
	require.Len(t, limits, len(policies))
	for i := range policies {
		_, err := Decode(policies[i].Name)
		require.NoError(t, err)
		assert.Equal(t, policies[i].Name, limits[i].Name)
		r, ok := limits[i].Params["r"].(int64)
		require.True(t, ok, "RateLimit r: %v", limits[i].Params)
		assert.GreaterOrEqual(t, r, int64(0))
		assert.LessOrEqual(t, r, policies[i].Params["q"], "r never exceeds q: %s", policies[i].Name)
	}
	return policies, limits
}

// checkNever checks the response to a request that can never pass: 403,
// the will-not-pass problem type, and nothing that invites a retry.
func checkNever(t *testing.T, res response) {
	t.Helper()
	require.Equal(t, http.StatusForbidden, res.status, "body: %s", res.body)
	var p Problem
	require.NoError(t, json.Unmarshal(res.body, &p), "body: %s", res.body)
	assert.Equal(t, "https://github.com/sluicekit/sluice#request-will-not-pass", p.Type)
	assert.Equal(t, "Request Will Not Pass", p.Title)
	assert.Contains(t, p.Detail, "will never pass")
	assert.NotEmpty(t, p.ViolatedPolicies)
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(res.body, &members))
	assert.NotContains(t, members, "retryAfter")
	assert.Empty(t, res.header.Values("Retry-After"), "no retry hint")
	assert.Empty(t, res.header.Values("RateLimit"), "no reset time to wait for")
	assert.Empty(t, res.header.Values("RateLimit-Policy"))
}

// Run runs the suite against the adapter f builds, except the tests named
// in skip (with the reason given in the name's place by the caller's
// comment: an adapter that cannot see unmatched requests, for instance).
func Run(t *testing.T, f factory, skip ...string) {
	tests := []struct {
		name string
		fn   func(*testing.T, factory)
	}{
		{"FlowLimitHolds", testFlowLimit},
		{"RetryAfterIsNeverEarly", testRetryAfter},
		{"RuleNameEscaped", testRuleName},
		{"ConcurrencyLimit", testConcurrency},
		{"Skip", testSkip},
		{"PanicReleasesSlot", testPanic},
		{"SpoofedForwardedFor", testSpoofing},
		{"HotspotHeader", testHotspotHeader},
		{"HotspotPath", testHotspotPath},
		{"HotspotConcurrentValues", testHotspotConcurrent},
		{"UnmatchedShareOneResource", testUnmatched},
		{"ErrorClassifier", testClassifier},
		{"RateLimitFieldsOnAllowed", testAllowedFields},
		{"RateLimitFieldsKeptByHandler", testKeptFields},
		{"BlockHandler", testBlockHandler},
		{"LeakyBucketWaitsAndHonoursContext", testLeakyWait},
		{"BreakerOpensAndCloses", testBreaker},
		{"BreakerTripsOnSlowResponses", testBreakerSlow},
		{"BreakerProbeSuccessCloses", testBreakerRecovers},
		{"BreakerResponseExact", testBreakerResponse},
		{"RetryAfterIsLatestOfSeveralRules", testSeveralRules},
		{"NeverPassesGetsNoRetryHint", testNeverPasses},
		{"BucketPolicyShowsItsBurst", testBucketPolicy},
		{"UnknownParamRefused", testUnknownParam},
		{"ContextParam", testContextParam},
		{"Cost", testCost},
		{"FrameworkClientIP", testFrameworkClientIP},
		{"ExtractorDeclaredOnce", testDeclaredOnce},
		{"ClientGoneBeforeAnswer", testClientGone},
		{"HandlerErrorAfterHangUpOpensNoBreaker", testErrorAfterHangUp},
		{"MalformedBodyOpensNoBreakerAndEndsTheConnection", testMalformedBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if slices.Contains(skip, tt.name) {
				t.Skip("not applicable to this adapter")
			}
			tt.fn(t, f)
		})
	}
}

func testFlowLimit(t *testing.T, f factory) {
	s := start(t, f, Options{}, core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 3, Window: time.Second})
	for i := range 3 {
		res := s.get("/hello")
		require.Equal(t, http.StatusOK, res.status, "request %d", i+1)
		assert.Equal(t, "hello\n", string(res.body))
		assert.Equal(t, []string{`"hello-rate";r=` + strconv.Itoa(2-i) + ";t=1"}, res.header.Values("RateLimit"), "RateLimit fields on admitted responses by default")
	}
	res := s.get("/hello")
	checkBlocked(t, res, http.StatusTooManyRequests, "hello-rate", 3, time.Second)
	var p Problem
	require.NoError(t, json.Unmarshal(res.body, &p))
	assert.Contains(t, p.Detail, "GET /hello")
	assert.Empty(t, p.Param)

	assert.Equal(t, int64(3), s.callsOf("/hello"), "the blocked request never reached the handler")
	st := s.stats("GET /hello")
	assert.Equal(t, int64(3), st.Pass)
	assert.Equal(t, int64(1), st.Block)
	assert.Equal(t, int64(3), st.Complete)
	assert.Zero(t, st.InFlight)

	// Another route is not limited by the rule.
	assert.Equal(t, http.StatusOK, s.get("/items/1").status)
}

// testRetryAfter checks, for every rate algorithm, that a request sent
// Retry-After seconds after a block passes: Retry-After is never earlier
// than the real retry time. The window of 1.5s is not a whole number of
// seconds, so rounding down anywhere would show.
func testRetryAfter(t *testing.T, f factory) {
	const window = 1500 * time.Millisecond
	rules := []core.Rule{
		{Algorithm: "leap-array"},
		{Algorithm: "fixed-window"},
		{Algorithm: "sliding-log"},
		{Algorithm: "sliding-counter"},
		{Algorithm: "token-bucket"},
		{Algorithm: "leaky-bucket"},
		{Kind: core.KindHotspot, Param: "header:X-User-ID", Algorithm: "token-bucket"},
		{Kind: core.KindHotspot, Param: "header:X-User-ID", Algorithm: "leaky-bucket"},
	}
	for _, r := range rules {
		if r.Kind == "" {
			r.Kind = core.KindFlow
		}
		r.Name, r.Resource, r.Limit, r.Window = "rate-"+string(r.Kind)+"-"+string(r.Algorithm), "GET /hello", 3, window
		t.Run(r.Name, func(t *testing.T) {
			s := start(t, f, Options{}, r)
			// Requests arrive 100ms apart, so the algorithms that spread a
			// window over buckets see several.
			var res response
			for i := 0; ; i++ {
				require.Less(t, i, 20, "the limit never held")
				res = s.get("/hello", "X-User-ID: alice")
				if res.status != http.StatusOK {
					break
				}
				s.clock.Advance(100 * time.Millisecond)
			}
			retry := checkBlocked(t, res, http.StatusTooManyRequests, r.Name, 3, window)
			require.Positive(t, retry)
			s.clock.Advance(time.Duration(retry) * time.Second)
			assert.Equal(t, http.StatusOK, s.get("/hello", "X-User-ID: alice").status,
				"a request Retry-After (%ds) after the block must pass", retry)
		})
	}
	t.Run("sub-second window", func(t *testing.T) {
		s := start(t, f, Options{}, core.Rule{Name: "fast", Resource: "GET /hello", Kind: core.KindFlow, Limit: 1, Window: 100 * time.Millisecond})
		require.Equal(t, http.StatusOK, s.get("/hello").status)
		retry := checkBlocked(t, s.get("/hello"), http.StatusTooManyRequests, "fast", 1, 100*time.Millisecond)
		assert.Equal(t, int64(1), retry, "a retry time under a second is 1 second")
	})
}

func testRuleName(t *testing.T, f factory) {
	// Every character a rule name may hold (see core.Rule.Name) is written as
	// it is in the fields and in the problem body (checkBlocked).
	const name = "Rule-9_a.b:c/{d}*$#(e)"
	s := start(t, f, Options{}, core.Rule{Name: name, Resource: "GET /hello", Kind: core.KindFlow, Limit: 1})
	require.Equal(t, http.StatusOK, s.get("/hello").status)
	res := s.get("/hello")
	checkBlocked(t, res, http.StatusTooManyRequests, name, 1, time.Second)
	policies, limits := rateLimitFields(t, res)
	assert.Equal(t, name, policies[0].Name)
	assert.Equal(t, name, limits[0].Name)
	assert.True(t, strings.HasPrefix(res.header.Get("RateLimit-Policy"), `"`+name+`";`), res.header.Get("RateLimit-Policy"))
}

func testConcurrency(t *testing.T, f factory) {
	t.Run("resource", func(t *testing.T) {
		s := start(t, f, Options{}, core.Rule{Name: "hold-inflight", Resource: "GET /hold", Kind: core.KindConcurrency, Limit: 1})
		first := make(chan response, 1)
		go func() { first <- s.getAsync("/hold") }()
		<-s.entered
		checkBlocked(t, s.get("/hold"), http.StatusServiceUnavailable, "hold-inflight", 1, 0)
		s.release <- struct{}{}
		assert.Equal(t, http.StatusOK, (<-first).status)
		// The slot is free again.
		go func() { first <- s.getAsync("/hold") }()
		<-s.entered
		s.release <- struct{}{}
		assert.Equal(t, http.StatusOK, (<-first).status)
		assert.Equal(t, int64(2), s.callsOf("/hold"))
	})
	t.Run("per value", func(t *testing.T) {
		s := start(t, f, Options{}, core.Rule{Name: "user-inflight", Resource: "GET /hold", Kind: core.KindHotspot,
			Param: "header:X-User-ID", Algorithm: "concurrency", Limit: 1})
		first := make(chan response, 1)
		go func() { first <- s.getAsync("/hold", "X-User-ID: alice") }()
		<-s.entered
		// A limit on one user's requests in flight is that user's quota: 429.
		res := s.get("/hold", "X-User-ID: alice")
		checkBlocked(t, res, http.StatusTooManyRequests, "user-inflight", 1, 0)
		var p Problem
		require.NoError(t, json.Unmarshal(res.body, &p))
		assert.Equal(t, "header:X-User-ID", p.Param)
		// Another user is not limited by alice's requests.
		second := make(chan response, 1)
		go func() { second <- s.getAsync("/hold", "X-User-ID: bob") }()
		<-s.entered
		s.release <- struct{}{}
		s.release <- struct{}{}
		assert.Equal(t, http.StatusOK, (<-first).status)
		assert.Equal(t, http.StatusOK, (<-second).status)
	})
}

// getAsync is get for a goroutine other than the test's: it reports
// failures with Errorf.
func (s *server) getAsync(path string, headers ...string) response {
	req, err := http.NewRequest(http.MethodGet, s.url+path, nil)
	if err != nil {
		s.t.Errorf("request: %v", err)
		return response{}
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Add(k, strings.TrimSpace(v))
	}
	res, err := s.client.Do(req)
	if err != nil {
		s.t.Errorf("GET %s: %v", path, err)
		return response{}
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: body}
}

func testSkip(t *testing.T, f factory) {
	s := start(t, f, Options{SkipPath: "/health"}, core.Rule{Name: "nothing", Resource: "*", Kind: core.KindFlow, Limit: 0})
	for range 3 {
		assert.Equal(t, http.StatusOK, s.get("/health").status)
	}
	checkBlocked(t, s.get("/hello"), http.StatusForbidden, "nothing", 0, time.Second)
	_, ok := s.guard.Stats("GET /health")
	assert.False(t, ok, "a skipped request is not counted")
}

func testPanic(t *testing.T, f factory) {
	s := start(t, f, Options{}, core.Rule{Name: "panic-inflight", Resource: "GET /panic", Kind: core.KindConcurrency, Limit: 1})
	for i := 1; i <= 3; i++ {
		// Each request reaches the handler: the slot of the one before was
		// released although its handler panicked.
		res := s.get("/panic")
		assert.Equal(t, http.StatusInternalServerError, res.status, "request %d: %s", i, res.body)
		assert.Equal(t, int64(i), s.callsOf("/panic"))
		st := s.stats("GET /panic")
		assert.Zero(t, st.InFlight)
		assert.Equal(t, int64(i), st.Error, "the panic is recorded as an error")
		assert.Zero(t, st.Block)
	}
}

func testSpoofing(t *testing.T, f factory) {
	rule := core.Rule{Name: "per-ip", Resource: "GET /hello", Kind: core.KindHotspot, Param: "ip", Limit: 2, Window: time.Second}
	spoofs := []string{
		"X-Forwarded-For: 203.0.113.1",
		"X-Forwarded-For: 203.0.113.2, 198.51.100.7",
		"Forwarded: for=203.0.113.3",
		"X-Real-IP: 203.0.113.4",
		"X-Forwarded-For: garbage",
	}
	t.Run("untrusted peer", func(t *testing.T) {
		s := start(t, f, Options{}, rule)
		require.Equal(t, http.StatusOK, s.get("/hello", spoofs[0]).status)
		require.Equal(t, http.StatusOK, s.get("/hello", spoofs[1]).status)
		// The client is 127.0.0.1 whatever it claims: its third request
		// and every later one are over the limit.
		for _, h := range spoofs {
			checkBlocked(t, s.get("/hello", h), http.StatusTooManyRequests, "per-ip", 2, time.Second)
		}
		checkBlocked(t, s.get("/hello"), http.StatusTooManyRequests, "per-ip", 2, time.Second)
	})
	t.Run("trusted proxy", func(t *testing.T) {
		// Through a trusted proxy, the forwarded addresses are the
		// clients: each has its own limit.
		x, err := extractors.New(extractors.WithTrustedProxies("127.0.0.0/8"))
		require.NoError(t, err)
		s := start(t, f, Options{Extractor: x}, rule)
		for range 2 {
			for _, h := range spoofs[:4] {
				require.Equal(t, http.StatusOK, s.get("/hello", h).status, h)
			}
		}
		checkBlocked(t, s.get("/hello", spoofs[0]), http.StatusTooManyRequests, "per-ip", 2, time.Second)
	})
}

func testHotspotHeader(t *testing.T, f factory) {
	s := start(t, f, Options{}, core.Rule{Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot,
		Param: "header:X-User-ID", Limit: 2, Window: time.Second, Overrides: map[string]int64{"vip": 5, "banned": 0}})
	for i := range 2 {
		require.Equal(t, http.StatusOK, s.get("/items/"+strconv.Itoa(i), "X-User-ID: alice").status)
	}
	res := s.get("/items/9", "X-User-ID: alice")
	checkBlocked(t, res, http.StatusTooManyRequests, "per-user", 2, time.Second)
	var p Problem
	require.NoError(t, json.Unmarshal(res.body, &p))
	assert.Equal(t, "header:X-User-ID", p.Param)
	assert.NotContains(t, string(res.body), "alice", "the value is never echoed")

	assert.Equal(t, http.StatusOK, s.get("/items/1", "X-User-ID: bob").status, "another user has its own limit")
	assert.Equal(t, http.StatusOK, s.get("/items/1", "x-user-id: BOB").status, "header names are case-insensitive; values are not")
	for range 5 {
		assert.Equal(t, http.StatusOK, s.get("/items/1", "X-User-ID: vip").status, "override")
	}
	checkBlocked(t, s.get("/items/1", "X-User-ID: vip"), http.StatusTooManyRequests, "per-user", 5, time.Second)
	checkBlocked(t, s.get("/items/1", "X-User-ID: banned"), http.StatusForbidden, "per-user", 0, time.Second)
	// Several values: each is limited, so hiding behind a second one does
	// not help alice.
	checkBlocked(t, s.get("/items/1", "X-User-ID: carol, alice"), http.StatusTooManyRequests, "per-user", 2, time.Second)
	for range 5 {
		assert.Equal(t, http.StatusOK, s.get("/items/1").status, "a request without the header is not limited by the rule")
	}
}

func testHotspotPath(t *testing.T, f factory) {
	s := start(t, f, Options{}, core.Rule{Name: "per-item", Resource: "GET /items/{id}", Kind: core.KindHotspot,
		Param: "path:id", Limit: 1, Window: time.Second})
	assert.Equal(t, http.StatusOK, s.get("/items/1").status)
	checkBlocked(t, s.get("/items/1"), http.StatusTooManyRequests, "per-item", 1, time.Second)
	assert.Equal(t, http.StatusOK, s.get("/items/2").status)
	assert.Equal(t, http.StatusOK, s.get("/items/caf%C3%A9").status)
	checkBlocked(t, s.get("/items/café"), http.StatusTooManyRequests, "per-item", 1, time.Second)
	assert.Equal(t, int64(3), s.callsOf("/items/{id}"))
}

// testHotspotConcurrent sends the requests of many users (then items) at
// once: each value must be limited by its own count exactly, so that the
// params read for one request (adapters reuse the objects they read them
// through) never stand in for another's.
func testHotspotConcurrent(t *testing.T, f factory) {
	const values, limit, extra = 6, 4, 2
	for _, param := range []string{"header:X-User-ID", "path:id"} {
		t.Run(param, func(t *testing.T) {
			s := start(t, f, Options{}, core.Rule{Name: "per-value", Resource: "GET /items/{id}", Kind: core.KindHotspot,
				Param: param, Limit: limit, Window: time.Second})
			var mu sync.Mutex
			passed := map[string]int{}
			var wg sync.WaitGroup
			for v := range values {
				for range limit + extra {
					wg.Go(func() {
						value := "v" + strconv.Itoa(v)
						res := s.getAsync("/items/"+value, "X-User-ID: "+value)
						switch res.status {
						case http.StatusOK:
							mu.Lock()
							passed[value]++
							mu.Unlock()
						case http.StatusTooManyRequests:
						default:
							t.Errorf("%s: status %d", value, res.status)
						}
					})
				}
			}
			wg.Wait()
			for v := range values {
				assert.Equal(t, limit, passed["v"+strconv.Itoa(v)], "v%d", v)
			}
			st := s.stats("GET /items/{id}")
			assert.Equal(t, int64(values*limit), st.Pass)
			assert.Equal(t, int64(values*extra), st.Block)
		})
	}
}

func testUnmatched(t *testing.T, f factory) {
	s := start(t, f, Options{}, core.Rule{Name: "unmatched", Resource: extractors.Unmatched, Kind: core.KindFlow, Limit: 3, Window: time.Second})
	assert.Equal(t, http.StatusNotFound, s.get("/nope/1").status)
	assert.Equal(t, http.StatusNotFound, s.get("/nope/2").status)
	assert.Contains(t, []int{http.StatusNotFound, http.StatusMethodNotAllowed}, s.do(http.MethodPost, "/hello").status)
	// Every unmatched request, whatever its path or method, is one resource.
	checkBlocked(t, s.get("/random-"+strconv.Itoa(int(time.Now().UnixNano()))), http.StatusTooManyRequests, "unmatched", 3, time.Second)
	checkBlocked(t, s.do(http.MethodDelete, "/hello"), http.StatusTooManyRequests, "unmatched", 3, time.Second)
	st := s.stats(extractors.Unmatched)
	assert.Equal(t, int64(3), st.Pass)
	assert.Equal(t, int64(2), st.Block)
	for _, raw := range []string{"GET /nope/1", "GET /nope/2", "POST /hello"} {
		_, ok := s.guard.Stats(raw)
		assert.False(t, ok, "%s has statistics of its own", raw)
	}
	assert.Equal(t, http.StatusOK, s.get("/hello").status, "matched routes are not limited by the rule")
}

func testClassifier(t *testing.T, f factory) {
	t.Run("default", func(t *testing.T) {
		s := start(t, f, Options{})
		assert.Equal(t, http.StatusInternalServerError, s.get("/fail").status)
		assert.Equal(t, http.StatusInternalServerError, s.get("/fail").status)
		assert.Equal(t, http.StatusOK, s.get("/hello").status)
		assert.Equal(t, http.StatusNotFound, s.get("/missing").status)
		fail := s.stats("GET /fail")
		assert.Equal(t, int64(2), fail.Complete)
		assert.Equal(t, int64(2), fail.Error, "5xx counts as an error")
		assert.Zero(t, s.stats("GET /hello").Error)
		assert.Equal(t, int64(1), s.stats("GET /missing").Complete)
		assert.Zero(t, s.stats("GET /missing").Error, "404 is no error of the server")
	})
	t.Run("custom", func(t *testing.T) {
		var mu sync.Mutex
		var seen []int
		s := start(t, f, Options{Classifier: func(status int, err error) bool {
			mu.Lock()
			seen = append(seen, status)
			mu.Unlock()
			return status == http.StatusOK || status == http.StatusNotFound
		}})
		assert.Equal(t, http.StatusInternalServerError, s.get("/fail").status)
		assert.Equal(t, http.StatusOK, s.get("/hello").status)
		assert.Equal(t, http.StatusNotFound, s.get("/missing").status)
		assert.Zero(t, s.stats("GET /fail").Error)
		assert.Equal(t, int64(1), s.stats("GET /hello").Error)
		assert.Equal(t, int64(1), s.stats("GET /missing").Error)
		mu.Lock()
		defer mu.Unlock()
		assert.ElementsMatch(t, []int{500, 200, 404}, seen)
	})
}

func testAllowedFields(t *testing.T, f factory) {
	rules := []core.Rule{
		{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 10, Window: 2 * time.Second},
		{Name: "per-user", Resource: "GET /hello", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 2, Window: time.Second},
	}
	s := start(t, f, Options{}, rules...)
	check := func(res response, policy, limit string) {
		t.Helper()
		require.Equal(t, http.StatusOK, res.status)
		rateLimitFields(t, res)
		assert.Equal(t, []string{policy}, res.header.Values("RateLimit-Policy"))
		assert.Equal(t, []string{limit}, res.header.Values("RateLimit"))
	}
	check(s.get("/hello"), `"hello-rate";q=10;w=2`, `"hello-rate";r=9;t=2`)
	// Every rate rule that admitted the request is listed: alice's too.
	check(s.get("/hello", "X-User-ID: alice"), `"hello-rate";q=10;w=2, "per-user";q=2;w=1`, `"hello-rate";r=8;t=2, "per-user";r=1;t=1`)
	res := s.get("/items/1")
	require.Equal(t, http.StatusOK, res.status)
	assert.Empty(t, res.header.Values("RateLimit"), "no rate rule, no fields")
	assert.Empty(t, res.header.Values("RateLimit-Policy"))

	// New rules with the same names (counts kept): the fields follow them.
	changed := slices.Clone(rules)
	changed[0].Limit, changed[1].Window = 20, time.Minute
	require.NoError(t, s.guard.SetRules(changed))
	// alice's bucket is empty: t is when her next request passes, 30s
	// (she owes her first at the new rate, 2 per minute).
	check(s.get("/hello", "X-User-ID: alice"), `"hello-rate";q=20;w=2, "per-user";q=2;w=60`, `"hello-rate";r=17;t=2, "per-user";r=0;t=30`)
	check(s.get("/hello"), `"hello-rate";q=20;w=2`, `"hello-rate";r=16;t=2`)

	// Turned off, admitted responses have none; blocked ones keep theirs.
	s = start(t, f, Options{NoRateLimitFields: true}, rules...)
	for range 10 {
		res = s.get("/hello")
		require.Equal(t, http.StatusOK, res.status)
		assert.Empty(t, res.header.Values("RateLimit"), "turned off")
		assert.Empty(t, res.header.Values("RateLimit-Policy"), "turned off")
	}
	res = s.get("/hello")
	require.Equal(t, http.StatusTooManyRequests, res.status)
	assert.Equal(t, []string{`"hello-rate";r=0;t=2`}, res.header.Values("RateLimit"))
}

// testKeptFields: the RateLimit fields' values of a response belong to it
// for good, whatever the adapter carves them from: a handler that keeps
// them after it returns, read while later requests are served (by another
// goroutine, for the race detector), finds them as they were, and one that
// adds to them changes no other response's.
func testKeptFields(t *testing.T, f factory) {
	rules := []core.Rule{
		{Name: "keep-rate", Resource: "GET /keep", Kind: core.KindFlow, Limit: 1_000_000, Window: time.Second},
		{Name: "per-user", Resource: "GET /keep", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 1_000_000, Window: time.Second},
	}
	s := start(t, f, Options{}, rules...)
	const clients, requests = 4, 100
	var all []keptFields
	checked := make(chan struct{})
	go func() { // reads each kept value while later requests are served
		defer close(checked)
		for k := range s.kept {
			all = append(all, k)
			for _, k := range all {
				if !slices.Equal(k.policy, k.want[0]) || !slices.Equal(k.limit, k.want[1]) {
					t.Errorf("kept fields changed after the handler returned: %q %q, was %q", k.policy, k.limit, k.want)
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			user := "X-User-ID: user" + strconv.Itoa(c)
			for range requests {
				res := s.get("/keep", user)
				if !assert.Equal(t, http.StatusOK, res.status) {
					return
				}
				// The fields sent are those the handler was given and what it added.
				assert.Equal(t, []string{string(res.body), `"extra";r=9;t=9`}, res.header.Values("RateLimit"))
				policies, limits := rateLimitFields(t, res)
				names := []string{"keep-rate", "per-user", "extra"}
				if !assert.Len(t, policies, 3, "%q", res.header) || !assert.Len(t, limits, 3) {
					return
				}
				for i, want := range names {
					assert.Equal(t, want, policies[i].Name)
				}
				assert.Equal(t, int64(9), limits[2].Params["r"], "what the handler added")
			}
		})
	}
	wg.Wait()
	close(s.kept)
	<-checked
	require.Len(t, all, clients*requests)
	for _, k := range all {
		require.Len(t, k.policy, 1)
		require.Len(t, k.limit, 1)
		assert.Equal(t, `"keep-rate";q=1000000;w=1, "per-user";q=1000000;w=1`, k.policy[0])
	}
}

func testBlockHandler(t *testing.T, f factory) {
	s := start(t, f, Options{BlockStatus: http.StatusTeapot}, core.Rule{Name: "nothing", Resource: "GET /hello", Kind: core.KindFlow, Limit: 0})
	res := s.get("/hello")
	assert.Equal(t, http.StatusTeapot, res.status)
	assert.Equal(t, "nothing", res.header.Get("X-Blocked-By"))
	assert.Empty(t, res.body)
	assert.Empty(t, res.header.Values("RateLimit"), "the block handler replaces the whole response")
	assert.Zero(t, s.callsOf("/hello"))
}

func testLeakyWait(t *testing.T, f factory) {
	s := start(t, f, Options{}, core.Rule{Name: "paced", Resource: "GET /hello", Kind: core.KindFlow,
		Algorithm: "leaky-bucket", Limit: 1, Window: time.Second, MaxWait: 10 * time.Second})
	require.Equal(t, http.StatusOK, s.get("/hello").status)

	// The second request waits for its turn, a second later: it is served
	// once the clock gets there.
	done := make(chan response, 1)
	go func() { done <- s.getAsync("/hello") }()
	waitSleepers(t, s.clock, 1)
	select {
	case res := <-done:
		t.Fatalf("the request did not wait: %d", res.status)
	default:
	}
	s.clock.Advance(time.Second)
	assert.Equal(t, http.StatusOK, (<-done).status)
	s.drainServed()

	// The third waits too; its client gives up. The middleware writes
	// nothing, the handler never runs, and the Guard counts it blocked.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/hello", nil)
		res, err := s.client.Do(req)
		if err == nil {
			res.Body.Close()
		}
		errc <- err
	}()
	waitSleepers(t, s.clock, 1)
	cancel()
	require.True(t, errors.Is(<-errc, context.Canceled))
	select {
	case status := <-s.served:
		assert.NotContains(t, []int{http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusInternalServerError}, status,
			"the middleware answered a client that was gone")
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not end the request when its client went away")
	}
	assert.Equal(t, int64(2), s.callsOf("/hello"))
	// (The first request's pass is a second old: out of the statistics.)
	st := s.stats("GET /hello")
	assert.Equal(t, int64(1), st.Pass)
	assert.Equal(t, int64(1), st.Block)
	expired, cancelExpired := context.WithCancel(context.Background())
	cancelExpired()
	assert.Error(t, s.clock.WaitForSleepers(expired, 1), "no request waits on the clock")
}

func waitSleepers(t *testing.T, fc *clock.Fake, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, fc.WaitForSleepers(ctx, n), "no request waits on the clock")
}

// checkBreakerBlocked checks the response to a request of resource an
// open breaker named rule blocked: 503, Retry-After equal to the body's
// retryAfter and at least minRetry seconds, no RateLimit fields, a
// temporary-reduced-capacity problem with exactly the members type, title,
// status, detail, rule, kind and retryAfter (no quota claims), whose detail
// names the resource, the rule and the retry time. It returns Retry-After in
// seconds.
func checkBreakerBlocked(t *testing.T, res response, resource, rule string, minRetry int64) int64 {
	t.Helper()
	require.Equal(t, http.StatusServiceUnavailable, res.status, "body: %s", res.body)
	assert.Equal(t, "application/problem+json", res.header.Get("Content-Type"))
	assert.Equal(t, "no-store", res.header.Get("Cache-Control"))
	assert.Empty(t, res.header.Values("RateLimit"), "a breaker is no quota policy")
	assert.Empty(t, res.header.Values("RateLimit-Policy"))
	var p Problem
	require.NoError(t, json.Unmarshal(res.body, &p), "body: %s", res.body)
	assert.Equal(t, "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity", p.Type)
	assert.Equal(t, "Temporary Reduced Capacity", p.Title)
	assert.Equal(t, http.StatusServiceUnavailable, p.Status)
	assert.Equal(t, rule, p.Rule)
	assert.Equal(t, "breaker", p.Kind)
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(res.body, &members))
	assert.ElementsMatch(t, []string{"type", "title", "status", "detail", "rule", "kind", "retryAfter"}, slices.Collect(maps.Keys(members)),
		"a breaker's problem makes no quota claims (limit, window, violated-policies): %s", res.body)
	retry, err := strconv.ParseInt(res.header.Get("Retry-After"), 10, 64)
	require.NoError(t, err, "Retry-After %q", res.header.Get("Retry-After"))
	assert.GreaterOrEqual(t, retry, minRetry)
	assert.Equal(t, retry, p.RetryAfter)
	assert.Equal(t, resource+` is failing: circuit breaker "`+rule+`" is open; retry in `+strconv.FormatInt(retry, 10)+"s", p.Detail)
	return retry
}

func testBreaker(t *testing.T, f factory) {
	s := start(t, f, Options{},
		core.Rule{Name: "fail-rate", Resource: "GET /fail", Kind: core.KindFlow, Limit: 100, Window: time.Minute},
		core.Rule{Name: "fail-breaker", Resource: "GET /fail", Kind: core.KindBreaker, Strategy: "error-count",
			Threshold: 2, MinRequests: 1, OpenFor: 5 * time.Second})
	for range 2 {
		res := s.get("/fail")
		require.Equal(t, http.StatusInternalServerError, res.status)
		assert.NotEmpty(t, res.header.Values("RateLimit"), "allowed responses carry the flow rule's fields")
	}
	// Two 5xx: the breaker is open, and the handler is not called.
	checkBreakerBlocked(t, s.get("/fail"), "GET /fail", "fail-breaker", 5)
	assert.Equal(t, int64(2), s.callsOf("/fail"))
	s.clock.Advance(3 * time.Second)
	checkBreakerBlocked(t, s.get("/fail"), "GET /fail", "fail-breaker", 2)
	// Other routes are not affected.
	assert.Equal(t, http.StatusOK, s.get("/hello").status)

	// After openFor, one probe reaches the handler; it fails, so the
	// breaker opens again.
	s.clock.Advance(2 * time.Second)
	assert.Equal(t, http.StatusInternalServerError, s.get("/fail").status)
	assert.Equal(t, int64(3), s.callsOf("/fail"))
	checkBreakerBlocked(t, s.get("/fail"), "GET /fail", "fail-breaker", 5)
	snap := s.guard.Snapshot()
	require.NotNil(t, snap.Rules[1].Breaker)
	assert.Equal(t, int64(2), snap.Rules[1].Breaker.Trips)
	assert.Equal(t, int64(3), snap.Resources[0].Total.BlockedBy[string(core.KindBreaker)])
}

func testBreakerSlow(t *testing.T, f factory) {
	s := start(t, f, Options{}, core.Rule{Name: "hold-breaker", Resource: "GET /hold", Kind: core.KindBreaker,
		Strategy: "slow-ratio", Threshold: 1, MaxRT: 100 * time.Millisecond, MinRequests: 1, OpenFor: time.Second})
	first := make(chan response, 1)
	go func() { first <- s.getAsync("/hold") }()
	<-s.entered
	s.clock.Advance(150 * time.Millisecond) // the request takes 150ms on the Guard's clock
	s.release <- struct{}{}
	require.Equal(t, http.StatusOK, (<-first).status, "a slow response is still a response")
	checkBreakerBlocked(t, s.get("/hold"), "GET /hold", "hold-breaker", 1)
	assert.Equal(t, int64(1), s.callsOf("/hold"))
	// The probe is fast: the breaker closes. While it is out, the
	// half-open breaker blocks the others, until the probe's deadline
	// (openFor after it started).
	s.clock.Advance(time.Second)
	go func() { first <- s.getAsync("/hold") }()
	<-s.entered
	checkBreakerBlocked(t, s.get("/hold"), "GET /hold", "hold-breaker", 1)
	assert.Equal(t, int64(2), s.callsOf("/hold"))
	s.release <- struct{}{}
	require.Equal(t, http.StatusOK, (<-first).status)
	go func() { first <- s.getAsync("/hold") }()
	<-s.entered
	s.release <- struct{}{}
	require.Equal(t, http.StatusOK, (<-first).status, "closed again")
}

// testBreakerRecovers trips an error-count breaker with failing requests,
// checks that nothing reaches the handler while it is open, then lets a
// successful probe through after openFor: the breaker closes, requests pass
// again, and it trips again on fresh statistics.
func testBreakerRecovers(t *testing.T, f factory) {
	s := start(t, f, Options{}, core.Rule{Name: "flaky-breaker", Resource: "GET /flaky", Kind: core.KindBreaker,
		Strategy: "error-count", Threshold: 2, MinRequests: 1, OpenFor: 1500 * time.Millisecond})
	for i := range 2 {
		res := s.get("/flaky")
		require.Equal(t, http.StatusInternalServerError, res.status, "request %d goes through and fails", i+1)
		assert.Empty(t, res.header.Values("Retry-After"))
	}
	// Open: however many requests come, none reaches the handler.
	for range 3 {
		assert.Equal(t, int64(2), checkBreakerBlocked(t, s.get("/flaky"), "GET /flaky", "flaky-breaker", 1),
			"1.5s until a probe: Retry-After rounds up")
	}
	assert.Equal(t, int64(2), s.callsOf("/flaky"))
	s.clock.Advance(1499 * time.Millisecond)
	assert.Equal(t, int64(1), checkBreakerBlocked(t, s.get("/flaky"), "GET /flaky", "flaky-breaker", 1))
	assert.Equal(t, int64(2), s.callsOf("/flaky"), "the handler is not called while the breaker is open")

	// openFor has passed: the probe reaches the handler, which works again,
	// and its success closes the breaker.
	s.flaky.Store(http.StatusOK)
	s.clock.Advance(time.Millisecond)
	for i := range 6 {
		res := s.get("/flaky")
		require.Equal(t, http.StatusOK, res.status, "request %d after openFor: %s", i+1, res.body)
		assert.Equal(t, "OK\n", string(res.body))
	}
	assert.Equal(t, int64(8), s.callsOf("/flaky"))

	// Closed afresh: one failure is under the threshold, the second trips
	// it again.
	s.flaky.Store(0)
	require.Equal(t, http.StatusInternalServerError, s.get("/flaky").status)
	require.Equal(t, http.StatusInternalServerError, s.get("/flaky").status)
	checkBreakerBlocked(t, s.get("/flaky"), "GET /flaky", "flaky-breaker", 2)
	assert.Equal(t, int64(10), s.callsOf("/flaky"))

	snap := s.guard.Snapshot()
	require.Len(t, snap.Rules, 1)
	require.NotNil(t, snap.Rules[0].Breaker)
	assert.EqualValues(t, "open", snap.Rules[0].Breaker.State)
	assert.Equal(t, int64(2), snap.Rules[0].Breaker.Trips)
	require.Len(t, snap.Resources, 1)
	assert.Equal(t, int64(5), snap.Resources[0].Total.BlockedBy[string(core.KindBreaker)])
}

// testBreakerResponse checks a breaker's response byte for byte, with the
// RateLimit fields asked for on allowed responses and set by a middleware
// outside the adapter: the blocked response has none of them.
func testBreakerResponse(t *testing.T, f factory) {
	preset := http.Header{"Ratelimit-Policy": {`"outer";q=9;w=1`}, "Ratelimit": {`"outer";r=8;t=1`}}
	s := startWith(t, f, Options{}, preset,
		core.Rule{Name: "flaky-rate", Resource: "GET /flaky", Kind: core.KindFlow, Limit: 100, Window: time.Minute},
		core.Rule{Name: "flaky-breaker", Resource: "GET /flaky", Kind: core.KindBreaker, Strategy: "error-count",
			Threshold: 1, MinRequests: 1, OpenFor: 4500 * time.Millisecond})
	res := s.get("/flaky")
	require.Equal(t, http.StatusInternalServerError, res.status)
	assert.Equal(t, []string{`"flaky-rate";q=100;w=60`}, res.header.Values("RateLimit-Policy"), "the flow rule's fields replace the outer ones")

	res = s.get("/flaky")
	require.Equal(t, http.StatusServiceUnavailable, res.status)
	want := `{"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity",` +
		`"title":"Temporary Reduced Capacity","status":503,` +
		`"detail":"GET /flaky is failing: circuit breaker \"flaky-breaker\" is open; retry in 5s",` +
		`"rule":"flaky-breaker","kind":"breaker","retryAfter":5}`
	assert.Equal(t, want, string(res.body))
	assert.Equal(t, []string{"5"}, res.header.Values("Retry-After"))
	assert.Equal(t, []string{"application/problem+json"}, res.header.Values("Content-Type"))
	assert.Equal(t, []string{"no-store"}, res.header.Values("Cache-Control"))
	assert.Equal(t, []string{"nosniff"}, res.header.Values("X-Content-Type-Options"))
	assert.Equal(t, strconv.Itoa(len(want)), res.header.Get("Content-Length"))
	assert.Empty(t, res.header.Values("RateLimit-Policy"), "no RateLimit fields, not even those set outside the adapter")
	assert.Empty(t, res.header.Values("RateLimit"))
	assert.Equal(t, int64(1), s.callsOf("/flaky"))
}

// severalRules are a flow rule of 3 per second and a per-user token bucket
// of 1 per 10s on one route: the per-user rule's wait is the longer.
func severalRules() []core.Rule {
	return []core.Rule{
		{Name: "items-rate", Resource: "GET /items/{id}", Kind: core.KindFlow, Limit: 3, Window: time.Second},
		{Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot, Param: "header:X-User-ID",
			Limit: 1, Window: 10 * time.Second, Overrides: map[string]int64{"banned": 0}},
	}
}

// testSeveralRules: when the flow rule and the per-user rule both reject a
// request, Retry-After is the per-user rule's (the later) retry time, the
// RateLimit fields list both policies, each with its own t, and
// violated-policies names both; a client that waits exactly Retry-After
// passes, one that waits the flow rule's t does not. A request only the
// per-user rule rejects lists the flow rule's quota as it was before it.
func testSeveralRules(t *testing.T, f factory) {
	s := start(t, f, Options{}, severalRules()...)
	for _, u := range []string{"alice", "bob", "carol"} {
		require.Equal(t, http.StatusOK, s.get("/items/1", "X-User-ID: "+u).status, u)
	}
	s.clock.Advance(100 * time.Millisecond)
	res := s.get("/items/1", "X-User-ID: alice")
	retry := checkBlocked(t, res, http.StatusTooManyRequests, "per-user", 1, 10*time.Second)
	assert.Equal(t, int64(10), retry, "9.9s, the per-user rule's, rounded up")
	var p Problem
	require.NoError(t, json.Unmarshal(res.body, &p))
	assert.Equal(t, []string{"items-rate", "per-user"}, p.ViolatedPolicies)
	assert.Equal(t, "header:X-User-ID", p.Param)
	assert.Equal(t, []string{`"items-rate";q=3;w=1, "per-user";q=1;w=10`}, res.header.Values("RateLimit-Policy"))
	assert.Equal(t, []string{`"items-rate";r=0;t=1, "per-user";r=0;t=10`}, res.header.Values("RateLimit"))

	s.clock.Advance(time.Second)
	checkBlocked(t, s.get("/items/1", "X-User-ID: alice"), http.StatusTooManyRequests, "per-user", 1, 10*time.Second)
	s.clock.Advance(time.Duration(retry)*time.Second - time.Second)
	require.Equal(t, http.StatusOK, s.get("/items/1", "X-User-ID: alice").status, "a client that waits as told passes")

	// Only the per-user rule rejects: the flow rule's quota is listed as
	// the rejected request found it (its permit was given back).
	res = s.get("/items/1", "X-User-ID: alice")
	checkBlocked(t, res, http.StatusTooManyRequests, "per-user", 1, 10*time.Second)
	require.NoError(t, json.Unmarshal(res.body, &p))
	assert.Equal(t, []string{"per-user"}, p.ViolatedPolicies)
	assert.Equal(t, []string{`"items-rate";r=2;t=1, "per-user";r=0;t=10`}, res.header.Values("RateLimit"))
	for _, u := range []string{"bob", "carol"} {
		require.Equal(t, http.StatusOK, s.get("/items/1", "X-User-ID: "+u).status, "%s: the rejected request took nothing", u)
	}
}

// testNeverPasses: a request no wait lets through (a value overridden to
// 0) gets 403 with the will-not-pass problem and nothing that invites a
// retry, also when another rule that rejects it has a retry time.
func testNeverPasses(t *testing.T, f factory) {
	s := start(t, f, Options{}, severalRules()...)
	res := s.get("/items/1", "X-User-ID: banned")
	checkBlocked(t, res, http.StatusForbidden, "per-user", 0, 10*time.Second)
	for _, u := range []string{"a", "b", "c"} {
		require.Equal(t, http.StatusOK, s.get("/items/1", "X-User-ID: "+u).status, u)
	}
	res = s.get("/items/1", "X-User-ID: banned")
	checkBlocked(t, res, http.StatusForbidden, "per-user", 0, 10*time.Second)
	var p Problem
	require.NoError(t, json.Unmarshal(res.body, &p))
	assert.Equal(t, []string{"items-rate", "per-user"}, p.ViolatedPolicies)
	assert.NotContains(t, string(res.body), "banned", "the value is never echoed")
	assert.Equal(t, int64(3), s.callsOf("/items/{id}"), "blocked requests never reach the handler")
}

// testBucketPolicy: a token bucket's policy holds its burst (q is its
// capacity, over the time it takes to refill it at the bucket's rate), so
// that r never exceeds q, on admitted and blocked responses alike.
func testBucketPolicy(t *testing.T, f factory) {
	s := start(t, f, Options{}, core.Rule{Name: "bucket", Resource: "GET /hello", Kind: core.KindFlow,
		Algorithm: "token-bucket", Limit: 2, Burst: 3, Window: time.Second})
	for i := range 5 {
		res := s.get("/hello")
		require.Equal(t, http.StatusOK, res.status, "request %d: the burst", i+1)
		rateLimitFields(t, res)
		assert.Equal(t, []string{`"bucket";q=5;w=3`}, res.header.Values("RateLimit-Policy"), "5 per 2.5s, rounded up")
		// t: until the bucket is full again, or, once it is empty, until
		// the next token (what the 429 after it says).
		reset := strconv.Itoa((i + 2) / 2)
		if i == 4 {
			reset = "1"
		}
		assert.Equal(t, []string{`"bucket";r=` + strconv.Itoa(4-i) + ";t=" + reset}, res.header.Values("RateLimit"))
	}
	retry := checkBlocked(t, s.get("/hello"), http.StatusTooManyRequests, "bucket", 5, 2500*time.Millisecond)
	assert.Equal(t, int64(1), retry, "a token every 500ms")
}

func testContextParam(t *testing.T, f factory) {
	rule := core.Rule{Name: "per-user", Resource: "GET /hello", Kind: core.KindHotspot, Param: "user", Limit: 1, Window: time.Second}
	s := start(t, f, Options{Auth: true}, rule)
	require.Equal(t, http.StatusOK, s.get("/hello", AuthHeader+": alice").status)
	checkBlocked(t, s.get("/hello", AuthHeader+": alice"), http.StatusTooManyRequests, "per-user", 1, time.Second)
	require.Equal(t, http.StatusOK, s.get("/hello", AuthHeader+": bob").status, "bob has a limit of his own")
	for range 3 {
		require.Equal(t, http.StatusOK, s.get("/hello").status, "no user, no limit")
	}
	s.clock.Advance(time.Second)
	require.Equal(t, http.StatusOK, s.get("/hello", AuthHeader+": alice").status)
}

func testCost(t *testing.T, f factory) {
	rule := core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 10, Window: time.Second}
	s := start(t, f, Options{Cost: true}, rule)
	res := s.get("/hello", "X-Cost: 6")
	require.Equal(t, http.StatusOK, res.status)
	assert.Equal(t, []string{`"hello-rate";r=4;t=1`}, res.header.Values("RateLimit"), "six permits taken")
	checkBlocked(t, s.get("/hello", "X-Cost: 6"), http.StatusTooManyRequests, "hello-rate", 10, time.Second)
	require.Equal(t, http.StatusOK, s.get("/hello", "X-Cost: 4").status)
	checkBlocked(t, s.get("/hello", "X-Cost: 0"), http.StatusTooManyRequests, "hello-rate", 10, time.Second)
	assert.Equal(t, int64(2), s.callsOf("/hello"))

	// A cost above the limit can never pass.
	res = s.get("/hello", "X-Cost: 11")
	assert.Equal(t, http.StatusForbidden, res.status)
}

func testFrameworkClientIP(t *testing.T, f factory) {
	rule := core.Rule{Name: "per-ip", Resource: "GET /hello", Kind: core.KindHotspot, Param: "ip", Limit: 1, Window: time.Second}
	s := start(t, f, Options{FrameworkClientIP: true}, rule)
	require.Equal(t, http.StatusOK, s.get("/hello", "X-Forwarded-For: 203.0.113.1").status)
	checkBlocked(t, s.get("/hello", "X-Forwarded-For: 203.0.113.1"), http.StatusTooManyRequests, "per-ip", 1, time.Second)
	require.Equal(t, http.StatusOK, s.get("/hello", "X-Forwarded-For: 203.0.113.2").status, "another client behind the proxy the framework trusts")

	// Without the option, the Extractor trusts no proxy: all are one peer.
	s = start(t, f, Options{}, rule)
	require.Equal(t, http.StatusOK, s.get("/hello", "X-Forwarded-For: 203.0.113.1").status)
	checkBlocked(t, s.get("/hello", "X-Forwarded-For: 203.0.113.2"), http.StatusTooManyRequests, "per-ip", 1, time.Second)
}
