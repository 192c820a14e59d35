package sluiceenvoy_test

import (
	"context"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestHostileOverrideWindow: a descriptor's limit whose unit times
// unit_multiplier is longer than a window can be is refused as the
// client's mistake, never wrapped around into a shorter window (a YEAR
// times 585 overflowed time.Duration into 21 days) nor answered Internal.
func TestHostileOverrideWindow(t *testing.T) {
	c, _, _ := serve(t, domain(t, edge))
	for _, m := range []uint32{0, 1, 292, 293, 585, 1000} {
		d := desc("generic_key", "free")
		d.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 1, Unit: typev3.RateLimitUnit_YEAR}
		if m > 0 {
			d.Limit.UnitMultiplier = wrapperspb.UInt32(m)
		}
		r, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{d}})
		assert.Equal(t, codes.InvalidArgument, status.Code(err), "YEAR times %d: %v", m, r)
	}
	d := desc("generic_key", "free")
	d.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: math.MaxUint32, Unit: typev3.RateLimitUnit_SECOND}
	_, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{d}})
	assert.Equal(t, codes.InvalidArgument, status.Code(err), "a limit above one request per nanosecond")

	// A config's limit per year is refused, loudly.
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	defer g.Close()
	_, err = sluiceenvoy.New(g, domain(t, "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: year, requests_per_unit: 1}\n"))
	assert.ErrorContains(t, err, "window must be <=")
}

// TestHostileRequestHitsAddend: the request's hits_addend, up to
// MaxUint32, is a cost that the limit refuses, never one that wraps into
// a small or negative count.
func TestHostileRequestHitsAddend(t *testing.T) {
	c, _, _ := serve(t, domain(t, edge))
	for _, kv := range [][]string{{"remote_address", "a"}, {"generic_key", "login"}} {
		r, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", HitsAddend: math.MaxUint32,
			Descriptors: []*ratelimitv3.RateLimitDescriptor{desc(kv...)}})
		require.NoError(t, err)
		assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, r.OverallCode, "%v", kv)
		assert.Empty(t, header(r.ResponseHeadersToAdd, "Retry-After"), "%v: a cost above the limit never passes", kv)
		// The refused hit took nothing.
		assert.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, c, "edge", desc(kv...)).OverallCode, "%v", kv)
	}
}

// TestWatcherReportsBadConfigAgain: a broken config written again after a
// good one applied is reported again (OnReload and the log), not taken
// for the failure already reported.
func TestWatcherReportsBadConfigAgain(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "edge.yaml")
	good := "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 3}\n"
	bad := good + "  - key: bad\n    rate_limit: {unit: fortnight}\n"
	_, w := watched(t, dir, good)
	write(t, file, bad)
	require.ErrorContains(t, w.reload(), "fortnight")
	write(t, file, good+"  - key: x\n    rate_limit: {unit: hour, requests_per_unit: 1}\n")
	require.NoError(t, w.reload())
	write(t, file, bad)
	require.ErrorContains(t, w.reload(), "fortnight")
}

// watched serves the config files of dir, writing its edge.yaml with
// content, under a Watcher (see watch); it returns the Server and the
// Watcher.
func watched(t *testing.T, dir, content string) (*sluiceenvoy.Server, *watch) {
	t.Helper()
	write(t, filepath.Join(dir, "edge.yaml"), content)
	cfg, err := sluiceenvoy.LoadFiles(dir)
	require.NoError(t, err)
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	s, err := sluiceenvoy.New(g, cfg)
	require.NoError(t, err)
	return s, newWatch(t, s, nil, dir)
}

// TestHostileLongKeys: a descriptor of a domain of sluice rules whose
// resource (domain and keys) is longer than a rule's resource can be is
// refused, and makes no resource: the Guard bounds the number of resource
// names, not their length, so that a client sending 4 MB keys grew the
// server by 4 MB a key, up to 10,000 of them.
func TestHostileLongKeys(t *testing.T) {
	rules, err := rulesfile.Parse([]byte("rules:\n  - resource: api/*\n    kind: flow\n    limit: 1000\n"))
	require.NoError(t, err)
	c, s, _ := serve(t, sluiceenvoy.Config{Rules: rules})
	assert.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, c, "api", desc(strings.Repeat("k", 1020), "v")).OverallCode, "api/ and 1020 bytes: 1024")
	before := len(s.Guard().Snapshot().Resources)
	for _, k := range []string{strings.Repeat("k", 1021), strings.Repeat("x", 1<<20)} {
		_, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "api", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc(k, "v")}})
		assert.Equal(t, codes.InvalidArgument, status.Code(err), "a key of %d bytes", len(k))
	}
	assert.Equal(t, before, len(s.Guard().Snapshot().Resources), "no resource made")
}
