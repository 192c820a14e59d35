package sluicehttp_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// TestTransportHostNamesOneResource: a service calling URLs it was given
// (webhooks) limits the calls to a host with a rule on "* upstream.test".
// The host written in capitals or with a trailing dot is the same host,
// the same resource: the limit holds. Before, "UPSTREAM.test" and
// "upstream.test." were resources of their own, which no rule named, and
// a user registering such URLs had every call through.
func TestTransportHostNamesOneResource(t *testing.T) {
	u := newUpstream(t)
	g := newGuard(t, core.Rule{Name: "upstream", Resource: "* upstream.test", Kind: core.KindFlow, Limit: 2, Window: time.Minute})
	addr := u.srv.Listener.Addr().String()
	base := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr) // every host name is the upstream
	}}
	t.Cleanup(base.CloseIdleConnections)
	tr, err := sluicehttp.NewTransport(g, base)
	require.NoError(t, err)
	c := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	var blocked int
	for _, url := range []string{"http://upstream.test/a", "http://UPSTREAM.test/b", "http://Upstream.Test./c", "http://upstream.test.:80/d"} {
		res, err := c.Get(url)
		if err != nil {
			blockedBy(t, err)
			blocked++
			continue
		}
		res.Body.Close()
	}
	assert.Equal(t, 2, blocked, "2 calls a minute to upstream.test, however it is written")
	assert.EqualValues(t, 2, u.hits.Load())
	var names []string
	for _, r := range g.Snapshot().Resources {
		names = append(names, r.Resource)
	}
	assert.Equal(t, []string{"GET upstream.test"}, names)
}
