package core

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// problemLines returns the problems of err, a *RulesError, as text.
func problemLines(t *testing.T, err error) []string {
	t.Helper()
	var re *RulesError
	require.True(t, errors.As(err, &re), "want a *RulesError, got %T: %v", err, err)
	lines := make([]string, len(re.Problems))
	for i, p := range re.Problems {
		lines[i] = p.Error()
	}
	assert.Equal(t, strings.Join(lines, "\n"), re.Error())
	return lines
}

func TestProblemString(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{Index: 2, Name: "per-user", Field: "limit", Msg: "must be >= 0, got -5"}, "rules[2] (per-user): limit must be >= 0, got -5"},
		{Problem{Index: 2, Field: "limit", Msg: "must be >= 0, got -5"}, "rules[2]: limit must be >= 0, got -5"},
		{Problem{Index: 2, Name: "x", Msg: "a rule problem"}, "rules[2] (x): a rule problem"},
		{Problem{Index: 1, Name: "x", Field: "limit", Line: 7, Msg: `must be an integer, got "ten"`}, `rules[1] (x): line 7: limit must be an integer, got "ten"`},
		{Problem{Index: -1, Msg: "yaml: line 3: did not find expected key"}, "yaml: line 3: did not find expected key"},
		{Problem{Index: -1, Line: 4, Msg: `unknown top-level key "rule"`}, `line 4: unknown top-level key "rule"`},
		{Problem{Index: 0, Name: "a\nb", Msg: "m"}, `rules[0] ("a\nb"): m`},
	} {
		assert.Equal(t, tc.want, tc.p.Error())
		assert.Equal(t, tc.want, tc.p.Error())
	}
}

func TestCheckRulesValid(t *testing.T) {
	rules := []Rule{
		{Resource: "GET /items/{id}", Kind: KindFlow, Limit: 100},
		{Resource: "*", Kind: KindFlow, Limit: 10, Algorithm: "token-bucket", Burst: 5},
		{Resource: "*", Kind: KindFlow, Limit: 10, Algorithm: "leaky-bucket", MaxWait: time.Second},
		{Resource: "*", Kind: KindFlow, Limit: 10, Warmup: time.Minute},
		{Resource: "*", Kind: KindConcurrency},
		{Resource: "*", Kind: KindHotspot, Param: "ip", Limit: 1},
		{Resource: "*", Kind: KindHotspot, Param: "header:X-User-ID", Burst: 2, MaxKeys: 10_000_000},
		{Resource: "*", Kind: KindHotspot, Param: "metadata:x-api-key", Algorithm: "leaky-bucket", MaxWait: time.Second},
		{Resource: "*", Kind: KindHotspot, Param: "tenant_id.v-2", Algorithm: "concurrency", Overrides: map[string]int64{"a": 0}},
		{Name: "named", Resource: "*", Kind: KindHotspot, Param: "path:id", Overrides: map[string]int64{}},
	}
	require.NoError(t, checkRules(rules))
	require.NoError(t, checkRules(nil))
}

func TestCheckRulesProblems(t *testing.T) {
	long := strings.Repeat("x", 1025)
	for _, tc := range []struct {
		name string
		rule Rule
		want []string
	}{
		{"empty", Rule{}, []string{
			"rules[0]: resource is required",
			"rules[0]: kind is required (flow, concurrency, hotspot, breaker, adaptive or system)",
		}},
		{"unknown kind", Rule{Resource: "*", Kind: "bulkhead"}, []string{
			`rules[0]: kind must be flow, concurrency, hotspot, breaker, adaptive or system, got "bulkhead"`,
		}},
		{"breaker fields", Rule{Name: "b", Resource: "*", Kind: KindBreaker, Limit: 5, Strategy: "error-ratio", Threshold: 2, MaxRT: time.Second, Probes: -1, Param: "ip"}, []string{
			"rules[0] (b): limit does not apply to kind breaker (only to kinds flow, concurrency and hotspot)",
			"rules[0] (b): param does not apply to kind breaker (only to kind hotspot)",
			"rules[0] (b): threshold must be a ratio in (0, 1] with strategy error-ratio, got 2",
			"rules[0] (b): maxRT only applies to strategy slow-ratio",
			"rules[0] (b): probes must be between 1 and 1000, got -1",
		}},
		{"adaptive bounds", Rule{Name: "a", Resource: "*", Kind: KindAdaptive, MinLimit: -1, MaxLimit: -2}, []string{
			"rules[0] (a): minLimit must be >= 1, got -1",
			"rules[0] (a): maxLimit must be >= 1, got -2",
		}},
		{"adaptive max below min", Rule{Name: "a", Resource: "*", Kind: KindAdaptive, MinLimit: 10, MaxLimit: 5}, []string{
			"rules[0] (a): maxLimit must be >= minLimit (10), got 5",
		}},
		{"adaptive knobs", Rule{Name: "a", Resource: "*", Kind: KindAdaptive, Window: -time.Second, Tolerance: 1, ProbeInterval: -1}, []string{
			"rules[0] (a): window must be > 0 and <= 1m0s (default 100ms), got -1s",
			"rules[0] (a): tolerance must be > 1 and <= 100 (default 1.5: the response time may grow by half before the limit falls), got 1",
			"rules[0] (a): probeInterval must be > 0 and <= 24h0m0s (default 30s), got -1ns",
		}},
		{"adaptive knobs too high", Rule{Name: "a", Resource: "*", Kind: KindAdaptive, Window: 2 * time.Minute, Tolerance: 101, ProbeInterval: 25 * time.Hour}, []string{
			"rules[0] (a): window must be > 0 and <= 1m0s (default 100ms), got 2m0s",
			"rules[0] (a): tolerance must be > 1 and <= 100 (default 1.5: the response time may grow by half before the limit falls), got 101",
			"rules[0] (a): probeInterval must be > 0 and <= 24h0m0s (default 30s), got 25h0m0s",
		}},
		{"adaptive probe interval below the window", Rule{Name: "a", Resource: "*", Kind: KindAdaptive, Window: time.Second, ProbeInterval: 500 * time.Millisecond}, []string{
			"rules[0] (a): probeInterval must be >= the window (1s), got 500ms",
		}},
		{"adaptive probe interval below the default window", Rule{Name: "a", Resource: "*", Kind: KindAdaptive, ProbeInterval: 50 * time.Millisecond}, []string{
			"rules[0] (a): probeInterval must be >= the window (100ms), got 50ms",
		}},
		{"adaptive knobs on another kind", Rule{Name: "c", Resource: "*", Kind: KindConcurrency, Limit: 1, Tolerance: 2, ProbeInterval: time.Second}, []string{
			"rules[0] (c): tolerance does not apply to kind concurrency (only to kind adaptive)",
			"rules[0] (c): probeInterval does not apply to kind concurrency (only to kind adaptive)",
		}},
		{"adaptive with fixed-limit fields", Rule{Name: "a", Resource: "*", Kind: KindAdaptive, Limit: 5, Param: "ip", Threshold: 0.5}, []string{
			"rules[0] (a): limit does not apply to kind adaptive (its limit is found from response times; bound it with minLimit and maxLimit)",
			"rules[0] (a): param does not apply to kind adaptive (only to kind hotspot)",
			"rules[0] (a): threshold does not apply to kind adaptive (only to kinds breaker and system)",
		}},
		{"adaptive fields on a concurrency rule", Rule{Resource: "*", Kind: KindConcurrency, Limit: 1, MinLimit: 1, MaxLimit: 2}, []string{
			"rules[0]: minLimit does not apply to kind concurrency (only to kind adaptive)",
			"rules[0]: maxLimit does not apply to kind concurrency (only to kind adaptive)",
		}},
		{"system without signal", Rule{Name: "s", Resource: "*", Kind: KindSystem, Threshold: 1}, []string{
			"rules[0] (s): signal is required for kind system (qps, inflight, rt, cpu or load)",
		}},
		{"system unknown signal", Rule{Name: "s", Resource: "*", Kind: KindSystem, Signal: "memory", Threshold: 1}, []string{
			`rules[0] (s): signal must be qps, inflight, rt, cpu or load, got "memory"`,
		}},
		{"system cpu threshold above 1", Rule{Name: "s", Resource: "*", Kind: KindSystem, Signal: SignalCPU, Threshold: 80}, []string{
			"rules[0] (s): threshold must be a fraction of the CPU in (0, 1] for signal cpu, got 80",
		}},
		{"system cpu threshold 0", Rule{Name: "s", Resource: "*", Kind: KindSystem, Signal: SignalCPU}, []string{
			"rules[0] (s): threshold must be a fraction of the CPU in (0, 1] for signal cpu, got 0",
		}},
		{"system inflight threshold not whole", Rule{Name: "s", Resource: "*", Kind: KindSystem, Signal: SignalInFlight, Threshold: 2.5}, []string{
			"rules[0] (s): threshold must be a whole number of requests in [1, 2^53] for signal inflight, got 2.5",
		}},
		{"system rt threshold negative", Rule{Name: "s", Resource: "*", Kind: KindSystem, Signal: SignalRT, Threshold: -1}, []string{
			"rules[0] (s): threshold must be milliseconds > 0 for signal rt, got -1",
		}},
		{"system bbr on load", Rule{Name: "s", Resource: "*", Kind: KindSystem, Signal: SignalLoad, Threshold: 4, Strategy: StrategyBBR}, []string{
			`rules[0] (s): strategy bbr only applies to signal cpu, got signal "load"`,
		}},
		{"system breaker strategy", Rule{Name: "s", Resource: "*", Kind: KindSystem, Signal: SignalCPU, Threshold: 0.8, Strategy: "error-ratio"}, []string{
			`rules[0] (s): strategy must be bbr or empty for kind system, got "error-ratio"`,
		}},
		{"system with fields of other kinds", Rule{Name: "s", Resource: "*", Kind: KindSystem, Signal: SignalQPS, Threshold: 100, Limit: 5, MaxRT: time.Second, MinLimit: 2}, []string{
			"rules[0] (s): limit does not apply to kind system (its limit is threshold)",
			"rules[0] (s): maxRT does not apply to kind system (only to kind breaker)",
			"rules[0] (s): minLimit does not apply to kind system (only to kind adaptive)",
		}},
		{"signal on a flow rule", Rule{Resource: "*", Kind: KindFlow, Limit: 1, Signal: SignalCPU}, []string{
			"rules[0]: signal does not apply to kind flow (only to kind system)",
		}},
		{"priority on a flow rule", Rule{Resource: "*", Kind: KindFlow, Limit: 1, Priority: "header:X-Priority"}, []string{
			"rules[0]: priority does not apply to kind flow (only to kinds adaptive and system)",
		}},
		{"priority malformed", Rule{Resource: "*", Kind: KindAdaptive, Priority: "header:"}, []string{
			`rules[0]: priority "header:" needs a name after the colon, e.g. header:X-User-ID`,
		}},
		{"breaker without strategy", Rule{Resource: "*", Kind: KindBreaker}, []string{
			"rules[0]: strategy is required (slow-ratio, error-ratio or error-count)",
		}},
		{"breaker fields on a flow rule", Rule{Resource: "*", Kind: KindFlow, Limit: 1, Strategy: "error-count", OpenFor: time.Second}, []string{
			"rules[0]: strategy does not apply to kind flow (only to kinds breaker and system)",
			"rules[0]: openFor does not apply to kind flow (only to kind breaker)",
		}},
		{"name and resource bounds", Rule{Name: strings.Repeat("n", 201), Resource: long, Kind: KindConcurrency}, []string{
			`rules[0] ("nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"...): name must be at most 200 bytes, got 201`,
			`rules[0] ("nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"...): resource must be at most 1024 bytes, got 1025`,
		}},
		{"control characters", Rule{Name: "a\tb", Resource: "GET\n/x", Kind: KindConcurrency}, []string{
			`rules[0] ("a\tb"): name must contain only ASCII letters, digits and -_.:/{}*$#() (it is written as is in RateLimit fields, problem bodies, metrics and logs), got "a\tb"`,
			`rules[0] ("a\tb"): resource must not contain control or format characters, got "GET\n/x"`,
		}},
		{"format characters", Rule{Name: "rtl", Resource: "GET /x\u202e", Kind: KindConcurrency}, []string{
			`rules[0] (rtl): resource must not contain control or format characters, got "GET /x\u202e"`,
		}},
		{"zero-width space", Rule{Name: "zw", Resource: "GET /\u200bx", Kind: KindConcurrency}, []string{
			`rules[0] (zw): resource must not contain control or format characters, got "GET /\u200bx"`,
		}},
		{"flow", Rule{Name: "f", Resource: "*", Kind: KindFlow, Limit: -5, Window: -time.Second, Burst: 5, Param: "ip", MaxKeys: 3, Overrides: map[string]int64{"a": 1}}, []string{
			"rules[0] (f): limit must be >= 0, got -5",
			"rules[0] (f): window must be > 0, got -1s",
			"rules[0] (f): burst only applies to algorithm token-bucket, got 5 with leap-array",
			"rules[0] (f): param does not apply to kind flow (only to kind hotspot)",
			"rules[0] (f): maxKeys does not apply to kind flow (only to kind hotspot)",
			"rules[0] (f): overrides does not apply to kind flow (only to kind hotspot)",
		}},
		{"flow algorithm", Rule{Resource: "*", Kind: KindFlow, Algorithm: "token-bucket", MaxWait: time.Second, ColdFactor: 2}, []string{
			`rules[0]: maxWait only applies to algorithm leaky-bucket, got 1s with token-bucket`,
			`rules[0]: coldFactor only applies with warmup > 0`,
		}},
		{"flow unknown algorithm", Rule{Resource: "*", Kind: KindFlow, Algorithm: "gcra"}, []string{
			`rules[0]: algorithm unknown algorithm "gcra" (want one of [leap-array fixed-window sliding-log sliding-counter token-bucket leaky-bucket])`,
		}},
		{"concurrency", Rule{Resource: "*", Kind: KindConcurrency, Limit: -1, Window: 1, Algorithm: "x", Buckets: 1, Burst: 1, MaxWait: 1, Warmup: 1, ColdFactor: 1, Param: "ip", MaxKeys: 1, Overrides: map[string]int64{"a": 1}}, []string{
			"rules[0]: limit must be >= 0, got -1",
			"rules[0]: window does not apply to kind concurrency (only to kinds flow, hotspot, breaker and adaptive)",
			"rules[0]: algorithm does not apply to kind concurrency (only to kinds flow and hotspot)",
			"rules[0]: buckets does not apply to kind concurrency (only to kinds flow and breaker)",
			"rules[0]: burst does not apply to kind concurrency (only to kinds flow and hotspot)",
			"rules[0]: maxWait does not apply to kind concurrency (only to kinds flow and hotspot)",
			"rules[0]: warmup does not apply to kind concurrency (only to kind flow)",
			"rules[0]: coldFactor does not apply to kind concurrency (only to kind flow)",
			"rules[0]: param does not apply to kind concurrency (only to kind hotspot)",
			"rules[0]: maxKeys does not apply to kind concurrency (only to kind hotspot)",
			"rules[0]: overrides does not apply to kind concurrency (only to kind hotspot)",
		}},
		{"hotspot", Rule{Name: "per-user", Resource: "*", Kind: KindHotspot, Limit: -5, Window: -1, Buckets: 2, Burst: -1, MaxWait: time.Second, Warmup: 1, ColdFactor: 3, MaxKeys: -1}, []string{
			"rules[0] (per-user): limit must be >= 0, got -5",
			"rules[0] (per-user): window must be > 0, got -1ns",
			"rules[0] (per-user): buckets does not apply to kind hotspot (only to kinds flow and breaker)",
			"rules[0] (per-user): burst must be >= 0, got -1",
			"rules[0] (per-user): maxWait only applies to algorithm leaky-bucket, got 1s with token-bucket",
			"rules[0] (per-user): warmup does not apply to kind hotspot (only to kind flow)",
			"rules[0] (per-user): coldFactor does not apply to kind hotspot (only to kind flow)",
			"rules[0] (per-user): param is required for kind hotspot, e.g. header:X-User-ID or ip",
			"rules[0] (per-user): maxKeys must be >= 0, got -1",
		}},
		{"hotspot algorithm", Rule{Resource: "*", Kind: KindHotspot, Param: "ip", Algorithm: "fixed-window", MaxKeys: 10_000_001}, []string{
			`rules[0]: algorithm unknown algorithm "fixed-window" (want one of [token-bucket leaky-bucket concurrency])`,
			"rules[0]: maxKeys must be <= 10000000, got 10000001",
		}},
		{"maxKeys over both bounds", Rule{Resource: "*", Kind: KindHotspot, Param: "ip", MaxKeys: 1 << 31}, []string{
			"rules[0]: maxKeys must be <= 10000000, got 2147483648", // one bound, the tighter
		}},
		{"hotspot leaky", Rule{Resource: "*", Kind: KindHotspot, Param: "ip", Algorithm: "leaky-bucket", Burst: 3, MaxWait: -1}, []string{
			"rules[0]: burst only applies to algorithm token-bucket, got 3 with leaky-bucket",
			"rules[0]: maxWait must be >= 0, got -1ns",
		}},
		{"hotspot concurrency window", Rule{Resource: "*", Kind: KindHotspot, Param: "ip", Algorithm: "concurrency", Window: time.Second}, []string{
			"rules[0]: window does not apply to algorithm concurrency, got 1s",
		}},
		{"overrides", Rule{Resource: "*", Kind: KindHotspot, Param: "ip", Overrides: map[string]int64{"z": -2, "": 1, long: 1, "abuser": -1}}, []string{
			`rules[0]: overrides value for "abuser" must be >= 0, got -1`,
			`rules[0]: overrides value for "z" must be >= 0, got -2`,
			"rules[0]: overrides keys must not be empty",
			`rules[0]: overrides key "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"... must be at most 1024 bytes, got 1025`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, problemLines(t, checkRules([]Rule{tc.rule})))
		})
	}
}

func TestCheckRulesParam(t *testing.T) {
	const want = "(want header, query, cookie, path or metadata)"
	for param, msg := range map[string]string{
		"header:X-User-ID": "",
		"query:tenant":     "",
		"cookie:session":   "",
		"path:id":          "",
		"metadata:x-key":   "",
		"ip":               "",
		"method":           "",
		"host":             "",
		"peer":             "",
		"myExtractor":      "",
		"a.b-c_d9":         "",
		"hdr:x":            `param has unknown kind "hdr" in "hdr:x" ` + want,
		":x":               `param has unknown kind "" in ":x" ` + want,
		"header:":          `param "header:" needs a name after the colon, e.g. header:X-User-ID`,
		"header:X User":    `param name must not contain spaces, format or control characters, got "header:X User"`,
		"header:a:b":       `param name must be ASCII letters, digits and !#$%&'*+-.^_` + "`" + `|~ (no header name has another character), got "header:a:b", with U+003A`,
		"query:a\x00":      `param name must not contain spaces, format or control characters, got "query:a\x00"`,
		"9lives":           `param must be KIND:NAME ` + want + `, ip, method, host, peer, or a custom extractor name of letters, digits, '_', '.' and '-', got "9lives"`,
		"user id":          `param must be KIND:NAME ` + want + `, ip, method, host, peer, or a custom extractor name of letters, digits, '_', '.' and '-', got "user id"`,
	} {
		err := checkRules([]Rule{{Resource: "*", Kind: KindHotspot, Param: param}})
		if msg == "" {
			assert.NoError(t, err, param)
			continue
		}
		assert.Equal(t, []string{"rules[0]: " + msg}, problemLines(t, err), param)
	}
}

func TestCheckRulesDuplicateNames(t *testing.T) {
	err := checkRules([]Rule{
		{Name: "a", Resource: "*", Kind: KindConcurrency},
		{Name: "b", Resource: "*", Kind: KindConcurrency},
		{Name: "a", Resource: "*", Kind: KindConcurrency},
		{Resource: "*", Kind: KindConcurrency},
		{Name: "a", Resource: "*", Kind: KindConcurrency},
	})
	assert.Equal(t, []string{
		`rules[2] (a): name "a" is already used by rules[0]`,
		`rules[4] (a): name "a" is already used by rules[0]`,
	}, problemLines(t, err))
}

func TestDefaultName(t *testing.T) {
	assert.Equal(t, "flow:GET:/items/{id}", builtinName(Rule{Kind: KindFlow, Resource: "GET /items/{id}", Param: "ignored"}))
	assert.Equal(t, "concurrency:*", builtinName(Rule{Kind: KindConcurrency, Resource: "*"}))
	assert.Equal(t, "hotspot:/pkg.Svc/*:metadata:x-key", builtinName(Rule{Kind: KindHotspot, Resource: "/pkg.Svc/*", Param: "metadata:x-key"}))
}

func TestNormalizeRulesDefaults(t *testing.T) {
	in := []Rule{
		{Resource: "a", Kind: KindFlow, Limit: 5},
		{Resource: "a", Kind: KindFlow, Limit: 5, Warmup: time.Minute},
		{Resource: "a", Kind: KindFlow, Limit: 5, Algorithm: "token-bucket", Window: time.Minute},
		{Resource: "a", Kind: KindFlow, Limit: 5, ColdFactor: 3},
		{Resource: "b", Kind: KindConcurrency, Limit: 7},
		{Resource: "c", Kind: KindHotspot, Param: "ip", Limit: 9, Overrides: map[string]int64{"x": 1}},
		{Resource: "c", Kind: KindHotspot, Param: "ip", Algorithm: "concurrency", MaxKeys: 5},
	}
	got, err := NormalizeRules(in)
	require.NoError(t, err)
	assert.Equal(t, []Rule{
		{Name: "flow:a", Resource: "a", Kind: KindFlow, Limit: 5, Window: time.Second, Algorithm: "leap-array", Buckets: 10},
		{Name: "flow:a#2", Resource: "a", Kind: KindFlow, Limit: 5, Window: time.Second, Algorithm: "leap-array", Buckets: 10, Warmup: time.Minute, ColdFactor: 3},
		{Name: "flow:a#3", Resource: "a", Kind: KindFlow, Limit: 5, Window: time.Minute, Algorithm: "token-bucket"},
		{Name: "flow:a#4", Resource: "a", Kind: KindFlow, Limit: 5, Window: time.Second, Algorithm: "leap-array", Buckets: 10},
		{Name: "concurrency:b", Resource: "b", Kind: KindConcurrency, Limit: 7},
		{Name: "hotspot:c:ip", Resource: "c", Kind: KindHotspot, Param: "ip", Limit: 9, Window: time.Second, Algorithm: "token-bucket", MaxKeys: defaultMaxKeys, Overrides: map[string]int64{"x": 1}},
		{Name: "hotspot:c:ip#2", Resource: "c", Kind: KindHotspot, Param: "ip", Algorithm: "concurrency", MaxKeys: 5},
	}, got)

	got[5].Overrides["x"] = 100
	assert.Equal(t, int64(1), in[5].Overrides["x"], "the copy shares the caller's map")

	again, err := NormalizeRules(got)
	require.NoError(t, err)
	assert.Equal(t, got, again, "normalizing twice changes nothing")
}

func TestNormalizeRulesNameCollisions(t *testing.T) {
	got, err := NormalizeRules([]Rule{
		{Resource: "*", Kind: KindConcurrency},
		{Name: "concurrency:*#2", Resource: "*", Kind: KindConcurrency},
		{Resource: "*", Kind: KindConcurrency},
		{Name: "flow:x", Resource: "y", Kind: KindConcurrency},
		{Resource: "x", Kind: KindFlow},
		{Resource: "*", Kind: KindConcurrency},
	})
	require.NoError(t, err)
	var names []string
	for _, r := range got {
		names = append(names, r.Name)
	}
	assert.Equal(t, []string{"concurrency:*", "concurrency:*#2", "concurrency:*#3", "flow:x", "flow:x#2", "concurrency:*#4"}, names)
}

func TestNormalizeRulesLongNames(t *testing.T) {
	res := strings.Repeat("é", 500) // 1000 bytes
	got, err := NormalizeRules([]Rule{
		{Resource: res, Kind: KindConcurrency},
		{Resource: res, Kind: KindConcurrency},
	})
	require.NoError(t, err)
	assert.Equal(t, "concurrency:"+strings.Repeat("_", 188), got[0].Name) // 12 + 188 bytes; 'é' is not in the name charset
	assert.Equal(t, "concurrency:"+strings.Repeat("_", 186)+"#2", got[1].Name)
	require.NoError(t, checkRules(got))
}

func TestNormalizeRulesInvalid(t *testing.T) {
	got, err := NormalizeRules([]Rule{{Resource: "*", Kind: KindConcurrency, Limit: -5, Name: "per-user"}})
	assert.Nil(t, got)
	assert.EqualError(t, err, "rules[0] (per-user): limit must be >= 0, got -5")
}

// TestCheckRulesNumbers: values the limiters cannot honour exactly are
// refused, each problem naming the rule, the field and the largest value
// allowed (before, burst 1000000 on 2 per 24h passed and then rejected
// every request, and a window near the longest Duration admitted every
// one).
func TestCheckRulesNumbers(t *testing.T) {
	day := 24 * time.Hour
	rules := []Rule{
		{Name: "daily", Resource: "*", Kind: KindFlow, Limit: 2, Window: day, Algorithm: "token-bucket", Burst: 1_000_000},
		{Name: "forever", Resource: "*", Kind: KindFlow, Limit: 1, Window: 1<<63 - 1, Algorithm: "sliding-log"},
		{Name: "huge", Resource: "*", Kind: KindFlow, Limit: 1 << 62, Algorithm: "fixed-window"},
		{Name: "patient", Resource: "*", Kind: KindFlow, Limit: 1, Algorithm: "leaky-bucket", MaxWait: 1<<63 - 1},
		{Name: "per-user", Resource: "*", Kind: KindHotspot, Param: "ip", Limit: 2, Window: day, Burst: 1_000_000, Overrides: map[string]int64{"vip": 1}},
		{Name: "per-user-wait", Resource: "*", Kind: KindHotspot, Param: "ip", Limit: 2, Algorithm: "leaky-bucket", MaxWait: 1<<63 - 1},
		{Name: "per-user-window", Resource: "*", Kind: KindHotspot, Param: "ip", Limit: 2, Window: 1<<63 - 1},
	}
	assert.Equal(t, []string{
		"rules[0] (daily): burst must be <= 102 with limit 2 per 24h0m0s (a spent bucket must fill within 1250h59m59.627370496s, and limit+burst be <= 4503599627370496), got 1000000",
		"rules[1] (forever): window must be <= 1250h59m59.627370496s (4503599627370496 ns), got 2562047h47m16.854775807s",
		"rules[2] (huge): limit must be <= 4503599627370496, got 4611686018427387904",
		"rules[3] (patient): maxWait must be <= 1250h59m59.627370496s (4503599627370496 ns), got 2562047h47m16.854775807s",
		"rules[4] (per-user): burst must be <= 51 with limit 1 per 24h0m0s (a spent bucket must fill within 1250h59m59.627370496s, and limit+burst be <= 4503599627370496), got 1000000",
		"rules[5] (per-user-wait): maxWait must be <= 1250h59m59.627370496s (4503599627370496 ns), got 2562047h47m16.854775807s",
		"rules[6] (per-user-window): window must be <= 1250h59m59.627370496s (4503599627370496 ns), got 2562047h47m16.854775807s",
	}, problemLines(t, checkRules(rules)))
}

// checkRules checks rules of the built-in kinds.
func checkRules(rules []Rule) error { return kindSet(builtinKinds()).checkRules(rules) }

// builtinName is defaultName for a rule of a built-in kind.
func builtinName(r Rule) string {
	k := kindSet(builtinKinds()).find(r.Kind)
	return defaultName(r, k != nil && k.field("param") != nil)
}

// TestProblemsBounded: 100,000 rules each wrong in ten fields give the
// first 1000 problems and a last one saying there are more, and checking
// them allocates far less than a million problems would (about 1 GB).
func TestProblemsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 100,000 rules")
	}
	bad := Rule{Resource: "r", Kind: KindFlow, Limit: -1, Window: -1, Burst: -1, Warmup: -1,
		Param: "x", Threshold: -1, MaxKeys: -1, Algorithm: "no", OnMissing: "no", Strategy: "no"}
	rules := make([]Rule, 100_000)
	for i := range rules {
		rules[i] = bad
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := NormalizeRules(rules)
	runtime.ReadMemStats(&after)
	lines := problemLines(t, err)
	require.Len(t, lines, 1001)
	assert.Equal(t, "there are more problems, not listed: at most 1000 are", lines[1000])
	assert.True(t, strings.HasPrefix(lines[0], "rules[0]: "), lines[0])
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(512<<20), "bytes allocated checking the rules: 322 MB measured, about 1 GB before the cut")
}
