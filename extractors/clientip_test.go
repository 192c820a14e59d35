package extractors_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/extractors"
)

func TestClientIP(t *testing.T) {
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8", "2001:db8:ffff::/48", "192.168.1.7"))
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		remote string
		header []string
		want   string // "" for the invalid Addr
	}{
		// untrusted peers: headers never count
		{"untrusted peer", "203.0.113.1:4000", nil, "203.0.113.1"},
		{"spoofed xff from untrusted peer", "203.0.113.1:4000", []string{"X-Forwarded-For", "1.1.1.1"}, "203.0.113.1"},
		{"spoofed forwarded from untrusted peer", "203.0.113.1:4000", []string{"Forwarded", "for=1.1.1.1"}, "203.0.113.1"},
		{"spoofed x-real-ip from untrusted peer", "203.0.113.1:4000", []string{"X-Real-IP", "1.1.1.1"}, "203.0.113.1"},
		{"untrusted v6 peer", "[2001:db8::5]:4000", []string{"X-Forwarded-For", "1.1.1.1"}, "2001:db8::5"},
		{"peer without port", "203.0.113.1", nil, "203.0.113.1"},
		{"unix socket peer", "@", []string{"X-Forwarded-For", "1.1.1.1"}, ""},
		{"empty peer", "", nil, ""},
		{"garbage peer", "not-an-ip:80", nil, ""},

		// trusted peer: X-Forwarded-For walked from the right
		{"trusted, no headers", "10.0.0.1:4000", nil, "10.0.0.1"},
		{"trusted, one hop", "10.0.0.1:4000", []string{"X-Forwarded-For", "198.51.100.7"}, "198.51.100.7"},
		{"client spoof on the left ignored", "10.0.0.1:4000", []string{"X-Forwarded-For", "6.6.6.6, 198.51.100.7"}, "198.51.100.7"},
		{"trusted hops skipped", "10.0.0.1:4000", []string{"X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.2.2.2, 192.168.1.7"}, "198.51.100.7"},
		{"all trusted: leftmost", "10.0.0.1:4000", []string{"X-Forwarded-For", "10.3.3.3, 10.2.2.2"}, "10.3.3.3"},
		{"lines are one list", "10.0.0.1:4000", []string{"X-Forwarded-For", "6.6.6.6, 198.51.100.7", "X-Forwarded-For", "10.2.2.2"}, "198.51.100.7"},
		{"last line first", "10.0.0.1:4000", []string{"X-Forwarded-For", "6.6.6.6", "X-Forwarded-For", "198.51.100.7"}, "198.51.100.7"},
		{"empty elements skipped", "10.0.0.1:4000", []string{"X-Forwarded-For", "198.51.100.7, , ,"}, "198.51.100.7"},
		{"empty xff line", "10.0.0.1:4000", []string{"X-Forwarded-For", ""}, "10.0.0.1"},
		{"garbage stops at last trusted hop", "10.0.0.1:4000", []string{"X-Forwarded-For", "198.51.100.7, garbage, 10.2.2.2"}, "10.2.2.2"},
		{"garbage right after peer", "10.0.0.1:4000", []string{"X-Forwarded-For", "1.1.1.1, unknown"}, "10.0.0.1"},
		{"xff with port", "10.0.0.1:4000", []string{"X-Forwarded-For", "198.51.100.7:5555"}, "198.51.100.7"},
		{"xff v6", "10.0.0.1:4000", []string{"X-Forwarded-For", "2001:DB8::7"}, "2001:db8::7"},
		{"xff bracketed v6 with port", "10.0.0.1:4000", []string{"X-Forwarded-For", "[2001:db8::7]:443"}, "2001:db8::7"},
		{"xff bracketed v6", "10.0.0.1:4000", []string{"X-Forwarded-For", "[2001:db8::7]"}, "2001:db8::7"},
		{"xff mapped v4", "10.0.0.1:4000", []string{"X-Forwarded-For", "::ffff:198.51.100.7"}, "198.51.100.7"},
		{"xff zone dropped", "10.0.0.1:4000", []string{"X-Forwarded-For", "fe80::1%eth0"}, "fe80::1"},
		{"xff bad port", "10.0.0.1:4000", []string{"X-Forwarded-For", "198.51.100.7:port"}, "10.0.0.1"},
		{"xff huge port", "10.0.0.1:4000", []string{"X-Forwarded-For", "198.51.100.7:1234567"}, "10.0.0.1"},
		{"xff v4 out of range", "10.0.0.1:4000", []string{"X-Forwarded-For", "300.1.1.1"}, "10.0.0.1"},
		{"trusted v6 proxy", "[2001:db8:ffff::1]:4000", []string{"X-Forwarded-For", "198.51.100.7"}, "198.51.100.7"},
		{"trusted mapped proxy", "[::ffff:10.0.0.1]:4000", []string{"X-Forwarded-For", "198.51.100.7"}, "198.51.100.7"},
		{"xff wins over forwarded", "10.0.0.1:4000", []string{"X-Forwarded-For", "198.51.100.7", "Forwarded", "for=198.51.100.8"}, "198.51.100.7"},

		// Forwarded (RFC 7239)
		{"forwarded", "10.0.0.1:4000", []string{"Forwarded", "for=198.51.100.7"}, "198.51.100.7"},
		{"forwarded case and params", "10.0.0.1:4000", []string{"Forwarded", "proto=https; FOR=198.51.100.7;by=10.0.0.1"}, "198.51.100.7"},
		{"forwarded chain", "10.0.0.1:4000", []string{"Forwarded", "for=6.6.6.6, for=198.51.100.7, for=10.2.2.2"}, "198.51.100.7"},
		{"forwarded lines", "10.0.0.1:4000", []string{"Forwarded", "for=198.51.100.7", "Forwarded", "for=10.2.2.2"}, "198.51.100.7"},
		{"forwarded quoted v6 with port", "10.0.0.1:4000", []string{"Forwarded", `for="[2001:db8:cafe::17]:4711"`}, "2001:db8:cafe::17"},
		{"forwarded quoted v4 with port", "10.0.0.1:4000", []string{"Forwarded", `for="198.51.100.7:4711"`}, "198.51.100.7"},
		{"forwarded obfuscated", "10.0.0.1:4000", []string{"Forwarded", "for=1.1.1.1, for=_hidden, for=10.2.2.2"}, "10.2.2.2"},
		{"forwarded unknown", "10.0.0.1:4000", []string{"Forwarded", "for=1.1.1.1, for=unknown"}, "10.0.0.1"},
		{"forwarded without for", "10.0.0.1:4000", []string{"Forwarded", "for=1.1.1.1, proto=https"}, "10.0.0.1"},
		{"forwarded comma in quotes", "10.0.0.1:4000", []string{"Forwarded", `for=6.6.6.6, for=198.51.100.7;ext="a,b"`}, "198.51.100.7"},
		{"forwarded escape in for", "10.0.0.1:4000", []string{"Forwarded", `for="1.1.1\.1"`}, "10.0.0.1"},
		{"forwarded unterminated quote", "10.0.0.1:4000", []string{"Forwarded", `for="198.51.100.7`}, "10.0.0.1"},

		// X-Real-IP
		{"x-real-ip", "10.0.0.1:4000", []string{"X-Real-IP", " 198.51.100.7 "}, "198.51.100.7"},
		{"x-real-ip garbage", "10.0.0.1:4000", []string{"X-Real-IP", "nope"}, "10.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRequest(t, "GET", "/", tc.remote, tc.header...)
			got := x.ClientIP(r)
			if tc.want == "" {
				assert.False(t, got.IsValid(), "got %v", got)
				return
			}
			assert.Equal(t, netip.MustParseAddr(tc.want), got)
			want := tc.want // the ip param: the canonical text, of the /64 for IPv6
			if got.Is6() {
				want = netip.PrefixFrom(got, 64).Masked().String()
			}
			v, ok := x.HTTPParams(r, nil).Param("ip", 0)
			assert.True(t, ok)
			assert.Equal(t, want, v)
		})
	}
}

// TestClientIPHopCap checks that a long trusted chain ends the walk at the
// hop cap instead of walking without bound.
func TestClientIPHopCap(t *testing.T) {
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"))
	require.NoError(t, err)
	hops := make([]string, 100)
	for i := range hops {
		hops[i] = "10.0.0." + itoa(i%250)
	}
	r := newRequest(t, "GET", "/", "10.0.0.1:4000", "X-Forwarded-For", "198.51.100.7, "+strings.Join(hops, ","))
	got := x.ClientIP(r)
	assert.True(t, netip.MustParsePrefix("10.0.0.0/8").Contains(got), "a trusted hop, got %v", got)

	r = newRequest(t, "GET", "/", "10.0.0.1:4000", "Forwarded", "for=198.51.100.7, for="+strings.Join(hops, ", for="))
	got = x.ClientIP(r)
	assert.True(t, netip.MustParsePrefix("10.0.0.0/8").Contains(got), "a trusted hop, got %v", got)
}

func TestClientIPAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"))
	require.NoError(t, err)
	for name, header := range map[string][]string{
		"xff":       {"X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.2.2.2"},
		"forwarded": {"Forwarded", `for=6.6.6.6, for="[2001:db8::7]:80", for=10.2.2.2`},
		"none":      nil,
	} {
		r := newRequest(t, "GET", "/", "10.0.0.1:4000", header...)
		allocs := testing.AllocsPerRun(100, func() { _ = x.ClientIP(r) })
		assert.Zero(t, allocs, name)
	}
}
