package sluicehttp_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// TestOutgoingCallsToHostsOfAnyLengthOverLoopback: a program calling URLs
// its users gave (webhooks) through the outgoing transport, over real
// loopback (every host dials the test server). A host longer than DNS
// allows (253 bytes) is refused at once, naming the reason, and never
// reaches the network nor the Guard; 2000 distinct hosts of 253 bytes are
// all called, and each leaves at most 8 KB behind (resource names in the
// Extractor's cache and the Guard, which WithMaxResources bounds).
func TestOutgoingCallsToHostsOfAnyLengthOverLoopback(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer srv.Close()
	dial := (&net.Dialer{}).DialContext
	base := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dial(ctx, network, srv.Listener.Addr().String())
	}}
	defer base.CloseIdleConnections()
	g, err := core.New()
	require.NoError(t, err)
	defer g.Close()
	rt, err := sluicehttp.NewTransport(g, base)
	require.NoError(t, err)
	c := &http.Client{Transport: rt}

	host := func(i, n int) string { // a DNS name of n bytes (labels of 62), distinct by i
		h := (strconv.Itoa(i) + "-" + strings.Repeat(strings.Repeat("a", 61)+".", n/62+1))[:n]
		return strings.TrimSuffix(h, ".") + strings.Repeat("b", len(h)-len(strings.TrimSuffix(h, ".")))
	}
	for _, n := range []int{254, 1 << 20} {
		res, err := c.Get("http://" + host(0, n) + "/hook")
		if res != nil {
			res.Body.Close()
		}
		require.Error(t, err, "%d bytes", n)
		assert.Contains(t, err.Error(), "longer than a DNS name (253 bytes at most)")
		assert.False(t, errors.Is(err, core.ErrBlocked), "not a block: no resource")
	}
	assert.Zero(t, calls.Load(), "no call to a host DNS cannot have reached the network")
	assert.Empty(t, g.Snapshot().Resources, "nor the Guard")

	const hosts = 2000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range hosts {
		h := host(i, 253)
		require.Len(t, h, 253)
		res, err := c.Get("http://" + h + ":80/hook")
		require.NoError(t, err)
		res.Body.Close()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	assert.EqualValues(t, hosts, calls.Load())
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / hosts
	t.Logf("%d bytes retained per 253-byte host", per)
	assert.Less(t, per, int64(8<<10), "bytes retained per host")
}
