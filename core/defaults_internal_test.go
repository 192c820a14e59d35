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
	"github.com/sluicekit/sluice/core/internal/doctext"
	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/history"
	"github.com/sluicekit/sluice/core/internal/hotspot"
	"github.com/sluicekit/sluice/core/internal/system"
	"github.com/sluicekit/sluice/core/store"
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
			{Path: pkg, Pattern: `limits the requests per Window \(default (\S+)\)`, Want: doctext.Duration(flow.DefaultWindow)},
			{Path: rule, Pattern: `\(flow, hotspot; default (\S+)\)`, Want: doctext.Duration(flow.DefaultWindow)},
			{Path: norm, Pattern: `every default applied: window (\S+),`, Want: doctext.Duration(flow.DefaultWindow)},
			{Path: rfile, Pattern: `window: \S+ # default (\S+)`, Want: doctext.Duration(flow.DefaultWindow)},
		}},
		{"hotspot window", hotspot.DefaultWindow, rs["hotspot"].Window, []doctext.Phrase{
			{Path: rule, Pattern: `\(flow, hotspot; default (\S+)\)`, Want: doctext.Duration(hotspot.DefaultWindow)},
		}},
		{"flow algorithm", Algorithm(flow.DefaultAlgorithm), rs["flow"].Algorithm, []doctext.Phrase{
			{Path: pkg, Pattern: `(\S+) one atomic add, a sum over .{0,80}?\(default\)`, Want: string(flow.DefaultAlgorithm)},
			{Path: rule, Pattern: `for flow rules any but concurrency \(default (\S+)\)`, Want: string(flow.DefaultAlgorithm)},
			{Path: norm, Pattern: `algorithm (\S+) \(flow\)`, Want: string(flow.DefaultAlgorithm)},
			{Path: rfile, Pattern: `# (\S+) \(default\) \| sliding-log`, Want: string(flow.DefaultAlgorithm)},
		}},
		{"flow buckets", flow.DefaultBuckets, rs["flow"].Buckets, []doctext.Phrase{
			{Path: pkg, Pattern: `\(default\) Buckets \(default (\d+)\)`, Want: strconv.Itoa(flow.DefaultBuckets)},
			{Path: rule, Pattern: `leap-array buckets of a flow rule or a breaker's statistics\. Default (\d+)\.`, Want: strconv.Itoa(flow.DefaultBuckets)},
			{Path: norm, Pattern: `, (\d+) leap-array buckets,`, Want: strconv.Itoa(flow.DefaultBuckets)},
		}},
		{"flow coldFactor", flow.DefaultColdFactor, rs["warmup"].ColdFactor, []doctext.Phrase{
			{Path: pkg, Pattern: `Limit/ColdFactor \(default (\d+)\)`, Want: strconv.Itoa(flow.DefaultColdFactor)},
			{Path: norm, Pattern: `coldFactor (\d+) with warmup`, Want: strconv.Itoa(flow.DefaultColdFactor)},
		}},
		{"hotspot algorithm", Algorithm(hotspot.DefaultAlgorithm), rs["hotspot"].Algorithm, []doctext.Phrase{
			{Path: pkg, Pattern: `\(ip\), with a (.+?) \(default\)`, Want: strings.ReplaceAll(string(hotspot.DefaultAlgorithm), "-", " ")},
			{Path: rule, Pattern: `for hotspot rules (\S+) \(default\)`, Want: string(hotspot.DefaultAlgorithm)},
			{Path: norm, Pattern: `or (\S+) \(hotspot\)`, Want: string(hotspot.DefaultAlgorithm)},
			{Path: rfile, Pattern: `# (\S+) \(default\) \| leaky-bucket \| concurrency`, Want: string(hotspot.DefaultAlgorithm)},
		}},
		{"hotspot maxKeys", defaultMaxKeys, rs["hotspot"].MaxKeys, []doctext.Phrase{
			{Path: pkg, Pattern: `at most MaxKeys values \(default ([\d,]+)\)`, Want: doctext.Thousands(defaultMaxKeys)},
			{Path: norm, Pattern: `MaxKeys (\d+),`, Want: strconv.Itoa(defaultMaxKeys)},
			{Path: rfile, Pattern: `values tracked \(default (\d+)\)`, Want: strconv.Itoa(defaultMaxKeys)},
		}},
		{"hotspot onMissing", MissingSkip, missingPolicy(t), []doctext.Phrase{
			{Path: pkg, Pattern: `lacks its param: (\S+) it \(the default\)`, Want: string(MissingSkip)},
			{Path: rule, Pattern: `MissingSkip \(empty means (\S+)\)`, Want: string(MissingSkip)},
			{Path: rfile, Pattern: `without the param: (\S+) \(default\)`, Want: string(MissingSkip)},
		}},
		{"store flow algorithm", defaultStoreAlgorithm, rs["store-flow"].Algorithm, []doctext.Phrase{
			{Path: pkg, Pattern: `A flow rule then uses (\S+) \(its default there\)`, Want: string(defaultStoreAlgorithm)},
			{Path: rule, Pattern: `With a store, a flow rule uses the algorithm (\S+) \(its default there\)`, Want: string(defaultStoreAlgorithm)},
		}},
		{"store hotspot algorithm", Algorithm(hotspot.DefaultAlgorithm), rs["store-hotspot"].Algorithm, []doctext.Phrase{
			{Path: pkg, Pattern: `a hotspot rule (\S+) \(its default`, Want: string(hotspot.DefaultAlgorithm)},
			{Path: rule, Pattern: `a hotspot rule (\S+) \(its default`, Want: string(hotspot.DefaultAlgorithm)},
		}},
		{"store mode", store.Exact, rs["store-flow"].Mode, []doctext.Phrase{
			{Path: rule, Pattern: `Mode is how the store decides: store\.(\w+) \(default;`, Want: goName("", string(store.Exact))},
			{Path: rfile, Pattern: `# (\S+) \(default\) \| approximate`, Want: string(store.Exact)},
		}},
		{"store onFailure", FailLocal, rs["store-flow"].OnFailure, []doctext.Phrase{
			{Path: pkg, Pattern: `OnFailure: (\S+) \(the default:`, Want: string(FailLocal)},
			{Path: rule, Pattern: `OnFailure is what the rule does while its store fails: (\w+) \(default\)`, Want: goName("Fail", string(FailLocal))},
			{Path: rfile, Pattern: `store failing: (\S+) \(default\)`, Want: string(FailLocal)},
		}},
		{"store localLimit", rs["store-flow"].Limit, rs["store-flow"].LocalLimit, []doctext.Phrase{
			{Path: rule, Pattern: `divided by the number of instances\)\. Default (\w+)\.`, Want: "Limit"},
			{Path: rfile, Pattern: `while the store fails; default (\w+)`, Want: "limit"},
		}},
		{"breaker window", breaker.DefaultWindow, rs["breaker"].Window, []doctext.Phrase{
			{Path: pkg, Pattern: `counted over Window \(default (\S+)\)`, Want: doctext.Duration(breaker.DefaultWindow)},
			{Path: rule, Pattern: `the span of a breaker's statistics \(default (\S+)\)`, Want: doctext.Duration(breaker.DefaultWindow)},
			{Path: rfile, Pattern: `statistics window \(default (\S+)\),`, Want: doctext.Duration(breaker.DefaultWindow)},
		}},
		{"breaker buckets", breaker.DefaultBuckets, rs["breaker"].Buckets, []doctext.Phrase{
			{Path: rule, Pattern: `leap-array buckets of a flow rule or a breaker's statistics\. Default (\d+)\.`, Want: strconv.Itoa(breaker.DefaultBuckets)},
			{Path: rfile, Pattern: `in buckets \(default (\d+)\)`, Want: strconv.Itoa(breaker.DefaultBuckets)},
		}},
		{"breaker minRequests", int64(breaker.DefaultMinRequests), rs["breaker"].MinRequests, []doctext.Phrase{
			{Path: rule, Pattern: `breaker's window before it may trip\. Default (\d+)\.`, Want: strconv.Itoa(breaker.DefaultMinRequests)},
			{Path: rfile, Pattern: `before it may trip \(default (\d+)\)`, Want: strconv.Itoa(breaker.DefaultMinRequests)},
		}},
		{"breaker openFor", breaker.DefaultOpenFor, rs["breaker"].OpenFor, []doctext.Phrase{
			{Path: pkg, Pattern: `blocked for OpenFor \(default (\S+)\)`, Want: doctext.Duration(breaker.DefaultOpenFor)},
			{Path: rule, Pattern: `how long a probe may take\. Default (\S+)\.`, Want: doctext.Duration(breaker.DefaultOpenFor)},
			{Path: rfile, Pattern: `let probes through \(default (\S+)\)`, Want: doctext.Duration(breaker.DefaultOpenFor)},
		}},
		{"breaker probes", int64(breaker.DefaultProbes), rs["breaker"].Probes, []doctext.Phrase{
			{Path: pkg, Pattern: `Probes requests pass \(default (\d+)\)`, Want: strconv.Itoa(breaker.DefaultProbes)},
			{Path: rule, Pattern: `all must succeed for it to close\. Default (\d+)\.`, Want: strconv.Itoa(breaker.DefaultProbes)},
			{Path: rfile, Pattern: `all must succeed \(default (\d+)\)`, Want: strconv.Itoa(breaker.DefaultProbes)},
		}},
		{"adaptive interval", adaptive.DefaultInterval, rs["adaptive"].Window, []doctext.Phrase{
			{Path: rule, Pattern: `requests that ended in it \(default (\S+)\)`, Want: doctext.Duration(adaptive.DefaultInterval)},
		}},
		{"adaptive minLimit", int64(adaptive.DefaultMinLimit), rs["adaptive"].MinLimit, []doctext.Phrase{
			{Path: rule, Pattern: `requests in flight\. Defaults (\d+) \(or MaxLimit`, Want: strconv.Itoa(adaptive.DefaultMinLimit)},
			{Path: rfile, Pattern: `bounds \(defaults (\d+) and`, Want: strconv.Itoa(adaptive.DefaultMinLimit)},
		}},
		{"adaptive maxLimit", int64(adaptive.DefaultMaxLimit), rs["adaptive"].MaxLimit, []doctext.Phrase{
			{Path: rule, Pattern: `\(or MaxLimit when lower\) and (\d+)`, Want: strconv.Itoa(adaptive.DefaultMaxLimit)},
			{Path: rfile, Pattern: `bounds \(defaults \d+ and (\d+)\)`, Want: strconv.Itoa(adaptive.DefaultMaxLimit)},
		}},
		{"adaptive tolerance", adaptive.DefaultTolerance, rs["adaptive"].Tolerance, []doctext.Phrase{
			{Path: rule, Pattern: `at most 100; default ([\d.]+)\.`, Want: strconv.FormatFloat(adaptive.DefaultTolerance, 'g', -1, 64)},
		}},
		{"adaptive probeInterval", adaptive.DefaultProbeInterval, rs["adaptive"].ProbeInterval, []doctext.Phrase{
			{Path: rule, Pattern: `At least Window; default (\S+)\.`, Want: doctext.Duration(adaptive.DefaultProbeInterval)},
		}},
		{"WithMaxResources", defaultMaxResources, g.resources.max, []doctext.Phrase{
			{Path: "guard.go", Pattern: `keeps statistics for \(default (\d+)\)`, Want: strconv.Itoa(defaultMaxResources)},
		}},
		{"WithUnmatchedAfter", defaultUnmatchedAfter, g.watch.after, []doctext.Phrase{
			{Path: pkg, Pattern: `WithUnmatchedAfter \(default (\d+ minutes)\)`, Want: minutes(defaultUnmatchedAfter)},
			{Path: "report.go", Pattern: `The default is (\d+ minutes);`, Want: minutes(defaultUnmatchedAfter)},
		}},
		{"WithStoreBreaker trip", int64(defaultStoreTrip), sc.exact.trip, []doctext.Phrase{
			{Path: "stores.go", Pattern: `failed rounds of calls \(default (\d+),`, Want: strconv.Itoa(defaultStoreTrip)},
		}},
		{"WithStoreBreaker backoff", int64(defaultStoreBackoff), sc.exact.backoff, []doctext.Phrase{
			{Path: "stores.go", Pattern: `alone for backoff \(default (\S+)\)`, Want: doctext.Duration(defaultStoreBackoff)},
		}},
		{"WithStoreLatencyBudget", int64(defaultStoreBudget), sc.exact.budget, []doctext.Phrase{
			{Path: pkg, Pattern: `WithStoreLatencyBudget \(default (\S+)\)`, Want: doctext.Duration(defaultStoreBudget)},
		}},
		{"log burst", float64(logBurst), g.reporter.tokens, []doctext.Phrase{
			{Path: pkg, Pattern: `records a second, bursts of (\d+);`, Want: strconv.Itoa(logBurst)},
			{Path: "report.go", Pattern: `with bursts of (\d+);`, Want: strconv.Itoa(logBurst)},
		}},
		{"log rate", logRate, logRate, []doctext.Phrase{
			{Path: pkg, Pattern: `\((\d+) records a second,`, Want: strconv.Itoa(logRate)},
			{Path: "report.go", Pattern: `at most (\d+) records per second`, Want: strconv.Itoa(logRate)},
		}},
		{"blocking rule log interval", blockLogInterval, blockLogInterval, []doctext.Phrase{
			{Path: pkg, Pattern: `at most once per (\d+) seconds with the count`, Want: strconv.Itoa(int(blockLogInterval / time.Second))},
		}},
		{"system signal sampling", system.Every, system.Every, []doctext.Phrase{
			{Path: pkg, Pattern: `The host's signals are read every (.+?) by a goroutine`, Want: doctext.Every(system.Every)},
		}},
		{"history span", history.Seconds, history.Seconds, []doctext.Phrase{
			{Path: pkg, Pattern: `History returns the last (\d+) minutes`, Want: strconv.Itoa(history.Seconds / 60)},
			{Path: "history.go", Pattern: `It keeps the last (\d+) minutes`, Want: strconv.Itoa(history.Seconds / 60)},
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

// goName writes a constant's value as the Go name that docs give it:
// goName("Fail", "local") is "FailLocal".
func goName(prefix, v string) string {
	return prefix + strings.ToUpper(v[:1]) + v[1:]
}
