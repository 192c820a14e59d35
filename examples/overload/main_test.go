package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quick is a short measurement: the default backend (200 requests/s),
// with enough warmup for the adaptive rule to find its limit.
var quick = config{workers: 10, service: 50 * time.Millisecond, deadline: time.Second, warmup: 3 * time.Second, duration: 3 * time.Second}

// TestAdaptiveKeepsGoodputWhereNoneCollapses drives the backend at 5x its
// capacity: with no protection the queue grows until most requests time
// out in it; the adaptive rule sheds most requests and keeps the backend
// serving the others in time. The bounds are loose (a loaded machine
// serves less than the capacity): what they tell is the difference.
func TestAdaptiveKeepsGoodputWhereNoneCollapses(t *testing.T) {
	ctx := context.Background()
	none, err := quick.measure(ctx, "none", 5)
	require.NoError(t, err)
	adaptive, err := quick.measure(ctx, "adaptive", 5)
	require.NoError(t, err)
	t.Logf("none: %+v", none)
	t.Logf("adaptive: %+v", adaptive)

	assert.Less(t, none.goodput, 0.3*none.capacity, "with no protection, requests time out in the queue")
	assert.Greater(t, none.timedOut, 0.5)
	assert.Zero(t, none.rejected)

	assert.Greater(t, adaptive.goodput, 0.5*adaptive.capacity, "the adaptive rule keeps the backend serving")
	assert.Greater(t, adaptive.goodput, 2*none.goodput)
	assert.Greater(t, adaptive.rejected, 0.5, "by shedding most of 5x the capacity")
	assert.Less(t, adaptive.timedOut, 0.05, "what it admits is served in time")
	assert.Less(t, adaptive.p99, quick.deadline/2)
	assert.Positive(t, adaptive.limit)
}

func TestRunPrintsATable(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-warmup=0s", "-duration=1s", "-load=2", "-protect=static,adaptive", "-slowdown=false"}, &out)
	require.NoError(t, err)
	for _, want := range []string{"backend: 10 workers x 50ms = 200 requests/s", "unloaded (0.5x", "goodput/s", "static    2x", "adaptive    2x"} {
		assert.Contains(t, out.String(), want)
	}
}

func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"-workers=0", "-workers must be >= 1, got 0"},
		{"-load=2,x", `-load: "x" is not a positive number`},
		{"-load=0", `-load: "0" is not a positive number`},
		{"-protect=adaptive,magic", `-protect: unknown protection "magic" (known: none, static, adaptive)`},
		{"-duration=0s", "must be > 0"},
	} {
		_, err := parse([]string{tc.args}, &bytes.Buffer{})
		assert.ErrorContains(t, err, tc.want, tc.args)
	}
}
