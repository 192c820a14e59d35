package sluiceenvoy

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
)

// TestDocumentedDefaults checks each default that the package
// documentation and the doc comments state: what a Server and a Watcher
// built without the option do, the rules a config becomes with and
// without a Store, and that each text states that value. The rule defaults
// are core's (its TestDocumentedDefaults checks its own docs); this checks
// that what this package says of them is what a Server gets.
func TestDocumentedDefaults(t *testing.T) {
	d, err := ParseDomain("edge.yaml", []byte(`
domain: edge
descriptors:
  - key: path
    value: /login
    rate_limit: {unit: second, requests_per_unit: 5}
  - key: remote_address
    rate_limit: {unit: second, requests_per_unit: 5}
`))
	require.NoError(t, err)
	mem, _ := defaultsServer(t, d)
	stored, s := defaultsServer(t, d, WithRuleDefaults(core.Rule{Store: "redis"}))
	w, err := NewWatcher(s, []string{t.TempDir()}, WatcherOptions{})
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Close()) }()
	require.Equal(t, s.g.Clock(), w.clk, "a Watcher polls on its Server's Guard's clock by default")

	prose := func(a core.Algorithm) string { return strings.ReplaceAll(string(a), "-", " ") }
	for _, c := range []struct {
		name      string
		want, got any
		docs      [][3]string // path, pattern whose first group states the value, the value as written there
	}{
		{"flow algorithm", core.AlgorithmLeapArray, mem["flow"].Algorithm, [][3]string{
			{"doc.go", `is a flow rule: one count, the (\S+) algorithm`, string(core.AlgorithmLeapArray)},
			{"options.go", `are flow rules with the (\S+) algorithm`, string(core.AlgorithmLeapArray)},
		}},
		{"flow buckets", 10, mem["flow"].Buckets, [][3]string{
			{"doc.go", `a sliding window of (\d+) buckets`, strconv.Itoa(mem["flow"].Buckets)},
			{"options.go", `a sliding window of (\d+) buckets`, strconv.Itoa(mem["flow"].Buckets)},
		}},
		{"hotspot algorithm", core.AlgorithmTokenBucket, mem["hotspot"].Algorithm, [][3]string{
			{"doc.go", `the (\S+) algorithm in memory`, string(core.AlgorithmTokenBucket)},
			{"options.go", `values vary are hotspot rules with the (\S+) algorithm`, string(core.AlgorithmTokenBucket)},
		}},
		{"hotspot maxKeys", 100_000, mem["hotspot"].MaxKeys, [][3]string{
			{"doc.go", `\(MaxKeys, ([\d,]+) by default;`, thousands(mem["hotspot"].MaxKeys)},
		}},
		{"flow algorithm with a store", core.AlgorithmSlidingCounter, stored["flow"].Algorithm, [][3]string{
			{"doc.go", `the flow rules are (.+?)s in the store`, prose(core.AlgorithmSlidingCounter)},
			{"options.go", `flow rules use the store's (.+?) by default`, prose(core.AlgorithmSlidingCounter)},
		}},
		{"hotspot algorithm with a store", core.AlgorithmTokenBucket, stored["hotspot"].Algorithm, [][3]string{
			{"doc.go", `the hotspot rules (.+?)s in the store`, prose(core.AlgorithmTokenBucket)},
			{"options.go", `hotspot rules its (.+?) \(core\.Rule\.Store\)`, prose(core.AlgorithmTokenBucket)},
		}},
		{"WithMaxOverrides", defaultMaxOverrides, s.o.maxOverrides, [][3]string{
			{"options.go", `limit overrides may ask for \(default (\d+)\)`, strconv.Itoa(defaultMaxOverrides)},
		}},
		{"WatcherOptions.Interval", defaultWatchInterval, w.interval, [][3]string{
			{"watcher.go", `Interval is the time between polls; default (\S+)\.`, defaultWatchInterval.String()},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.EqualValues(t, c.want, c.got, "the code's default")
			for _, p := range c.docs {
				text, err := os.ReadFile(p[0])
				require.NoError(t, err)
				// The comment as prose: no "//" at line starts, one space for each run of white space.
				words := strings.Fields(regexp.MustCompile(`(?m)^\s*//`).ReplaceAllString(string(text), " "))
				ms := regexp.MustCompile(p[1]).FindAllStringSubmatch(strings.Join(words, " "), -1)
				require.NotEmpty(t, ms, "%s states nothing matching %q", p[0], p[1])
				for _, m := range ms {
					require.Equal(t, p[2], m[1], "%s states %q where the code has %q", p[0], m[1], p[2])
				}
			}
		})
	}
}

// defaultsServer returns the rules, by kind, of a Server of d made with
// opts, and the Server, on a Guard with a memory store named redis.
func defaultsServer(t *testing.T, d Domain, opts ...Option) (map[string]core.Rule, *Server) {
	t.Helper()
	st, err := store.NewMemory(clock.NewFake(0), 100)
	require.NoError(t, err)
	g, err := core.New(core.WithClock(clock.NewFake(0)), core.WithStore("redis", st))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	s, err := New(g, Config{Domains: []Domain{d}}, opts...)
	require.NoError(t, err)
	rules := map[string]core.Rule{}
	for _, r := range g.Rules() {
		rules[string(r.Kind)] = r
	}
	require.Len(t, rules, 2)
	return rules, s
}

// thousands writes n with comma separators, as prose does: "100,000".
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
