package sluicegrpc_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// withPeer returns ctx with a TCP peer at addr ("ip:port").
func withPeer(ctx context.Context, addr string) context.Context {
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		panic(err)
	}
	return peer.NewContext(ctx, &peer.Peer{Addr: tcp})
}

// callParams returns the params of the call of fullMethod with context ctx,
// read by x through CallInfo.
func callParams(x *extractors.Extractor, ctx context.Context, fullMethod string) core.Params {
	p := new(extractors.Params)
	p.ResetGRPC((*extractors.Extractor)(x), sluicegrpc.CallInfo{}, ctx, fullMethod)
	return p
}

// values returns every value Param yields for param, asking i = 0, 1, ...
// as Enter does.
func values(p core.Params, param string) []string {
	var vs []string
	for i := 0; ; i++ {
		v, ok := p.Param(param, i)
		if !ok {
			return vs
		}
		vs = append(vs, v)
	}
}

// countValues reads every value of param as Enter does and returns their
// number.
func countValues(p core.Params, param string) int {
	n := 0
	for {
		if _, ok := p.Param(param, n); !ok {
			return n
		}
		n++
	}
}

// strAddr is a net.Addr that is not a *net.TCPAddr.
type strAddr string

func (a strAddr) Network() string { return "test" }
func (a strAddr) String() string  { return string(a) }

// TestGRPCParamKinds reads every kind of param through CallInfo from
// grpc-go contexts: incoming and outgoing metadata, the peer, and the
// forwarding metadata of a trusted proxy.
func TestGRPCParamKinds(t *testing.T) {
	x, err := extractors.New(
		extractors.WithTrustedProxies("10.0.0.0/8"),
		extractors.WithGRPCParam("tenant", func(ctx context.Context, fullMethod string) []string {
			return []string{"t-" + strings.TrimPrefix(fullMethod, "/")}
		}),
		extractors.WithHTTPParam("httponly", func(*http.Request) []string { return nil }),
	)
	require.NoError(t, err)
	const method = "/pkg.Svc/Get"
	bg := t.Context()
	in := func(kv ...string) context.Context { return metadata.NewIncomingContext(bg, metadata.Pairs(kv...)) }
	withAddr := func(a net.Addr) context.Context { return peer.NewContext(bg, &peer.Peer{Addr: a}) }

	for _, tc := range []struct {
		name   string
		ctx    context.Context
		param  string
		values []string
	}{
		{"metadata", in("x-api-key", "k1"), "metadata:x-api-key", []string{"k1"}},
		{"metadata any case", in("x-api-key", "k1"), "metadata:X-Api-KEY", []string{"k1"}},
		{"metadata raw map key with capitals", metadata.NewIncomingContext(bg, metadata.MD{"X-Api-Key": {"k1"}}), "metadata:x-api-key", []string{"k1"}},
		{"header is metadata", in("x-user-id", "alice"), "header:X-User-ID", []string{"alice"}},
		{"metadata values and commas", in("k", "a, b", "k", "c"), "metadata:k", []string{"a", "b", "c"}},
		{"binary metadata not split", in("k-bin", "a,b"), "metadata:k-bin", []string{"a,b"}},
		{"metadata absent", in("other", "x"), "metadata:k", nil},
		{"no metadata", bg, "metadata:k", nil},
		{"outgoing metadata", metadata.NewOutgoingContext(bg, metadata.Pairs("k", "out")), "metadata:k", []string{"out"}},
		{"appended outgoing metadata", metadata.AppendToOutgoingContext(bg, "K", "out2"), "metadata:k", []string{"out2"}},
		{"incoming preferred", metadata.NewOutgoingContext(in("k", "in"), metadata.Pairs("k", "out")), "metadata:k", []string{"in"}},
		{"outgoing when incoming lacks the key", metadata.NewOutgoingContext(in("j", "in"), metadata.Pairs("k", "out")), "metadata:k", []string{"out"}},
		{"outgoing and appended", metadata.AppendToOutgoingContext(metadata.NewOutgoingContext(bg, metadata.Pairs("k", "a, b")), "k", "c"), "metadata:k", []string{"a", "b", "c"}},
		{"outgoing raw map key with capitals", metadata.NewOutgoingContext(bg, metadata.MD{"X-Api-Key": {"k1"}}), "metadata:x-api-key", []string{"k1"}},

		{"peer", withPeer(bg, "198.51.100.7:5000"), "peer", []string{"198.51.100.7"}},
		{"peer v6", withPeer(bg, "[2001:db8::7]:5000"), "peer", []string{"2001:db8::7"}},
		{"peer v4-mapped", withPeer(bg, "[::ffff:198.51.100.7]:5000"), "peer", []string{"198.51.100.7"}},
		{"peer not TCP", withAddr(strAddr("[fe80::1%eth0]:5000")), "peer", []string{"fe80::1"}},
		{"peer not TCP without port", withAddr(strAddr("198.51.100.8")), "peer", []string{"198.51.100.8"}},
		{"peer not an IP", withAddr(strAddr("/run/app.sock")), "peer", nil},
		{"peer without address", peer.NewContext(bg, &peer.Peer{}), "peer", nil},
		{"no peer", bg, "peer", nil},
		{"ip is peer", withPeer(in("x-forwarded-for", "1.1.1.1"), "198.51.100.7:5000"), "ip", []string{"198.51.100.7"}},
		{"ip via trusted proxy", withPeer(in("x-forwarded-for", "6.6.6.6, 198.51.100.7"), "10.0.0.1:5000"), "ip", []string{"198.51.100.7"}},
		{"ip via trusted proxy forwarded", withPeer(in("forwarded", `for="[2001:db8::7]:1"`), "10.0.0.1:5000"), "ip", []string{"2001:db8::/64"}},
		{"ip via trusted proxy x-real-ip", withPeer(in("x-real-ip", "198.51.100.9"), "10.0.0.1:5000"), "ip", []string{"198.51.100.9"}},
		{"ip trusted proxy without headers", withPeer(bg, "10.0.0.1:5000"), "ip", []string{"10.0.0.1"}},
		{"ip trusted proxy outgoing headers ignored", withPeer(metadata.NewOutgoingContext(bg, metadata.Pairs("x-forwarded-for", "1.1.1.1")), "10.0.0.1:5000"), "ip", []string{"10.0.0.1"}},
		{"ip without peer", in("x-forwarded-for", "1.1.1.1"), "ip", nil},
		{"ip v6 peer is its prefix", withPeer(bg, "[2001:db8:1:2:3:4:5:6]:4000"), "ip", []string{"2001:db8:1:2::/64"}},

		{"method", bg, "method", []string{method}},
		{"host", in(":authority", "API.example.com:443"), "host", []string{"api.example.com"}},
		{"host absent", bg, "host", nil},
		{"custom", bg, "tenant", []string{"t-pkg.Svc/Get"}},
		{"custom for http only", bg, "httponly", nil},

		{"query absent on grpc", in("q", "1"), "query:q", nil},
		{"cookie absent on grpc", in("cookie", "a=1"), "cookie:a", nil},
		{"path absent on grpc", bg, "path:id", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := callParams(x, tc.ctx, method)
			assert.Equal(t, tc.values, values(p, tc.param))
			assert.Equal(t, tc.values, values(p, tc.param), "reading again gives the same values")
		})
	}
}

func TestGRPCParamCaps(t *testing.T) {
	x, err := extractors.New(extractors.WithMaxValueLen(3), extractors.WithMaxValues(2))
	require.NoError(t, err)
	ctx := metadata.NewIncomingContext(t.Context(), metadata.Pairs("k", "abcdef", "k", "x", "k", "y"))
	assert.Equal(t, []string{"abc", "(too many values)"}, values(callParams(x, ctx, "/a.B/C"), "metadata:k"))
}

// TestGRPCParamsOverServer serves a real gRPC health service on a loopback
// listener with an interceptor of its own that reads params through
// CallInfo, and calls it with a real client sending metadata.
func TestGRPCParamsOverServer(t *testing.T) {
	x, err := extractors.New(extractors.WithTrustedProxies("127.0.0.0/8"))
	require.NoError(t, err)

	type seen struct{ method, key, peer, ip, host string }
	got := make(chan seen, 1)
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		p := callParams(x, ctx, info.FullMethod)
		var s seen
		s.method, _ = p.Param("method", 0)
		s.key, _ = p.Param("metadata:X-Api-Key", 0)
		s.peer, _ = p.Param("peer", 0)
		s.ip, _ = p.Param("ip", 0)
		s.host, _ = p.Param("host", 0)
		got <- s
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)

	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })

	ctx := metadata.AppendToOutgoingContext(t.Context(), "x-api-key", "k1", "x-forwarded-for", "203.0.113.7")
	_, err = healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	assert.Equal(t, seen{
		method: "/grpc.health.v1.Health/Check", key: "k1", peer: "127.0.0.1", ip: "203.0.113.7", host: "127.0.0.1",
	}, <-got)
}

// TestParamsReset: a Params reset (ResetGRPC) for another call reads
// that call, and ResetGRPC with nils has no values.
func TestParamsReset(t *testing.T) {
	x, err := extractors.New()
	require.NoError(t, err)
	var p extractors.Params
	var _ core.Params = &p
	assert.Empty(t, values(&p, "metadata:x-user-id"), "zero value")

	a := withPeer(metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-user-id", "alice")), "203.0.113.1:1")
	b := withPeer(metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-user-id", "bob, carol")), "203.0.113.2:1")

	p.ResetGRPC((*extractors.Extractor)(x), sluicegrpc.CallInfo{}, a, "/a.B/C")
	assert.Equal(t, []string{"alice"}, values(&p, "metadata:x-user-id"))
	assert.Equal(t, []string{"203.0.113.1"}, values(&p, "ip"))
	assert.Equal(t, []string{"/a.B/C"}, values(&p, "method"))

	p.ResetGRPC((*extractors.Extractor)(x), sluicegrpc.CallInfo{}, b, "/a.B/D")
	assert.Equal(t, []string{"bob", "carol"}, values(&p, "metadata:x-user-id"))
	assert.Equal(t, []string{"203.0.113.2"}, values(&p, "ip"), "client IP of the earlier call kept")
	assert.Equal(t, []string{"/a.B/D"}, values(&p, "method"))

	p.ResetGRPC(nil, nil, nil, "")
	assert.Empty(t, values(&p, "metadata:x-user-id"), "ResetGRPC(nil, nil, nil, \"\")")
	assert.Empty(t, values(&p, "method"))
	p.ResetGRPC((*extractors.Extractor)(x), nil, a, "/a.B/C")
	assert.Empty(t, values(&p, "method"), "without a GRPCCall")
}

// BenchmarkGRPCParamsMetadata reads one incoming metadata value.
func BenchmarkGRPCParamsMetadata(b *testing.B) {
	x, err := extractors.New()
	if err != nil {
		b.Fatal(err)
	}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-api-key", "k1", "user-agent", "grpc-go"))
	b.ReportAllocs()
	for b.Loop() {
		if n := countValues(callParams(x, ctx, "/pkg.Svc/Get"), "metadata:x-api-key"); n != 1 {
			b.Fatal(n)
		}
	}
}

// TestCallInfoParams: the interceptors read a call's params through
// CallInfo; metadata names are in any case.
func TestCallInfoParams(t *testing.T) {
	x, err := extractors.New()
	require.NoError(t, err)
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-api-key", "k-123"))
	var p extractors.Params
	p.ResetGRPC((*extractors.Extractor)(x), sluicegrpc.CallInfo{}, ctx, "/shop.Items/Get")
	assert.Equal(t, []string{"k-123"}, values(&p, "metadata:X-Api-Key"))
	assert.Equal(t, []string{"/shop.Items/Get"}, values(&p, "method"))
}
