package extractors_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/extractors"
)

// TestForwardedClientCannotSwallowTheProxysElement: a client sends a
// Forwarded header, and the trusted proxy appends its element, for= the
// client's address, to the same line, as proxies do. Whatever the client
// wrote on the left, the proxy's element is read as the proxy wrote it.
// Before, the line was split from the left: an opening quote the client
// left unterminated swallowed the proxy's element into a quoted string,
// the walk found no address and the client took the proxy's own address
// (10.0.0.1): out of its per-IP limit, and into whatever the rules grant
// internal addresses.
func TestForwardedClientCannotSwallowTheProxysElement(t *testing.T) {
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"))
	require.NoError(t, err)
	const client = "198.51.100.7"
	for _, sent := range []string{
		`for="x`,
		`for="6.6.6.6`,
		`for="a\"`,
		`for=1.1.1.1;ext="`,
		`"`,
		`for=1.1.1.1, ext="\\\"` + strings.Repeat(`\`, 1001),
		`for="1.1.1.1" "`,
		strings.Repeat(`"`, 10_001),
		strings.Repeat(",", 10_000) + `"`,
		"for=\"\xff\x80obs-text",
	} {
		for _, appended := range []string{", for=" + client, `, for="` + client + `:4711";proto=https`} {
			r := newRequest(t, "GET", "/", "10.0.0.1:4000", "Forwarded", sent+appended)
			assert.Equal(t, netip.MustParseAddr(client), x.ClientIP(r), "Forwarded: %.60q", sent+appended)
		}
	}
	// Well-formed lines still read as before.
	for header, want := range map[string]string{
		`for=6.6.6.6, for=198.51.100.7;ext="a,b"`:           client,
		`for="\"", for=198.51.100.7`:                        client,
		`for=198.51.100.7, for="[2001:db8::1]:1";ext="a\""`: "2001:db8::1",
		`for=198.51.100.7, for=10.2.2.2;ext="x,y"`:          client,
		`for=1.1.1.1, for="_hidden\"", for=10.2.2.2`:        "10.2.2.2",
	} {
		r := newRequest(t, "GET", "/", "10.0.0.1:4000", "Forwarded", header)
		assert.Equal(t, netip.MustParseAddr(want), x.ClientIP(r), "Forwarded: %q", header)
	}
}
