package sluiceenvoy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestLongValuesQuotedShort: a request over loopback gRPC whose domain or
// key is 1 MB, and a config file whose key or value is, are refused with a
// short error that still names what is wrong (before, each was echoed
// whole, to the client and into logs).
func TestLongValuesQuotedShort(t *testing.T) {
	big := strings.Repeat("a", 1<<20)
	rules, err := rulesfile.Parse([]byte("rules:\n  - resource: api/*\n    kind: flow\n    limit: 1000\n"))
	require.NoError(t, err)
	cfg := domain(t, edge)
	cfg.Rules = rules
	c, _, _ := serve(t, cfg)
	for _, tc := range []struct {
		name string
		req  *rlsv3.RateLimitRequest
		code codes.Code
		msg  string
	}{
		{"unknown domain", &rlsv3.RateLimitRequest{Domain: big, Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("a", "b")}}, codes.NotFound, `unknown domain "aaaa`},
		{"no descriptors", &rlsv3.RateLimitRequest{Domain: big}, codes.InvalidArgument, `domain "aaaa`},
		{"key of a rules domain", &rlsv3.RateLimitRequest{Domain: "api", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc(big+"/", "b")}}, codes.InvalidArgument, `key "aaaa`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.ShouldRateLimit(context.Background(), tc.req)
			require.Error(t, err)
			assert.Equal(t, tc.code, status.Code(err))
			msg := status.Convert(err).Message()
			assert.Less(t, len(msg), 512, "%.300s", msg)
			assert.Contains(t, msg, tc.msg)
		})
	}

	for name, file := range map[string]string{
		"unknown key":       "domain: d\n? " + big + "\n: 1\n", // an explicit key: an implicit one is at most 1024 bytes
		"unit":              "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: " + big + ", requests_per_unit: 1}\n",
		"requests_per_unit": "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: " + big + "}\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "d.yaml")
			require.NoError(t, os.WriteFile(path, []byte(file), 0o600))
			_, err := sluiceenvoy.LoadFiles(path)
			require.Error(t, err)
			assert.Less(t, len(err.Error()), 512, "%.300s", err)
			assert.Contains(t, err.Error(), name)
		})
	}
}
