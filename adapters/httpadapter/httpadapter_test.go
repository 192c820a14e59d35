package httpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	"github.com/sluicekit/sluice/core"
)

func TestCeilSeconds(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want int64
	}{
		{math.MinInt64, 0},
		{-time.Second, 0},
		{0, 0},
		{1, 1},
		{999 * time.Millisecond, 1},
		{time.Second, 1},
		{time.Second + 1, 2},
		{1500 * time.Millisecond, 2},
		{time.Minute, 60},
		{math.MaxInt64, 9223372037}, // no overflow
	} {
		assert.Equal(t, tt.want, ceilSeconds(tt.d), "%d", tt.d)
	}
}

func TestAppendSFString(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"hello-rate", `"hello-rate"`},
		{"", `""`},
		{`say "hi"`, `"say \"hi\""`},
		{`back\slash`, `"back\\slash"`},
		{"100%", `"100%25"`},
		{"ü", `"%C3%BC"`},
		{"a\r\nb\x00\x7f", `"a%0D%0Ab%00%7F"`},
		{"; q=1, \"x\";r=2", `"; q=1, \"x\";r=2"`},
	} {
		assert.Equal(t, tt.want, string(appendSFString(nil, tt.in)), "%q", tt.in)
	}
}

// FuzzAppendSFString checks that any name becomes one valid structured
// field String from which the name is recovered exactly.
func FuzzAppendSFString(f *testing.F) {
	for _, s := range []string{"rule", `"\`, "%", "ü\xff", "a,b;c=d", "\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		field := string(appendSFString(nil, s))
		items, err := adaptertest.ParseList(field)
		require.NoError(t, err)
		require.Len(t, items, 1)
		got, err := adaptertest.Decode(items[0].Name)
		require.NoError(t, err)
		require.Equal(t, s, got)
	})
}

// FuzzAppendJSONString checks that any string becomes valid JSON that
// decodes to the string, invalid UTF-8 bytes each replaced by U+FFFD.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"plain", "\"\\/", "\x00\x1f\x7f", "ü\u2028\u2029", "\xff\xfe", "<script>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := appendJSONString(nil, s)
		require.True(t, json.Valid(out), "%s", out)
		var got string
		require.NoError(t, json.Unmarshal(out, &got))
		var want strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			want.WriteRune(r) // RuneError for an invalid byte
			i += n
		}
		require.Equal(t, want.String(), got)
	})
}

func TestRateLimitFields(t *testing.T) {
	for _, tt := range []struct {
		name          string
		p             core.Quota
		policy, limit string
	}{
		{"window", core.Quota{Rule: "hello", Limit: 5, Window: time.Second, Remaining: 2, Reset: 300 * time.Millisecond},
			`"hello";q=5;w=1`, `"hello";r=2;t=1`},
		{"window rounded up", core.Quota{Rule: "r", Limit: 3, Window: 1500 * time.Millisecond, Remaining: 0, Reset: 1200 * time.Millisecond},
			`"r";q=3;w=2`, `"r";r=0;t=2`},
		{"sub-second window", core.Quota{Rule: "fast", Limit: 10, Window: 100 * time.Millisecond, Reset: 50 * time.Millisecond},
			`"fast";q=10;w=1`, `"fast";r=0;t=1`},
		{"reset now", core.Quota{Rule: "r", Limit: 3, Window: time.Minute, Remaining: 3},
			`"r";q=3;w=60`, `"r";r=3;t=0`},
		{"in flight", core.Quota{Rule: "slots", Limit: 3},
			`"slots";q=3;qu="concurrent-requests"`, `"slots";r=0`},
		{"clamped", core.Quota{Rule: "big", Limit: math.MaxInt64, Window: time.Hour, Remaining: -4, Reset: time.Hour},
			`"big";q=999999999999999;w=3600`, `"big";r=0;t=3600`},
		{"escaped name", core.Quota{Rule: `a"b`, Limit: 1, Window: time.Second},
			`"a\"b";q=1;w=1`, `"a\"b";r=0;t=0`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			setRateLimitFields(h, tt.p)
			assert.Equal(t, []string{tt.policy}, h.Values("RateLimit-Policy"))
			assert.Equal(t, []string{tt.limit}, h.Values("RateLimit"))
			for _, v := range []string{tt.policy, tt.limit} {
				_, err := adaptertest.ParseList(v)
				assert.NoError(t, err)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	assert.Equal(t, 429, Status(&core.BlockedError{Kind: core.KindFlow, Window: time.Second}))
	assert.Equal(t, 429, Status(&core.BlockedError{Kind: core.KindHotspot, Window: time.Second}))
	assert.Equal(t, 429, Status(&core.BlockedError{Kind: core.KindHotspot}), "per-value in flight")
	assert.Equal(t, 503, Status(&core.BlockedError{Kind: core.KindConcurrency}))
	assert.Equal(t, 503, Status(&core.BlockedError{Kind: core.KindBreaker, RetryAfter: time.Second}))
}

func TestWriteBlockedBreaker(t *testing.T) {
	for _, tt := range []struct {
		name   string
		b      core.BlockedError
		retry  string
		detail string
	}{
		{"open", core.BlockedError{Resource: "GET /fail", Rule: "fail-breaker", Kind: core.KindBreaker, RetryAfter: 4200 * time.Millisecond},
			"5", `GET /fail is failing: circuit breaker \"fail-breaker\" is open; retry in 5s`},
		{"no retry time", core.BlockedError{Resource: "GET /fail", Rule: "fail-breaker", Kind: core.KindBreaker},
			"", `GET /fail is failing: circuit breaker \"fail-breaker\" is open`},
		{"escaped", core.BlockedError{Resource: "GET /a\"b", Rule: "x\ny", Kind: core.KindBreaker, RetryAfter: time.Nanosecond},
			"1", `GET /a\"b is failing: circuit breaker \"x\ny\" is open; retry in 1s`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			// Fields an earlier middleware set: a breaker's response
			// claims no quota, and has a Retry-After only when it knows
			// the retry time.
			w.Header().Set("Retry-After", "stale")
			w.Header().Set("RateLimit-Policy", `"outer";q=1;w=1`)
			w.Header().Set("RateLimit", `"outer";r=0;t=1`)
			WriteBlocked(w, &tt.b)
			assert.Equal(t, 503, w.Code)
			assert.Equal(t, tt.retry, w.Header().Get("Retry-After"))
			assert.Empty(t, w.Header().Values("RateLimit-Policy"))
			assert.Empty(t, w.Header().Values("RateLimit"))
			assert.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
			assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
			retry := tt.retry
			if retry == "" {
				retry = "0"
			}
			rule, _ := json.Marshal(tt.b.Rule)
			want := `{"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity",` +
				`"title":"Temporary Reduced Capacity","status":503,"detail":"` + tt.detail + `",` +
				`"rule":` + string(rule) + `,"kind":"breaker","retryAfter":` + retry + `}`
			assert.Equal(t, want, w.Body.String())
			assert.Equal(t, fmt.Sprint(w.Body.Len()), w.Header().Get("Content-Length"))
			assert.True(t, json.Valid(w.Body.Bytes()))
		})
	}
}

// TestSetBlockedHeadersKinds checks the fields of each kind of block on a
// header that already holds RateLimit fields: replaced for quotas, removed
// for a breaker.
func TestSetBlockedHeadersKinds(t *testing.T) {
	for _, tt := range []struct {
		b                    core.BlockedError
		retry, policy, limit string
	}{
		{core.BlockedError{Rule: "f", Kind: core.KindFlow, Limit: 2, Window: time.Second, RetryAfter: time.Second},
			"1", `"f";q=2;w=1`, `"f";r=0;t=1`},
		{core.BlockedError{Rule: "c", Kind: core.KindConcurrency, Limit: 2},
			"", `"c";q=2;qu="concurrent-requests"`, `"c";r=0`},
		{core.BlockedError{Rule: "b", Kind: core.KindBreaker, RetryAfter: 2500 * time.Millisecond},
			"3", "", ""},
	} {
		h := http.Header{}
		h.Set("RateLimit-Policy", `"outer";q=1;w=1`)
		h.Set("RateLimit", `"outer";r=0;t=1`)
		h.Set("Retry-After", "9")
		setBlockedHeaders(h, &tt.b)
		assert.Equal(t, tt.retry, h.Get("Retry-After"), tt.b.Rule)
		assert.Equal(t, tt.policy, h.Get("RateLimit-Policy"), tt.b.Rule)
		assert.Equal(t, tt.limit, h.Get("RateLimit"), tt.b.Rule)
		if tt.policy == "" {
			assert.NotContains(t, h, "Ratelimit-Policy")
			assert.NotContains(t, h, "Ratelimit")
		}
	}
}

func TestWriteBlocked(t *testing.T) {
	for _, tt := range []struct {
		name    string
		b       core.BlockedError
		status  int
		headers map[string]string
		body    string
	}{
		{
			name: "flow",
			b: core.BlockedError{Resource: "GET /hello", Rule: "hello-rate", Kind: core.KindFlow, Limit: 5,
				Window: time.Second, RetryAfter: 300 * time.Millisecond},
			status: 429,
			headers: map[string]string{"Retry-After": "1", "RateLimit-Policy": `"hello-rate";q=5;w=1`,
				"RateLimit": `"hello-rate";r=0;t=1`, "Content-Type": "application/problem+json", "Cache-Control": "no-store"},
			body: `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Quota Exceeded",` +
				`"status":429,"detail":"GET /hello allows 5 requests per 1s; retry in 1s","rule":"hello-rate",` +
				`"limit":5,"window":1,"retryAfter":1,"violated-policies":["hello-rate"]}`,
		},
		{
			name: "hotspot",
			b: core.BlockedError{Resource: "GET /items/{id}", Rule: "per-user", Kind: core.KindHotspot,
				Param: "header:X-User-ID", Limit: 10, Window: 500 * time.Millisecond, RetryAfter: 2100 * time.Millisecond},
			status: 429,
			headers: map[string]string{"Retry-After": "3", "RateLimit-Policy": `"per-user";q=10;w=1`,
				"RateLimit": `"per-user";r=0;t=3`},
			body: `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Quota Exceeded",` +
				`"status":429,"detail":"GET /items/{id} allows 10 requests per 500ms for each header:X-User-ID value; retry in 3s",` +
				`"rule":"per-user","limit":10,"window":0.5,"retryAfter":3,"param":"header:X-User-ID","violated-policies":["per-user"]}`,
		},
		{
			name:   "concurrency",
			b:      core.BlockedError{Resource: "GET /slow", Rule: "slow-inflight", Kind: core.KindConcurrency, Limit: 3},
			status: 503,
			headers: map[string]string{"Retry-After": "", "RateLimit-Policy": `"slow-inflight";q=3;qu="concurrent-requests"`,
				"RateLimit": `"slow-inflight";r=0`},
			body: `{"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity",` +
				`"title":"Temporary Reduced Capacity","status":503,"detail":"GET /slow allows 3 requests in flight; retry when one ends",` +
				`"rule":"slow-inflight","limit":3,"window":0,"retryAfter":0,"violated-policies":["slow-inflight"]}`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			w.Header().Set("Retry-After", "stale") // replaced, or removed
			WriteBlocked(w, &tt.b)
			assert.Equal(t, tt.status, w.Code)
			for k, v := range tt.headers {
				assert.Equal(t, v, w.Header().Get(k), k)
			}
			assert.Equal(t, tt.body, w.Body.String())
			assert.Equal(t, fmt.Sprint(w.Body.Len()), w.Header().Get("Content-Length"))
			assert.True(t, json.Valid(w.Body.Bytes()))
		})
	}
}

func TestWriteEnterError(t *testing.T) {
	w := httptest.NewRecorder()
	WriteEnterError(w)
	assert.Equal(t, 500, w.Code)
	assert.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
	assert.JSONEq(t, `{"type":"about:blank","title":"Internal Server Error","status":500}`, w.Body.String())
}

func TestRejection(t *testing.T) {
	b := &core.BlockedError{Rule: "r"}
	live := context.Background()
	got, gone := Rejection(live, b)
	assert.Same(t, b, got)
	assert.False(t, gone)
	got, gone = Rejection(live, fmt.Errorf("wrapped: %w", b))
	assert.Same(t, b, got)
	assert.False(t, gone)

	ended, cancel := context.WithCancel(context.Background())
	cancel()
	got, gone = Rejection(ended, fmt.Errorf("sluice: waiting: %w", context.Canceled))
	assert.Nil(t, got)
	assert.True(t, gone)
	got, gone = Rejection(live, context.DeadlineExceeded)
	assert.Nil(t, got)
	assert.True(t, gone)

	got, gone = Rejection(live, errors.New("something else"))
	assert.Nil(t, got)
	assert.False(t, gone)
}

func TestCommon(t *testing.T) {
	var c Common
	assert.PanicsWithValue(t, "pkg: New: nil *core.Guard (make one with core.New)", func() { c.Init("pkg: New", nil) })
	g, err := core.New()
	require.NoError(t, err)
	c.Init("pkg", g)
	require.NoError(t, c.FinishErr())
	require.NotNil(t, c.Extractor)
	require.NotNil(t, c.Classify)

	assert.NoError(t, c.ExitError(200, nil))
	assert.NoError(t, c.ExitError(404, nil))
	assert.ErrorIs(t, c.ExitError(500, nil), errStatus)
	handlerErr := errors.New("handler")
	assert.Equal(t, handlerErr, c.ExitError(200, handlerErr), "the handler's error is given to Exit")

	// A handler that wrote nothing after its request's context ended: the
	// client is gone, and Exit gets the context's error.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, c.HandlerExitError(ended, false, 200, nil), context.Canceled)
	assert.NoError(t, c.HandlerExitError(ended, true, 200, nil), "a response written after the client left")
	assert.NoError(t, c.HandlerExitError(context.Background(), false, 200, nil))
	assert.Equal(t, handlerErr, c.HandlerExitError(context.Background(), false, 200, handlerErr))
	// A handler's error after the client left: the hang-up may have caused it.
	err = c.HandlerExitError(ended, false, 200, handlerErr)
	assert.ErrorIs(t, err, handlerErr)
	assert.ErrorIs(t, err, context.Canceled)

	c.Classify = func(status int, err error) bool { return status == 404 }
	assert.NoError(t, c.HandlerExitError(ended, false, 200, nil), "the classifier decides")
	assert.ErrorIs(t, c.ExitError(404, nil), errStatus)
	assert.NoError(t, c.ExitError(500, handlerErr))
}

// TestRateLimitFieldsOwnValues: the fields of a blocked response list
// every policy, also past the buffer they are made in, cost two
// allocations, and appending to one field leaves the other as it was
// (their values share one slice).
func TestRateLimitFieldsOwnValues(t *testing.T) {
	long := strings.Repeat("n", 300)
	qs := []core.Quota{
		{Rule: "flow", Limit: 10, Window: time.Second, Reset: time.Second, Blocked: true},
		{Rule: long, Limit: 3, Window: time.Minute, Remaining: 1, Reset: 20 * time.Second},
		{Rule: "slots", Limit: 4, Remaining: 2},
	}
	h := http.Header{}
	setRateLimitFields(h, qs...)
	h.Add("RateLimit-Policy", "x")
	assert.Equal(t, []string{`"flow";q=10;w=1, "` + long + `";q=3;w=60, "slots";q=4;qu="concurrent-requests"`, "x"}, h.Values("RateLimit-Policy"))
	assert.Equal(t, []string{`"flow";r=0;t=1, "` + long + `";r=1;t=20, "slots";r=2`}, h.Values("RateLimit"))
	if !adaptertest.RaceEnabled {
		assert.Equal(t, 2.0, testing.AllocsPerRun(100, func() { setRateLimitFields(h, qs[0], qs[2]) }))
	}
}

// TestQuotaHeadersCached: SetQuotaHeaders writes what setRateLimitFields
// writes, for more rules than the hot list holds and for rules whose limit
// or window changed, alone and together, from many goroutines.
func TestQuotaHeadersCached(t *testing.T) {
	g, err := core.New()
	require.NoError(t, err)
	var c Common
	c.Init("test", g)
	var qs []core.Quota
	for i := range 3 * maxHotQuotas {
		qs = append(qs, core.Quota{Rule: fmt.Sprintf("rule \"%d\"", i), Limit: int64(i + 1), Window: time.Second, Remaining: int64(i), Reset: time.Duration(i) * time.Second})
	}
	check := func(qs ...core.Quota) {
		got, want := http.Header{}, http.Header{}
		c.SetQuotaHeaders(got, &QuotaFields{Quotas: qs})
		setRateLimitFields(want, qs...)
		require.Equal(t, want, got, "%v", qs)
	}
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for round := range 3 {
				for i := range qs {
					check(qs[i])
					check(qs[i], qs[(i+round)%len(qs)])
				}
				check(qs...)
			}
		}()
	}
	for range 4 {
		<-done
	}
	qs[0].Limit, qs[1].Window = 100, time.Minute
	check(qs[0])
	check(qs[0], qs[1])
	check(qs[1], qs[0])
}

// TestQuotaFieldsAllocs: the RateLimit fields of BenchGuard's two rules
// allocate a text block every ten responses or so and a block of values
// every sixteen (counted exactly: testing.AllocsPerRun would round 0.16
// down to 0), each response's values its own.
func TestQuotaFieldsAllocs(t *testing.T) {
	if adaptertest.RaceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	var c Common
	c.Init("test", adaptertest.BenchGuard(t))
	qs := []core.Quota{
		{Rule: "flow", Limit: 1_000_000_000, Window: time.Second, Remaining: 999_999_000, Reset: time.Second},
		{Rule: "per-user", Limit: 1_000_000_000, Window: time.Second, Remaining: 999_998_000, Reset: time.Second},
	}
	f := &QuotaFields{Quotas: qs}
	const n = 1600
	headers := make([]http.Header, n)
	for i := range headers {
		headers[i] = http.Header{keyContentType: nil} // a map with room
	}
	c.SetQuotaHeaders(http.Header{}, f) // the texts of the rules
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, h := range headers {
		qs[0].Remaining--
		c.SetQuotaHeaders(h, f)
	}
	runtime.ReadMemStats(&after)
	perResponse := float64(after.Mallocs-before.Mallocs) / n
	t.Logf("%.3f allocations per response", perResponse)
	assert.LessOrEqual(t, perResponse, 0.2)
	for i, h := range headers { // each as it was set
		assert.Equal(t, []string{`"flow";q=1000000000;w=1, "per-user";q=1000000000;w=1`}, h["Ratelimit-Policy"])
		assert.Equal(t, []string{fmt.Sprintf(`"flow";r=%d;t=1, "per-user";r=999998000;t=1`, 999_998_999-i)}, h["Ratelimit"])
	}
}

// BenchmarkSetQuotaHeaders is SetQuotaHeaders for the quotas of
// adaptertest.BenchGuard's two rules, with one QuotaFields, as a pool
// lends it to the adapters:
//
//	go test -run '^$' -bench SetQuotaHeaders -benchmem .
func BenchmarkSetQuotaHeaders(b *testing.B) {
	var c Common
	c.Init("bench", adaptertest.BenchGuard(b))
	qs := []core.Quota{
		// A sliding window's Reset is its window; a token bucket's the time
		// its bucket takes to fill.
		{Rule: "flow", Limit: 1_000_000_000, Window: time.Second, Remaining: 999_999_000, Reset: time.Second},
		{Rule: "per-user", Limit: 1_000_000_000, Window: time.Second, Remaining: 999_998_000, Reset: 2 * time.Microsecond},
	}
	h := http.Header{}
	f := &QuotaFields{Quotas: qs}
	b.ReportAllocs()
	for b.Loop() {
		clear(h)
		qs[0].Remaining--
		c.SetQuotaHeaders(h, f)
	}
}

// TestAppendSFInteger: the digits are strconv's, for every number of
// digits and the clamped ends.
func TestAppendSFInteger(t *testing.T) {
	cases := []int64{math.MinInt64, -1, 0, maxSFInteger, maxSFInteger + 1, math.MaxInt64}
	for p := int64(1); p <= maxSFInteger; p *= 10 {
		cases = append(cases, p-1, p, p+1, 2*p-1, 7*p+3)
	}
	for i := int64(0); i < 1000; i++ {
		cases = append(cases, i, i*7919*104729)
	}
	for _, n := range cases {
		want := strconv.FormatInt(min(max(n, 0), maxSFInteger), 10)
		assert.Equal(t, "x"+want, string(appendSFInteger([]byte("x"), n)), n)
	}
}
