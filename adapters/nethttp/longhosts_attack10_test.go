package sluicehttp_test

import (
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// refuse is a base transport that answers no call, as for hosts that do
// not resolve.
type refuse struct{}

func (refuse) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("no such host")
}

// TestOutgoingCallsToLongHostsKeepMemoryBounded: the outgoing transport
// names a call's resource after its host, and a program that calls
// URLs its users gave (webhooks) gets hosts of any length. 100 calls to
// distinct hosts of 1 MB (none resolves) must not leave 100 MB or more
// behind: on a748097 1100 MB stay retained, 11 MB a host: the Extractor's
// cache of resource names keeps each host's names for all 10 methods, and
// the Guard keeps the name whole (up to WithMaxResources names, default
// 10,000).
func TestOutgoingCallsToLongHostsKeepMemoryBounded(t *testing.T) {
	g, err := core.New()
	require.NoError(t, err)
	defer g.Close()
	rt, err := sluicehttp.NewTransport(g, refuse{})
	require.NoError(t, err)
	c := &http.Client{Transport: rt}
	big := strings.Repeat("h", 1<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 100 {
		res, err := c.Get("http://" + strconv.Itoa(i) + big + "/hook")
		require.Error(t, err)
		if res != nil {
			res.Body.Close()
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	assert.Less(t, grew, int64(10<<20), "heap retained after 100 calls to 1 MB hosts: %d MB", grew>>20)
}
