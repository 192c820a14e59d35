package sluiceenvoy_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

func TestParseDomainErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"descriptors: []", "test.yaml:1: domain must not be empty"},
		{"domain: d\ndescriptors:\n  - value: x", "test.yaml:3: descriptors[0].key must not be empty"},
		{"domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: fortnight, requests_per_unit: 1}", "test.yaml:4: descriptors[0].rate_limit.unit must be second, minute, hour, day, week, month or year, got \"fortnight\""},
		{"domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, unlimited: true}", "unlimited takes no unit"},
		{"domain: d\ndescriptors:\n  - key: k\n  - key: k", `test.yaml:4: descriptors[1]: duplicate descriptor "k"`},
		{"domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: -1}", "requests_per_unit must be an integer from 0 to 4294967295"},
		{"domain: d\ndescriptors:\n  - key: k\n    ratelimit: {}", `unknown key "ratelimit"`},
		{"domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, name: a, replaces: [{name: a}]}", "must not name the limit itself"},
		{"domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, replaces: [{name: \"\"}]}", "replaces[0].name must not be empty"},
		{"domain: d\ndescriptors:\n  - key: k\n    value: v\n    share_threshold: true", `share_threshold needs a '*' in key or value, got "k_v"`},
		{"domain: d\ndescriptors:\n  - key: k\n    quota_mode: true", "quota_mode is a key of the reference server that sluice does not implement"},
	} {
		_, err := sluiceenvoy.ParseDomain("test.yaml", []byte(tc.yaml))
		require.Error(t, err, tc.yaml)
		assert.Contains(t, err.Error(), tc.want)
	}
	// Units in either case, week, month and year included.
	d, err := sluiceenvoy.ParseDomain("t", []byte("domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: WEEK, requests_per_unit: 1}"))
	require.NoError(t, err)
	assert.Equal(t, sluiceenvoy.UnitWeek, d.Descriptors[0].RateLimit.Unit)
	assert.Equal(t, 30*24*time.Hour, sluiceenvoy.UnitMonth.Duration())
}

func TestNewRefusesBadAlgorithm(t *testing.T) {
	g, err := core.New()
	require.NoError(t, err)
	defer g.Close()
	d, err := sluiceenvoy.ParseDomain("t", []byte("domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1, sluice: {algorithm: fifo}}"))
	require.NoError(t, err)
	_, err = sluiceenvoy.New(g, sluiceenvoy.Config{Domains: []sluiceenvoy.Domain{d}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fifo")
	d, err = sluiceenvoy.ParseDomain("t", []byte("domain: d\ndescriptors:\n  - key: k\n    value: v\n    rate_limit: {unit: second, requests_per_unit: 1, sluice: {algorithm: sliding-log}}"))
	require.NoError(t, err)
	_, err = sluiceenvoy.New(g, sluiceenvoy.Config{Domains: []sluiceenvoy.Domain{d}})
	require.NoError(t, err)
	assert.Equal(t, core.AlgorithmSlidingLog, g.Rules()[0].Algorithm)
	_, err = sluiceenvoy.New(g, sluiceenvoy.Config{}, sluiceenvoy.WithRuleDefaults(core.Rule{Limit: 3}))
	assert.ErrorContains(t, err, "WithRuleDefaults")
}

func TestLoadFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}\n")
	write(t, filepath.Join(dir, "b.yaml"), "rules:\n  - resource: b/user\n    kind: hotspot\n    param: user\n    limit: 1\n")
	write(t, filepath.Join(dir, "notes.txt"), "not a config")
	c, err := sluiceenvoy.LoadFiles(dir)
	require.NoError(t, err)
	assert.Len(t, c.Domains, 1)
	assert.Len(t, c.Rules, 1)
	write(t, filepath.Join(dir, "c.yaml"), "domain: a\ndescriptors: []\n")
	_, err = sluiceenvoy.LoadFiles(dir)
	assert.ErrorContains(t, err, `domain "a" is also the domain of`)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(content), 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// TestReloadWhileServing: a new config applies while requests are served,
// the count of a limit it keeps carries over, and a config with a problem
// keeps the one in force.
func TestReloadWhileServing(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "edge.yaml")
	v1 := "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 3}\n"
	write(t, file, v1)
	cfg, err := sluiceenvoy.LoadFiles(dir)
	require.NoError(t, err)
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	defer g.Close()
	s, err := sluiceenvoy.New(g, cfg)
	require.NoError(t, err)
	c := dial(t, s)
	w := newWatch(t, s, nil, dir)

	// Requests go on during reloads.
	stop := make(chan struct{})
	served := make(chan int)
	go func() {
		n := 0
		defer func() { served <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("generic_key", "x")}})
			if err != nil {
				t.Error(err)
				return
			}
			n++
		}
	}()

	ask(t, c, "edge", desc("remote_address", "a"))
	ask(t, c, "edge", desc("remote_address", "a"))
	// A broken file: refused, the limit stays in force.
	write(t, file, v1+"  - key: bad\n    rate_limit: {unit: fortnight}\n")
	require.ErrorContains(t, w.reload(), "fortnight")
	r := ask(t, c, "edge", desc("remote_address", "a"))
	assert.Equal(t, uint32(0), r.Statuses[0].LimitRemaining)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, c, "edge", desc("remote_address", "a")).OverallCode)

	// A good one: a new limit applies, the kept one keeps its count.
	write(t, file, v1+"  - key: generic_key\n    value: y\n    rate_limit: {unit: minute, requests_per_unit: 0}\n")
	require.NoError(t, w.reload())
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, c, "edge", desc("generic_key", "y")).OverallCode)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, c, "edge", desc("remote_address", "a")).OverallCode)
	close(stop)
	assert.Positive(t, <-served)
}

// watch is a Watcher under test on a fake clock of its own: the test makes
// it poll, so that what it does is a sequence of polls, not a race with
// the wall clock.
type watch struct {
	*sluiceenvoy.Watcher
	t       *testing.T
	clk     *clock.Fake
	reloads chan error // what OnReload was given
}

// watchEvery is a test Watcher's Interval.
const watchEvery = time.Second

// newWatch starts a Watcher of paths for s, logging to log (nil: nowhere),
// closed when the test ends.
func newWatch(t *testing.T, s *sluiceenvoy.Server, log *slog.Logger, paths ...string) *watch {
	t.Helper()
	w := &watch{t: t, clk: clock.NewFake(0), reloads: make(chan error, 10)}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var err error
	w.Watcher, err = sluiceenvoy.NewWatcher(s, paths, sluiceenvoy.WatcherOptions{
		Interval: watchEvery, Clock: w.clk, Logger: log, OnReload: func(err error) { w.reloads <- err },
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// poll makes the Watcher poll once and returns when it is done.
func (w *watch) poll() {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard, not a timing bound
	defer cancel()
	require.NoError(w.t, w.clk.WaitForSleepers(ctx, 1), "the Watcher does not wait for its next poll")
	w.clk.Advance(watchEvery)
	require.NoError(w.t, w.clk.WaitForSleepers(ctx, 1), "the Watcher's poll does not end")
}

// reload makes the Watcher poll twice, which a change of the files takes to
// apply, and returns what it then reported.
func (w *watch) reload() error {
	w.t.Helper()
	w.poll()
	w.poll()
	select {
	case err := <-w.reloads:
		return err
	default:
		w.t.Fatal("no reload after two polls")
		return nil
	}
}
