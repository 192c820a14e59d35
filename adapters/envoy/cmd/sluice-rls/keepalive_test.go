package main

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestGRPCIdleConnections: by default a gRPC client's idle connection stays
// open (Envoy keeps its connections to the rate limit service on purpose);
// with -grpc-max-connection-idle the server closes it once it had no call
// for that long, and the client reconnects for its next call.
//
// Failed before: the server had no idle limit to set (the flag did not
// exist), and kept every connection open for ever.
//
// grpc-go updates a ClientConn's picker before its state: a call may
// succeed while GetState still says CONNECTING (1 of 15 runs under -race
// and nice), so ready waits for READY after the call.
func TestGRPCIdleConnections(t *testing.T) {
	ready := func(t *testing.T, conn *grpc.ClientConn) {
		t.Helper()
		_, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for s := conn.GetState(); s != connectivity.Ready; s = conn.GetState() {
			require.True(t, conn.WaitForStateChange(ctx, s), "not READY after a call: %s", s)
		}
	}
	t.Run("default", func(t *testing.T) {
		conn, _, _ := instance(t, "-config", configDir(t))
		ready(t, conn)
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		assert.False(t, conn.WaitForStateChange(ctx, connectivity.Ready), "still open after 1.5s idle: %s", conn.GetState())
	})
	t.Run("max idle", func(t *testing.T) {
		conn, _, _ := instance(t, "-config", configDir(t), "-grpc-max-connection-idle", "300ms")
		ready(t, conn)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		require.True(t, conn.WaitForStateChange(ctx, connectivity.Ready), "closed by the server within 20s")
		ready(t, conn) // reconnected
	})
}

// TestGRPCDeadPeerReaped opens a gRPC connection (HTTP/2's preface and
// settings) and then never answers: the server pings it after
// -grpc-keepalive-time without activity and closes it when no answer came
// within -grpc-keepalive-timeout (1s each here; still open after 20s
// fails).
//
// Failed before: a peer that stopped answering kept its connection, and
// the server's memory for it, for ever (gRPC's default is a ping every 2h).
func TestGRPCDeadPeerReaped(t *testing.T) {
	conn, _, _ := instance(t, "-config", configDir(t), "-grpc-keepalive-time", "1s", "-grpc-keepalive-timeout", "1s")
	c, err := net.Dial("tcp", conn.Target())
	require.NoError(t, err)
	defer c.Close()
	// The client preface, then an empty SETTINGS frame (9 bytes of header:
	// length 0, type 4, no flags, stream 0).
	_, err = io.WriteString(c, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
	start := time.Now()
	_, err = io.Copy(io.Discard, c) // reads the server's frames, answers none
	assert.False(t, errors.Is(err, os.ErrDeadlineExceeded), "the connection is still open after 20s")
	t.Logf("closed after %s", time.Since(start).Round(time.Millisecond))
}

// TestGRPCKeepaliveFlagsChecked: the keepalive flags refuse what gRPC
// cannot do, naming the flag and the value.
func TestGRPCKeepaliveFlagsChecked(t *testing.T) {
	for _, tc := range []struct{ args []string }{
		{[]string{"-grpc-max-connection-idle", "-1s"}},
		{[]string{"-grpc-keepalive-time", "500ms"}},
		{[]string{"-grpc-keepalive-timeout", "0s"}},
		{[]string{"-grpc-keepalive-min-time", "0s"}},
	} {
		_, err := parse(append([]string{"-config", "x"}, tc.args...), func(string) string { return "" }, io.Discard)
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.args[0], tc.args)
		assert.Contains(t, err.Error(), tc.args[1], tc.args)
	}
}
