//go:build !race

package sluicegrpc_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/extractors"
)

// TestParamsAllocs: a Params held by the caller and ResetGRPC
// per call reads a metadata param allocating only the copy grpc-go makes of
// the key's value list (not of all the metadata), and the peer and a
// trusted proxy's client IP with nothing but the address text. (Not under
// the race detector, whose allocation counts differ.)
func TestParamsAllocs(t *testing.T) {
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"))
	require.NoError(t, err)
	gp := new(extractors.Params)
	read := func(ctx context.Context, param string, want int) func() {
		return func() {
			gp.ResetGRPC((*extractors.Extractor)(x), sluicegrpc.CallInfo{}, ctx, "/a.B/C")
			if n := countValues(gp, param); n != want {
				t.Fatalf("%s: %d values", param, n)
			}
		}
	}
	in := metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-user-id", "alice", "a", "1", "b", "2"))
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, read(in, "metadata:x-user-id", 1)), "server: the copy of one key's values")
	out := metadata.AppendToOutgoingContext(context.Background(), "x-user-id", "alice", "a", "1", "b", "2")
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, read(out, "metadata:x-user-id", 1)), "client: the copy of one key's values")
	assert.Zero(t, testing.AllocsPerRun(100, read(in, "method", 1)), "method")

	proxied := withPeer(metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-forwarded-for", "198.51.100.7", "a", "1")), "10.0.0.1:1")
	assert.LessOrEqual(t, testing.AllocsPerRun(100, read(proxied, "ip", 1)), 2.0, "ip behind a proxy: the copy of x-forwarded-for, the address text")
}
