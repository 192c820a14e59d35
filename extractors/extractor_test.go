package extractors_test

import (
	"context"
	"net/http"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/extractors"
)

func TestNewOptionErrors(t *testing.T) {
	httpFn := func(*http.Request) []string { return nil }
	grpcFn := func(context.Context, string) []string { return nil }
	for _, tc := range []struct {
		name string
		opt  extractors.Option
		msg  string
	}{
		{"proxy garbage", extractors.WithTrustedProxies("10.0.0.0/8", "nope"), `WithTrustedProxies: "nope"`},
		{"proxy bad bits", extractors.WithTrustedProxies("10.0.0.0/33"), `WithTrustedProxies: "10.0.0.0/33"`},
		{"proxy empty", extractors.WithTrustedProxies(""), `WithTrustedProxies: ""`},
		{"short mapped prefix", extractors.WithTrustedProxies("::ffff:0:0/80"), `WithTrustedProxies: "::ffff:0:0/80"`},
		{"value len 0", extractors.WithMaxValueLen(0), "WithMaxValueLen: must be >= 1, got 0"},
		{"values -1", extractors.WithMaxValues(-1), "WithMaxValues: must be >= 1, got -1"},
		{"http custom bad name", extractors.WithHTTPParam("header:x", httpFn), `WithHTTPParam: "header:x" is not a custom param name`},
		{"http custom builtin", extractors.WithHTTPParam("ip", httpFn), `WithHTTPParam: "ip" is a built-in param`},
		{"http custom nil", extractors.WithHTTPParam("tenant", nil), `WithHTTPParam: "tenant": function is nil`},
		{"grpc custom bad", extractors.WithGRPCParam("9x", grpcFn), `WithGRPCParam: "9x" is not a custom param name`},
		{"grpc custom builtin", extractors.WithGRPCParam("peer", grpcFn), `WithGRPCParam: "peer" is a built-in param`},
		{"grpc custom nil", extractors.WithGRPCParam("tenant", nil), `WithGRPCParam: "tenant": function is nil`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := extractors.New(tc.opt)
			require.Error(t, err)
			assert.Nil(t, x)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}

	_, err := extractors.New(extractors.WithHTTPParam("t", httpFn), extractors.WithHTTPParam("t", httpFn))
	require.ErrorContains(t, err, `WithHTTPParam: "t" registered twice`)
	_, err = extractors.New(extractors.WithGRPCParam("t", grpcFn), extractors.WithGRPCParam("t", grpcFn))
	require.ErrorContains(t, err, `WithGRPCParam: "t" registered twice`)
}

func TestNewDefaults(t *testing.T) {
	x, err := extractors.New()
	require.NoError(t, err)
	r := newRequest(t, "GET", "/", "203.0.113.9:1234", "X-Forwarded-For", "198.51.100.1")
	assert.Equal(t, netip.MustParseAddr("203.0.113.9"), x.ClientIP(r), "no proxy is trusted by default")

	long := make([]byte, extractors.DefaultMaxValueLen+10)
	for i := range long {
		long[i] = 'a'
	}
	r = newRequest(t, "GET", "/", "203.0.113.9:1234", "X-User-ID", string(long))
	v, ok := x.HTTPParams(r, nil).Param("header:X-User-ID", 0)
	require.True(t, ok)
	assert.Len(t, v, extractors.DefaultMaxValueLen)
}

func TestTrustedProxyForms(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opt   extractors.Option
		peer  string
		trust bool
	}{
		{"cidr v4", extractors.WithTrustedProxies("10.0.0.0/8"), "10.1.2.3:1", true},
		{"cidr v4 outside", extractors.WithTrustedProxies("10.0.0.0/8"), "11.1.2.3:1", false},
		{"unmasked cidr", extractors.WithTrustedProxies("10.9.9.9/8"), "10.1.2.3:1", true},
		{"bare v4", extractors.WithTrustedProxies("192.168.1.7"), "192.168.1.7:1", true},
		{"bare v4 is /32", extractors.WithTrustedProxies("192.168.1.7"), "192.168.1.8:1", false},
		{"bare v6", extractors.WithTrustedProxies("2001:db8::1"), "[2001:db8::1]:1", true},
		{"bare v6 is /128", extractors.WithTrustedProxies("2001:db8::1"), "[2001:db8::2]:1", false},
		{"cidr v6", extractors.WithTrustedProxies("fd00::/8"), "[fd12::1]:1", true},
		{"mapped peer", extractors.WithTrustedProxies("10.0.0.0/8"), "[::ffff:10.0.0.1]:1", true},
		{"mapped prefix", extractors.WithTrustedProxies("::ffff:10.0.0.0/104"), "10.0.0.1:1", true},
		{"zoned peer", extractors.WithTrustedProxies("fe80::/10"), "[fe80::1%eth0]:1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := extractors.New(tc.opt)
			require.NoError(t, err)
			r := newRequest(t, "GET", "/", tc.peer, "X-Forwarded-For", "198.51.100.1")
			got := x.ClientIP(r)
			if tc.trust {
				assert.Equal(t, "198.51.100.1", got.String())
			} else {
				assert.NotEqual(t, "198.51.100.1", got.String())
			}
		})
	}
}

func TestCheckParam(t *testing.T) {
	x, err := extractors.New(
		extractors.WithHTTPParam("tenant", func(*http.Request) []string { return nil }),
		extractors.WithGRPCParam("region", func(context.Context, string) []string { return nil }),
	)
	require.NoError(t, err)
	for _, spec := range []string{"header:X-User-ID", "ip", "peer", "method", "host", "tenant", "region", "metadata:k"} {
		assert.NoError(t, x.CheckParam(spec), spec)
	}
	require.ErrorContains(t, x.CheckParam("tenantt"), `"tenantt" is not a custom param of the extractor (registered: region, tenant)`)
	require.ErrorContains(t, x.CheckParam("form:x"), `unknown kind "form"`)
}

func TestSources(t *testing.T) {
	x1, err := extractors.New()
	require.NoError(t, err)
	x2, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"))
	require.NoError(t, err)
	assert.Equal(t, x1.HTTPSource(), x2.HTTPSource(), "extractors without custom params have equal sources")
	assert.NotEqual(t, x1.HTTPSource(), x1.GRPCSource())

	x, err := extractors.New(
		extractors.WithHTTPParam("tenant", func(*http.Request) []string { return nil }),
		extractors.WithGRPCParam("region", func(context.Context, string) []string { return nil }),
	)
	require.NoError(t, err)
	for _, spec := range []string{"ip", "header:X-User-ID", "tenant"} {
		assert.NoError(t, x.HTTPSource().CheckParam(spec), spec)
	}
	assert.EqualError(t, x.HTTPSource().CheckParam("region"), `"region" is not a custom param of the HTTP extractor (registered: tenant): register it with extractors.WithHTTPParam or WithContextParam and give that Extractor to the Guard (core.WithParamSource)`)
	assert.NoError(t, x.GRPCSource().CheckParam("region"))
	assert.ErrorContains(t, x.GRPCSource().CheckParam("tenant"), `"tenant" is not a custom param of the gRPC extractor (registered: region): register it with extractors.WithGRPCParam`)
	assert.ErrorContains(t, x1.GRPCSource().CheckParam("tenant"), `(registered: none)`)
}
