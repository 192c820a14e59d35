package sluiceenvoy_test

import (
	"strconv"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// TestRetryTimeIsNeverEarly attacks the package doc's promise that a
// rejected descriptor's duration_until_reset is the time after which it
// would be admitted, and Retry-After at least that: for each algorithm a
// limit may have (a config's flow and per-value limits, a descriptor's
// limit override, sluice rules of each rate algorithm), requests use up
// the limit, spread over the window (at once for the buckets, which
// refill continuously); the one rejected then is asked again
// on the fake clock just before its retry time (still rejected: the time
// is not later than it needs to be, to the millisecond) and at it
// (admitted), and Retry-After is that time rounded up to the second.
func TestRetryTimeIsNeverEarly(t *testing.T) {
	const yaml = "domain: edge\ndescriptors:\n  - key: tenant\n    value: a\n    rate_limit: {unit: minute, requests_per_unit: 3}\n" +
		"  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 3}\n"
	override := desc("user", "u")
	override.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 3, Unit: typev3.RateLimitUnit_MINUTE}
	type tc struct {
		name   string
		domain string
		d      *ratelimitv3.RateLimitDescriptor
		spread time.Duration // between the requests that use up the limit
	}
	cases := []tc{{"flow limit", "edge", desc("tenant", "a"), 7 * time.Second}, {"per-value limit", "edge", desc("remote_address", "x"), 0}, {"limit override", "edge", override, 0}}
	cfg := domain(t, yaml)
	for _, alg := range []core.Algorithm{core.AlgorithmLeapArray, core.AlgorithmSlidingLog, core.AlgorithmFixedWindow, core.AlgorithmTokenBucket, core.AlgorithmLeakyBucket, core.AlgorithmSlidingCounter} {
		res := "api" + strconv.Itoa(len(cfg.Rules))
		cfg.Rules = append(cfg.Rules, core.Rule{Name: string(alg), Resource: res + "/k", Kind: core.KindFlow, Algorithm: alg, Limit: 3, Window: time.Minute})
		spread := 7 * time.Second
		if alg == core.AlgorithmTokenBucket || alg == core.AlgorithmLeakyBucket {
			spread = 0
		}
		cases = append(cases, tc{"rule " + string(alg), res, desc("k", "v"), spread})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rpc, _, fc := serve(t, cfg)
			r := ask(t, rpc, c.domain, c.d)
			for i := 0; r.OverallCode == rlsv3.RateLimitResponse_OK && i < 3; i++ {
				fc.Advance(c.spread)
				r = ask(t, rpc, c.domain, c.d)
			}
			require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, r.OverallCode)
			retry := r.Statuses[0].DurationUntilReset.AsDuration()
			require.Positive(t, retry)
			secs := int64((retry + time.Second - 1) / time.Second)
			assert.Equal(t, strconv.FormatInt(secs, 10), header(r.ResponseHeadersToAdd, "Retry-After"))
			if retry > time.Millisecond {
				fc.Advance(retry - time.Millisecond)
				assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, rpc, c.domain, c.d).OverallCode, "%s after the rejection: before its retry time %s", retry-time.Millisecond, retry)
				fc.Advance(time.Millisecond)
			} else {
				fc.Advance(retry)
			}
			assert.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, rpc, c.domain, c.d).OverallCode, "at its retry time %s", retry)
		})
	}
}
