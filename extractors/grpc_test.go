package extractors_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/extractors"
)

// fakeCall is an extractors.GRPCCall over fixed metadata and peer, whatever
// the context. (adapters/grpc tests the params over grpc-go's CallInfo.)
type fakeCall struct {
	in, out map[string][]string
	peer    netip.Addr
}

func (c *fakeCall) Metadata(_ context.Context, key string, outgoing bool) []string {
	if outgoing {
		return c.out[key]
	}
	return c.in[key]
}

func (c *fakeCall) Peer(context.Context) netip.Addr { return c.peer }

// TestParamsGRPC reads a call through a GRPCCall: incoming metadata
// before outgoing, forwarding metadata only incoming and only from a trusted
// peer.
func TestParamsGRPC(t *testing.T) {
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"))
	require.NoError(t, err)
	proxy, client := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("198.51.100.7")
	for _, tc := range []struct {
		name   string
		call   *fakeCall
		param  string
		values []string
	}{
		{"incoming", &fakeCall{in: map[string][]string{"k": {"a, b"}}}, "metadata:K", []string{"a", "b"}},
		{"incoming preferred", &fakeCall{in: map[string][]string{"k": {"in"}}, out: map[string][]string{"k": {"out"}}}, "metadata:k", []string{"in"}},
		{"outgoing", &fakeCall{out: map[string][]string{"k": {"out"}}}, "header:k", []string{"out"}},
		{"peer", &fakeCall{peer: client}, "peer", []string{"198.51.100.7"}},
		{"ip untrusted peer", &fakeCall{peer: client, in: map[string][]string{"x-forwarded-for": {"1.1.1.1"}}}, "ip", []string{"198.51.100.7"}},
		{"ip trusted peer", &fakeCall{peer: proxy, in: map[string][]string{"x-forwarded-for": {"1.1.1.1"}}}, "ip", []string{"1.1.1.1"}},
		{"ip outgoing forwarding ignored", &fakeCall{peer: proxy, out: map[string][]string{"x-forwarded-for": {"1.1.1.1"}}}, "ip", []string{"10.0.0.1"}},
		{"host", &fakeCall{in: map[string][]string{":authority": {"API.example.com:443"}}}, "host", []string{"api.example.com"}},
		{"host not outgoing", &fakeCall{out: map[string][]string{":authority": {"api.example.com"}}}, "host", nil},
		{"method", &fakeCall{}, "method", []string{"/a.B/C"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.values, values(x.GRPCParams(tc.call, t.Context(), "/a.B/C"), tc.param))
		})
	}
	assert.Empty(t, values(x.GRPCParams(nil, t.Context(), "/a.B/C"), "method"), "without a GRPCCall")
}
