package core

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/adaptive"
	"github.com/sluicekit/sluice/core/internal/breaker"
	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/history"
	"github.com/sluicekit/sluice/core/internal/hotspot"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/internal/doctext"
)

// TestDocumentedDefaults checks each default that the package
// documentation, core.Rule's and the options' doc comments, and package
// rulesfile's reference state: the code applies the constant (got) and
// every text states that constant. A change to a default, or to a doc's
// figure, fails it until both agree.
func TestDocumentedDefaults(t *testing.T) {
	const (
		pkg   = "doc.go"
		rule  = "rule.go"
		norm  = "rules_validate.go"
		rfile = "rulesfile/doc.go"
	)
	rs := normalized(t)
	g := defaultsGuard(t)
	sc := g.stores["redis"]
	for _, d := range []struct {
		name      string
		want, got any
		docs      []doctext.Phrase
	}{
		{"flow window", flow.DefaultWindow, rs["flow"].Window, []doctext.Phrase{
			{pkg, `limits the requests per Window \(default (\S+)\)`, doctext.Duration(flow.DefaultWindow)},
			{rule, `\(flow, hotspot; default (\S+)\)`, doctext.Duration(flow.DefaultWindow)},
			{norm, `every default applied: window (\S+),`, doctext.Duration(flow.DefaultWindow)},
			{rfile, `window: \S+ # default (\S+)`, doctext.Duration(flow.DefaultWindow)},
		}},
		{"hotspot window", hotspot.DefaultWindow, rs["hotspot"].Window, []doctext.Phrase{
			{rule, `\(flow, hotspot; default (\S+)\)`, doctext.Duration(hotspot.DefaultWindow)},
		}},
		{"flow algorithm", Algorithm(flow.DefaultAlgorithm), rs["flow"].Algorithm, []doctext.Phrase{
			{pkg, `(\S+) one atomic add, a sum over .{0,80}?\(default\)`, string(flow.DefaultAlgorithm)},
			{rule, `for flow rules any but concurrency \(default (\S+)\)`, string(flow.DefaultAlgorithm)},
			{norm, `algorithm (\S+) \(flow\)`, string(flow.DefaultAlgorithm)},
			{rfile, `# (\S+) \(default\) \| sliding-log`, string(flow.DefaultAlgorithm)},
		}},
		{"flow buckets", flow.DefaultBuckets, rs["flow"].Buckets, []doctext.Phrase{
			{pkg, `\(default\) Buckets \(default (\d+)\)`, strconv.Itoa(flow.DefaultBuckets)},
			{rule, `leap-array buckets of a flow rule or a breaker's statistics\. Default (\d+)\.`, strconv.Itoa(flow.DefaultBuckets)},
			{norm, `, (\d+) leap-array buckets,`, strconv.Itoa(flow.DefaultBuckets)},
		}},
		{"flow coldFactor", flow.DefaultColdFactor, rs["warmup"].ColdFactor, []doctext.Phrase{
			{pkg, `Limit/ColdFactor \(default (\d+)\)`, strconv.Itoa(flow.DefaultColdFactor)},
			{norm, `coldFactor (\d+) with warmup`, strconv.Itoa(flow.DefaultColdFactor)},
		}},
		{"hotspot algorithm", Algorithm(hotspot.DefaultAlgorithm), rs["hotspot"].Algorithm, []doctext.Phrase{
			{pkg, `\(ip\), with a (.+?) \(default\)`, strings.ReplaceAll(string(hotspot.DefaultAlgorithm), "-", " ")},
			{rule, `for hotspot rules (\S+) \(default\)`, string(hotspot.DefaultAlgorithm)},
			{norm, `or (\S+) \(hotspot\)`, string(hotspot.DefaultAlgorithm)},
			{rfile, `# (\S+) \(default\) \| leaky-bucket \| concurrency`, string(hotspot.DefaultAlgorithm)},
		}},
		{"hotspot maxKeys", defaultMaxKeys, rs["hotspot"].MaxKeys, []doctext.Phrase{
			{pkg, `at most MaxKeys values \(default ([\d,]+)\)`, thousands(defaultMaxKeys)},
			{norm, `MaxKeys (\d+),`, strconv.Itoa(defaultMaxKeys)},
			{rfile, `values tracked \(default (\d+)\)`, strconv.Itoa(defaultMaxKeys)},
		}},
		{"hotspot onMissing", MissingSkip, missingPolicy(t), []doctext.Phrase{
			{pkg, `lacks its param: (\S+) it \(the default\)`, string(MissingSkip)},
			{rule, `MissingSkip \(empty means (\S+)\)`, string(MissingSkip)},
			{rfile, `without the param: (\S+) \(default\)`, string(MissingSkip)},
		}},
		{"store flow algorithm", defaultStoreAlgorithm, rs["store-flow"].Algorithm, []doctext.Phrase{
			{pkg, `A flow rule then uses (\S+) \(its default there\)`, string(defaultStoreAlgorithm)},
			{rule, `A flow rule with a store uses the algorithm (\S+) \(its default there\)`, string(defaultStoreAlgorithm)},
		}},
		{"store hotspot algorithm", Algorithm(hotspot.DefaultAlgorithm), rs["store-hotspot"].Algorithm, []doctext.Phrase{
			{pkg, `leaky-bucket, a hotspot rule (\S+) \(its default\)`, string(hotspot.DefaultAlgorithm)},
			{rule, `leaky-bucket, a hotspot rule (\S+) \(its default\)`, string(hotspot.DefaultAlgorithm)},
		}},
		{"store mode", store.Exact, rs["store-flow"].Mode, []doctext.Phrase{
			{rule, `Mode is how the store decides: store\.(\w+) \(default;`, goName("", string(store.Exact))},
			{rfile, `# (\S+) \(default\) \| approximate`, string(store.Exact)},
		}},
		{"store onFailure", FailLocal, rs["store-flow"].OnFailure, []doctext.Phrase{
			{pkg, `OnFailure: (\S+) \(the default:`, string(FailLocal)},
			{rule, `OnFailure is what the rule does while its store fails: (\w+) \(default\)`, goName("Fail", string(FailLocal))},
			{rfile, `store failing: (\S+) \(default\)`, string(FailLocal)},
		}},
		{"store localLimit", rs["store-flow"].Limit, rs["store-flow"].LocalLimit, []doctext.Phrase{
			{rule, `divided by the number of instances\)\. Default (\w+)\.`, "Limit"},
			{rfile, `while the store fails; default (\w+)`, "limit"},
		}},
		{"breaker window", breaker.DefaultWindow, rs["breaker"].Window, []doctext.Phrase{
			{pkg, `counted over Window \(default (\S+)\)`, doctext.Duration(breaker.DefaultWindow)},
			{rule, `the span of a breaker's statistics \(default (\S+)\)`, doctext.Duration(breaker.DefaultWindow)},
			{rfile, `statistics window \(default (\S+)\),`, doctext.Duration(breaker.DefaultWindow)},
		}},
		{"breaker buckets", breaker.DefaultBuckets, rs["breaker"].Buckets, []doctext.Phrase{
			{rule, `leap-array buckets of a flow rule or a breaker's statistics\. Default (\d+)\.`, strconv.Itoa(breaker.DefaultBuckets)},
			{rfile, `in buckets \(default (\d+)\)`, strconv.Itoa(breaker.DefaultBuckets)},
		}},
		{"breaker minRequests", int64(breaker.DefaultMinRequests), rs["breaker"].MinRequests, []doctext.Phrase{
			{rule, `breaker's window before it may trip\. Default (\d+)\.`, strconv.Itoa(breaker.DefaultMinRequests)},
			{rfile, `before it may trip \(default (\d+)\)`, strconv.Itoa(breaker.DefaultMinRequests)},
		}},
		{"breaker openFor", breaker.DefaultOpenFor, rs["breaker"].OpenFor, []doctext.Phrase{
			{pkg, `blocked for OpenFor \(default (\S+)\)`, doctext.Duration(breaker.DefaultOpenFor)},
			{rule, `how long a probe may take\. Default (\S+)\.`, doctext.Duration(breaker.DefaultOpenFor)},
			{rfile, `let probes through \(default (\S+)\)`, doctext.Duration(breaker.DefaultOpenFor)},
		}},
		{"breaker probes", int64(breaker.DefaultProbes), rs["breaker"].Probes, []doctext.Phrase{
			{pkg, `Probes requests pass \(default (\d+)\)`, strconv.Itoa(breaker.DefaultProbes)},
			{rule, `all must succeed for it to close\. Default (\d+)\.`, strconv.Itoa(breaker.DefaultProbes)},
			{rfile, `all must succeed \(default (\d+)\)`, strconv.Itoa(breaker.DefaultProbes)},
		}},
		{"adaptive interval", adaptive.DefaultInterval, rs["adaptive"].Window, []doctext.Phrase{
			{rule, `requests that ended in it \(default (\S+)\)`, doctext.Duration(adaptive.DefaultInterval)},
		}},
		{"adaptive minLimit", int64(adaptive.DefaultMinLimit), rs["adaptive"].MinLimit, []doctext.Phrase{
			{rule, `requests in flight\. Defaults (\d+) \(or MaxLimit`, strconv.Itoa(adaptive.DefaultMinLimit)},
			{rfile, `bounds \(defaults (\d+) and`, strconv.Itoa(adaptive.DefaultMinLimit)},
		}},
		{"adaptive maxLimit", int64(adaptive.DefaultMaxLimit), rs["adaptive"].MaxLimit, []doctext.Phrase{
			{rule, `\(or MaxLimit when lower\) and (\d+)`, strconv.Itoa(adaptive.DefaultMaxLimit)},
			{rfile, `bounds \(defaults \d+ and (\d+)\)`, strconv.Itoa(adaptive.DefaultMaxLimit)},
		}},
		{"adaptive tolerance", adaptive.DefaultTolerance, rs["adaptive"].Tolerance, []doctext.Phrase{
			{rule, `at most 100; default ([\d.]+)\.`, strconv.FormatFloat(adaptive.DefaultTolerance, 'g', -1, 64)},
		}},
		{"adaptive probeInterval", adaptive.DefaultProbeInterval, rs["adaptive"].ProbeInterval, []doctext.Phrase{
			{rule, `At least Window; default (\S+)\.`, doctext.Duration(adaptive.DefaultProbeInterval)},
		}},
		{"WithMaxResources", defaultMaxResources, g.resources.max, []doctext.Phrase{
			{"guard.go", `keeps statistics for \(default (\d+)\)`, strconv.Itoa(defaultMaxResources)},
		}},
		{"WithUnmatchedAfter", defaultUnmatchedAfter, g.watch.after, []doctext.Phrase{
			{pkg, `WithUnmatchedAfter \(default (\d+ minutes)\)`, minutes(defaultUnmatchedAfter)},
			{"report.go", `The default is (\d+ minutes);`, minutes(defaultUnmatchedAfter)},
		}},
		{"WithStoreBreaker trip", int64(defaultStoreTrip), sc.trip, []doctext.Phrase{
			{"stores.go", `failed rounds of calls \(default (\d+),`, strconv.Itoa(defaultStoreTrip)},
		}},
		{"WithStoreBreaker backoff", int64(defaultStoreBackoff), sc.backoff, []doctext.Phrase{
			{"stores.go", `alone for backoff \(default (\S+)\)`, doctext.Duration(defaultStoreBackoff)},
		}},
		{"log burst", float64(logBurst), g.reporter.tokens, []doctext.Phrase{
			{pkg, `records a second, bursts of (\d+);`, strconv.Itoa(logBurst)},
			{"report.go", `with bursts of (\d+);`, strconv.Itoa(logBurst)},
		}},
		{"log rate", logRate, logRate, []doctext.Phrase{
			{pkg, `\((\d+) records a second,`, strconv.Itoa(logRate)},
			{"report.go", `at most (\d+) records per second`, strconv.Itoa(logRate)},
		}},
		{"blocking rule log interval", blockLogInterval, blockLogInterval, []doctext.Phrase{
			{pkg, `at most once per (\d+) seconds with the count`, strconv.Itoa(int(blockLogInterval / time.Second))},
		}},
		{"history span", history.Seconds, history.Seconds, []doctext.Phrase{
			{pkg, `History returns the last (\d+) minutes`, strconv.Itoa(history.Seconds / 60)},
			{"history.go", `It keeps the last (\d+) minutes`, strconv.Itoa(history.Seconds / 60)},
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			require.EqualValues(t, d.want, d.got, "the code's default")
			doctext.Check(t, d.docs...)
		})
	}
}

// normalized returns rules of each kind, with every defaulted field zero,
// normalized by NormalizeRules, by name.
func normalized(t *testing.T) map[string]Rule {
	t.Helper()
	in := []Rule{
		{Name: "flow", Resource: "/f", Kind: KindFlow, Limit: 10},
		{Name: "warmup", Resource: "/w", Kind: KindFlow, Limit: 10, Warmup: time.Second},
		{Name: "hotspot", Resource: "/h", Kind: KindHotspot, Limit: 10, Param: "ip"},
		{Name: "store-flow", Resource: "/sf", Kind: KindFlow, Limit: 10, Store: "redis"},
		{Name: "store-hotspot", Resource: "/sh", Kind: KindHotspot, Limit: 10, Param: "ip", Store: "redis"},
		{Name: "breaker", Resource: "/b", Kind: KindBreaker, Strategy: "error-ratio", Threshold: 0.5},
		{Name: "adaptive", Resource: "/a", Kind: KindAdaptive},
	}
	out, err := NormalizeRules(in)
	require.NoError(t, err)
	m := map[string]Rule{}
	for _, r := range out {
		m[r.Name] = r
	}
	return m
}

// defaultsGuard returns a Guard built without the options whose defaults
// TestDocumentedDefaults checks, with a store named redis.
func defaultsGuard(t *testing.T) *Guard {
	t.Helper()
	s, err := store.NewMemory(clock.NewFake(0), 100)
	require.NoError(t, err)
	g, err := New(WithClock(clock.NewFake(0)), WithStore("redis", s))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	return g
}

// missingPolicy returns what a hotspot rule without OnMissing does with a
// request that lacks its param: MissingSkip when a rule of limit 0 lets it
// through.
func missingPolicy(t *testing.T) OnMissing {
	t.Helper()
	g, err := New(WithClock(clock.NewFake(0)), WithRules(Rule{Resource: "/h", Kind: KindHotspot, Limit: 0, Param: "ip"}))
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Close()) }()
	e, err := g.Enter(t.Context(), "/h")
	if err != nil {
		return MissingReject
	}
	e.Exit(nil)
	return MissingSkip
}

// minutes writes a whole number of minutes as the docs do: "5 minutes".
func minutes(d time.Duration) string {
	if d%time.Minute != 0 {
		return doctext.Duration(d)
	}
	return fmt.Sprintf("%d minutes", d/time.Minute)
}

// thousands writes n with comma separators, as prose does: "100,000".
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// goName writes a constant's value as the Go name that docs give it:
// goName("Fail", "local") is "FailLocal".
func goName(prefix, v string) string {
	return prefix + strings.ToUpper(v[:1]) + v[1:]
}
