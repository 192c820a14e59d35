package extractors_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/extractors"
)

// TestIPv6Prefix: the ip param of an IPv6 client is its prefix (a /64 by
// default), whether the address comes from the socket peer or a trusted
// proxy's headers, and however it is written; IPv4 clients, IPv4-mapped
// ones among them, are their address; the peer param stays the address.
func TestIPv6Prefix(t *testing.T) {
	tests := []struct {
		bits   int // WithIPv6Prefix; 0: default
		remote string
		header []string
		ip     string // the ip param
		peer   string // the peer param
	}{
		{0, "[2001:db8:1:2:3:4:5:6]:4000", nil, "2001:db8:1:2::/64", "2001:db8:1:2:3:4:5:6"},
		{0, "[2001:db8:1:2::1]:4000", nil, "2001:db8:1:2::/64", "2001:db8:1:2::1"},
		{0, "[2001:DB8:1:2:FFFF:FFFF:FFFF:FFFF]:4000", nil, "2001:db8:1:2::/64", "2001:db8:1:2:ffff:ffff:ffff:ffff"},
		{0, "[2001:db8:1:3::1]:4000", nil, "2001:db8:1:3::/64", "2001:db8:1:3::1"},
		{0, "[2001:db8::1]:4000", nil, "2001:db8::/64", "2001:db8::1"},
		{0, "[fe80::1%eth0]:4000", nil, "fe80::/64", "fe80::1"},
		{0, "[::1]:4000", nil, "::/64", "::1"},
		{0, "[::ffff:192.0.2.1]:4000", nil, "192.0.2.1", "192.0.2.1"},
		{0, "192.0.2.1:4000", nil, "192.0.2.1", "192.0.2.1"},
		{0, "192.0.2.2:4000", nil, "192.0.2.2", "192.0.2.2"},
		// Through a trusted proxy: the client's prefix, the proxy's address.
		{0, "10.0.0.1:4000", []string{"X-Forwarded-For", "2001:db8:1:2:3:4:5:6, 10.0.0.2"}, "2001:db8:1:2::/64", "10.0.0.1"},
		{0, "10.0.0.1:4000", []string{"X-Forwarded-For", "[2001:db8:1:2::9]:443"}, "2001:db8:1:2::/64", "10.0.0.1"},
		{0, "10.0.0.1:4000", []string{"Forwarded", `for="[2001:db8:1:2::9]:443"`}, "2001:db8:1:2::/64", "10.0.0.1"},
		{0, "10.0.0.1:4000", []string{"X-Forwarded-For", "::ffff:198.51.100.7"}, "198.51.100.7", "10.0.0.1"},
		{0, "[fd00::1]:4000", []string{"X-Forwarded-For", "198.51.100.7"}, "198.51.100.7", "fd00::1"},
		// Other prefix lengths.
		{48, "[2001:db8:1:2::1]:4000", nil, "2001:db8:1::/48", "2001:db8:1:2::1"},
		{56, "[2001:db8:1:2ff::1]:4000", nil, "2001:db8:1:200::/56", "2001:db8:1:2ff::1"},
		{60, "[2001:db8:1:2ff::1]:4000", nil, "2001:db8:1:2f0::/60", "2001:db8:1:2ff::1"},
		{1, "[2001:db8::1]:4000", nil, "::/1", "2001:db8::1"},
		{1, "[fe80::1]:4000", nil, "8000::/1", "fe80::1"},
		{127, "[2001:db8::3]:4000", nil, "2001:db8::2/127", "2001:db8::3"},
		{128, "[2001:db8:1:2:3:4:5:6]:4000", nil, "2001:db8:1:2:3:4:5:6", "2001:db8:1:2:3:4:5:6"},
		{128, "[2001:DB8::1]:4000", nil, "2001:db8::1", "2001:db8::1"},
		{128, "192.0.2.1:4000", nil, "192.0.2.1", "192.0.2.1"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("/%d %s %v", tt.bits, tt.remote, tt.header), func(t *testing.T) {
			opts := []extractors.Option{extractors.WithTrustedProxies("10.0.0.0/8", "fd00::/8")}
			if tt.bits != 0 {
				opts = append(opts, extractors.WithIPv6Prefix(tt.bits))
			}
			x, err := extractors.New(opts...)
			require.NoError(t, err)
			r := newRequest(t, "GET", "/", tt.remote, tt.header...)
			for range 2 { // computed, then cached
				assert.Equal(t, []string{tt.ip}, values(x.HTTPParams(r, nil), "ip"), "ip")
				assert.Equal(t, []string{tt.peer}, values(x.HTTPParams(r, nil), "peer"), "peer")
			}
			if tt.header == nil { // the same over gRPC, from the peer
				call := &fakeCall{peer: netip.MustParseAddrPort(tt.remote).Addr().Unmap().WithZone("")}
				assert.Equal(t, []string{tt.ip}, values(x.GRPCParams(call, context.Background(), "/pkg.Svc/M"), "ip"), "grpc ip")
			}
			// ClientIP stays the address.
			assert.Equal(t, tt.peer, x.ClientIP(newRequest(t, "GET", "/", tt.remote)).String())
		})
	}
}

// TestIPv6PrefixOption: the prefix length is validated.
func TestIPv6PrefixOption(t *testing.T) {
	for _, bits := range []int{1, 32, 64, 128} {
		_, err := extractors.New(extractors.WithIPv6Prefix(bits))
		assert.NoError(t, err, bits)
	}
	for _, bits := range []int{-1, 0, 129, 1 << 20} {
		_, err := extractors.New(extractors.WithIPv6Prefix(bits))
		assert.EqualError(t, err, fmt.Sprintf("extractors: WithIPv6Prefix: prefix length must be between 1 and 128 bits, got %d", bits))
	}
}

// TestIPv6PrefixFlood: clients of more prefixes than the Extractor caches
// the texts of each still get their own prefix (computed per request past
// the cache's bound), and the ones cached stay cached.
func TestIPv6PrefixFlood(t *testing.T) {
	x, err := extractors.New()
	require.NoError(t, err)
	const n = 10000
	for round := range 2 {
		for i := range n {
			a := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, byte(i >> 8), byte(i), 8: byte(round), 15: 1})
			r := newRequest(t, "GET", "/", netip.AddrPortFrom(a, 80).String())
			want := netip.PrefixFrom(a, 64).Masked().String()
			if v, _ := x.HTTPParams(r, nil).Param("ip", 0); v != want {
				t.Fatalf("%v: ip %q, want %q", a, v, want)
			}
		}
	}
}

// TestIPv6PrefixAllocs: a returning IPv6 client's ip param costs no
// allocation, as an IPv4 one's.
func TestIPv6PrefixAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"))
	require.NoError(t, err)
	for _, r := range []struct{ remote, xff string }{
		{"[2001:db8:1:2:3:4:5:6]:4000", ""},
		{"10.0.0.1:4000", "2001:db8:1:2:3:4:5:7"},
	} {
		req := newRequest(t, "GET", "/", r.remote)
		if r.xff != "" {
			req.Header.Set("X-Forwarded-For", r.xff)
		}
		var p extractors.Params
		allocs := testing.AllocsPerRun(200, func() {
			p.ResetHTTP(x, req, nil)
			if _, ok := p.Param("ip", 0); !ok {
				t.Fatal("no ip")
			}
		})
		assert.Zero(t, allocs, "%s %s", r.remote, r.xff)
	}
}
