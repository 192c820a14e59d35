package sluiceenvoy_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// filter does what Envoy's HTTP ratelimit filter
// (envoy.filters.http.ratelimit) does with the route's rate limit actions
//
//	actions: [{remote_address: {}}]
//	actions: [{request_headers: {header_name: x-user, descriptor_key: user}}]
//
// it makes a descriptor per action whose value the request has, asks the
// service with a timeout, and on an error or timeout lets the request through
// unless failureModeDeny (then 500, as Envoy answers); on OVER_LIMIT it
// answers 429 with the service's headers and body, on OK it adds the
// service's headers to the upstream's response.
type filter struct {
	rls             rlsv3.RateLimitServiceClient
	timeout         time.Duration
	failureModeDeny bool
	upstream        http.Handler
}

func (f *filter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	req := &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("remote_address", host)}}
	if u := r.Header.Get("x-user"); u != "" {
		req.Descriptors = append(req.Descriptors, desc("user", u))
	}
	ctx, cancel := context.WithTimeout(r.Context(), f.timeout)
	defer cancel()
	resp, err := f.rls.ShouldRateLimit(ctx, req)
	if err != nil {
		w.Header().Set("x-envoy-ratelimit-error", "1")
		if f.failureModeDeny {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		f.upstream.ServeHTTP(w, r)
		return
	}
	for _, h := range resp.ResponseHeadersToAdd {
		w.Header().Add(h.Key, h.Value)
	}
	if resp.OverallCode == rlsv3.RateLimitResponse_OVER_LIMIT {
		w.Header().Set("x-envoy-ratelimited", "true")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write(resp.RawBody)
		return
	}
	f.upstream.ServeHTTP(w, r)
}

var upstream = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") })

func get(t *testing.T, url, user string) (*http.Response, string) {
	t.Helper()
	rq, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if user != "" {
		rq.Header.Set("x-user", user)
	}
	resp, err := http.DefaultClient.Do(rq)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

func TestAsEnvoyFilter(t *testing.T) {
	c, _, _ := serve(t, domain(t, `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 4}
  - key: user
    rate_limit: {unit: minute, requests_per_unit: 2}
`), sluiceenvoy.WithXRateLimitHeaders())
	front := httptest.NewServer(&filter{rls: c, timeout: time.Minute, upstream: upstream})
	defer front.Close()

	resp, body := get(t, front.URL, "alice")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "hello", body)
	assert.Equal(t, `"edge.remote_address";q=4;w=60, "edge.user";q=2;w=60`, resp.Header.Get("RateLimit-Policy"))
	// Per-value limits are token buckets: t is the time to refill.
	assert.Equal(t, `"edge.remote_address";r=3;t=15, "edge.user";r=1;t=30`, resp.Header.Get("RateLimit"))
	assert.Equal(t, "2, 4;w=60, 2;w=60", resp.Header.Get("X-RateLimit-Limit"))
	assert.Equal(t, "1", resp.Header.Get("X-RateLimit-Remaining"))

	get(t, front.URL, "alice")
	resp, body = get(t, front.URL, "alice")
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "alice is over her limit")
	assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
	assert.Contains(t, body, `"rule":"edge.user"`)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))

	resp, _ = get(t, front.URL, "bob")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "bob is not; the address has one left")
	resp, _ = get(t, front.URL, "")
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "the address is over its limit")
}

// TestAsEnvoyFilterFailureMode: a service that does not answer in the
// filter's timeout, or cannot be reached, fails open unless
// failure_mode_deny.
func TestAsEnvoyFilterFailureMode(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(0)))
	require.NoError(t, err)
	defer g.Close()
	s, err := sluiceenvoy.New(g, domain(t, "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 0}\n"))
	require.NoError(t, err)
	// A server that holds every call until its deadline: the filter times out.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	s.Register(srv)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	slow, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer slow.Close()
	// And an address where nothing listens.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadAddr := dead.Addr().String()
	dead.Close()
	gone, err := grpc.NewClient(deadAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer gone.Close()

	for _, conn := range []*grpc.ClientConn{slow, gone} {
		for _, deny := range []bool{false, true} {
			front := httptest.NewServer(&filter{rls: rlsv3.NewRateLimitServiceClient(conn), timeout: 50 * time.Millisecond, failureModeDeny: deny, upstream: upstream})
			resp, _ := get(t, front.URL, "")
			front.Close()
			assert.Equal(t, "1", resp.Header.Get("x-envoy-ratelimit-error"))
			if deny {
				assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
			} else {
				assert.Equal(t, http.StatusOK, resp.StatusCode)
			}
		}
	}
}
