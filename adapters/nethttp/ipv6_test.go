package sluicehttp_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// TestIPv6ClientsAreOneClient: a client that owns a /64 cannot get past a
// limit on ip by using a new address for each request. Through a real
// server on loopback, behind a trusted proxy (the test client at
// 127.0.0.1, which names the client in X-Forwarded-For), 100 addresses of
// one /64 get 1 of 100 requests through a 1-per-hour rule; another /64 is
// another client, limited on its own; IPv4 addresses, written plain or
// IPv4-mapped, are each a client.
func TestIPv6ClientsAreOneClient(t *testing.T) {
	x, err := extractors.New(extractors.WithTrustedProxies("127.0.0.1"))
	require.NoError(t, err)
	g := newGuard(t, core.Rule{Name: "per-ip", Resource: "*", Kind: core.KindHotspot, Param: "ip", Limit: 1, Window: time.Hour})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", ok)
	srv := serve(t, sluicehttp.Middleware(g, sluicehttp.WithExtractor(x))(mux))

	passed := func(clients []string) int {
		n := 0
		for _, c := range clients {
			switch res := get(t, srv, "/", "X-Forwarded-For", c); res.StatusCode {
			case http.StatusOK:
				n++
			case http.StatusTooManyRequests:
			default:
				t.Fatalf("%s: status %d", c, res.StatusCode)
			}
		}
		return n
	}
	subnet := func(format string) []string {
		var cs []string
		for i := range 100 {
			cs = append(cs, fmt.Sprintf(format, i+1, (i*7919)%65536))
		}
		return cs
	}
	a := subnet("2001:db8:aaaa:1:%x:0:0:%x")
	b := subnet("[2001:db8:aaaa:2::%x:%x]:443")
	assert.Equal(t, 1, passed(a), "100 addresses of 2001:db8:aaaa:1::/64")
	assert.Equal(t, 1, passed(b), "100 addresses of 2001:db8:aaaa:2::/64")
	assert.Equal(t, 0, passed(a[:10]), "2001:db8:aaaa:1::/64 again")

	var v4 []string
	for i := range 10 {
		v4 = append(v4, fmt.Sprintf("198.51.100.%d", i+1))
	}
	assert.Equal(t, 10, passed(v4), "IPv4 addresses")
	for i := range v4 {
		v4[i] = "::ffff:" + v4[i]
	}
	assert.Equal(t, 0, passed(v4), "the same IPv4 addresses, mapped")
}
