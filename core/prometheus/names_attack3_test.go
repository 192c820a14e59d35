package sluiceprom_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
)

// TestResourceNamedLikeTheOverflow: a caller names a resource
// core.OverflowResource, the name under which the Guard counts the
// resources beyond its bound, and then more names than the bound arrive.
// The scrape still answers 200, with one series per resource label.
// Before, Snapshot listed two resources called "(overflow)" and every
// scrape failed with "collected before with the same name and label
// values": one request naming a resource so (an Envoy descriptor of a
// domain of sluice rules, a gRPC method, a route) blinded the metrics.
func TestResourceNamedLikeTheOverflow(t *testing.T) {
	g, err := core.New(quiet, core.WithMaxResources(3))
	require.NoError(t, err)
	defer g.Close()
	c, err := sluiceprom.NewCollector(g)
	require.NoError(t, err)
	url := serve(t, c)

	ctx := context.Background()
	for _, r := range []string{core.OverflowResource, "a", "b", "c", "d"} {
		e, err := g.Enter(ctx, r)
		require.NoError(t, err)
		e.Exit(nil)
	}
	fams := scrape(t, url) // a 200: no series failed
	// The name counts under the overflow resource, as "d" does.
	must(t, fams, 2, "sluice_requests_total", "sluice_resource", core.OverflowResource, "sluice_result", "passed")
	require.Equal(t, []string{core.OverflowResource, "a", "b", "c"}, labelValues(fams, "sluice_active_requests", "sluice_resource"))
}
