package sluicegrpc_test

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/adapters/grpc/internal/greeterpb"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/extractors"
)

const (
	sayHello = "/sluice.examples.Greeter/SayHello"
	count    = "/sluice.examples.Greeter/Count"
)

// testGreeter is the service under the interceptors. SayHello panics for the
// name "panic", fails with NotFound for "missing" and with Internal for
// "fail", and waits for release (or the call's end) for "hold"; Count fails
// with Internal when N is negative, else sends 1, waits for release (or the
// call's end) when IntervalMs is negative, then sends 2..N.
type testGreeter struct {
	greeterpb.UnimplementedGreeterServer
	hellos  atomic.Int64
	streams atomic.Int64
	release chan struct{}
}

func (s *testGreeter) SayHello(ctx context.Context, req *greeterpb.HelloRequest) (*greeterpb.HelloReply, error) {
	s.hellos.Add(1)
	switch req.GetName() {
	case "panic":
		panic("boom")
	case "missing":
		return nil, status.Error(codes.NotFound, "no such greeting")
	case "fail":
		return nil, status.Error(codes.Internal, "the greeter is broken")
	case "hold":
		select {
		case <-s.release:
		case <-ctx.Done():
		}
	}
	return &greeterpb.HelloReply{Message: "Hello, " + req.GetName()}, nil
}

func (s *testGreeter) Count(req *greeterpb.CountRequest, stream grpc.ServerStreamingServer[greeterpb.CountReply]) error {
	s.streams.Add(1)
	if req.GetN() < 0 {
		return status.Error(codes.Internal, "the counter is broken")
	}
	for i := int32(1); i <= req.GetN(); i++ {
		if err := stream.Send(&greeterpb.CountReply{Number: i}); err != nil {
			return err
		}
		if i == 1 && req.GetIntervalMs() < 0 {
			select {
			case <-s.release:
			case <-stream.Context().Done():
				return status.FromContextError(stream.Context().Err()).Err()
			}
		}
	}
	return nil
}

// serve starts a gRPC server with opts and the test service on 127.0.0.1:0
// and returns the service and a client of it; both stop with the test.
func serve(t *testing.T, opts ...grpc.ServerOption) (*testGreeter, greeterpb.GreeterClient, *grpc.ClientConn) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer(opts...)
	svc := &testGreeter{release: make(chan struct{})}
	greeterpb.RegisterGreeterServer(srv, svc)
	reflection.Register(srv)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	conn := dial(t, lis.Addr().String())
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return svc, greeterpb.NewGreeterClient(conn), conn
}

func dial(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	conn, err := grpc.NewClient(addr, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// guarded is the one-liner: both server interceptors over g.
func guarded(g *core.Guard, opts ...sluicegrpc.Option) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(sluicegrpc.UnaryServerInterceptor(g, opts...)),
		grpc.ChainStreamInterceptor(sluicegrpc.StreamServerInterceptor(g, opts...)),
	}
}

func newGuard(t *testing.T, fc *clock.Fake, rules ...core.Rule) *core.Guard {
	t.Helper()
	g, err := core.New(core.WithClock(fc), core.WithRules(rules...))
	require.NoError(t, err)
	return g
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func hello(ctx context.Context, c greeterpb.GreeterClient, name string, opts ...grpc.CallOption) error {
	_, err := c.SayHello(ctx, &greeterpb.HelloRequest{Name: name}, opts...)
	return err
}

// details decodes the error details of a blocked call.
type details struct {
	retry *errdetails.RetryInfo
	info  *errdetails.ErrorInfo
	quota *errdetails.QuotaFailure
}

func decode(t *testing.T, err error) details {
	t.Helper()
	st, ok := status.FromError(err)
	require.True(t, ok, "not a status: %v", err)
	require.Equal(t, codes.ResourceExhausted, st.Code(), "%v", err)
	var d details
	for _, x := range st.Details() {
		switch x := x.(type) {
		case *errdetails.RetryInfo:
			d.retry = x
		case *errdetails.ErrorInfo:
			d.info = x
		case *errdetails.QuotaFailure:
			d.quota = x
		default:
			t.Fatalf("unexpected detail %T: %v", x, x)
		}
	}
	require.NotNil(t, d.info, "ErrorInfo detail")
	require.NotNil(t, d.quota, "QuotaFailure detail")
	return d
}

// pushback returns the pushback trailer in milliseconds, or -1 when absent.
func pushback(t *testing.T, md metadata.MD) int64 {
	t.Helper()
	v := md.Get("grpc-retry-pushback-ms")
	if len(v) == 0 {
		return -1
	}
	require.Len(t, v, 1)
	ms, err := strconv.ParseInt(v[0], 10, 64)
	require.NoError(t, err)
	return ms
}

func TestUnaryRateLimitStatusRetryInfoAndPushback(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	// 3 tokens per second: the 4th call may retry after 1s/3 = 333.333333ms,
	// which core tells rounded up to 334ms.
	g := newGuard(t, fc, core.Rule{Name: "hello-rate", Resource: sayHello, Kind: core.KindFlow,
		Algorithm: "token-bucket", Limit: 3, Window: time.Second})
	svc, c, _ := serve(t, guarded(g)...)
	ctx := ctxT(t)

	for i := range 3 {
		require.NoError(t, hello(ctx, c, "alice"), "call %d", i)
	}
	var trailer metadata.MD
	err := hello(ctx, c, "alice", grpc.Trailer(&trailer))
	d := decode(t, err)
	assert.EqualValues(t, 3, svc.hellos.Load(), "a blocked call never reaches the handler")

	require.NotNil(t, d.retry, "RetryInfo detail")
	delay := d.retry.GetRetryDelay().AsDuration()
	assert.Equal(t, 334*time.Millisecond, delay)
	ms := pushback(t, trailer)
	assert.EqualValues(t, 334, ms, "pushback rounds up")
	assert.GreaterOrEqual(t, time.Duration(ms)*time.Millisecond, delay, "pushback never earlier than RetryInfo")

	assert.Equal(t, "sluice", d.info.GetDomain())
	assert.Equal(t, sluicegrpc.ReasonRateLimited, d.info.GetReason())
	assert.Equal(t, "hello-rate", d.info.GetMetadata()["rule"])
	assert.Equal(t, sayHello, d.info.GetMetadata()["resource"])
	assert.Equal(t, "3", d.info.GetMetadata()["limit"])
	assert.Equal(t, "1s", d.info.GetMetadata()["window"])
	require.Len(t, d.quota.GetViolations(), 1)
	assert.Equal(t, "rule:hello-rate", d.quota.GetViolations()[0].GetSubject())

	st, _ := g.Stats(sayHello)
	assert.EqualValues(t, 3, st.Pass)
	assert.EqualValues(t, 1, st.Block)

	fc.Advance(delay)
	require.NoError(t, hello(ctx, c, "alice"), "a token is back after RetryInfo's delay")
	require.Error(t, hello(ctx, c, "alice"))
}

func TestStreamConcurrencyLastsWholeStream(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, core.Rule{Name: "count-streams", Resource: count, Kind: core.KindConcurrency, Limit: 2})
	svc, c, _ := serve(t, guarded(g)...)
	ctx := ctxT(t)

	// open starts a Count stream that holds after its first message.
	open := func(ctx context.Context) (grpc.ServerStreamingClient[greeterpb.CountReply], error) {
		s, err := c.Count(ctx, &greeterpb.CountRequest{N: 2, IntervalMs: -1})
		require.NoError(t, err)
		_, err = s.Recv()
		return s, err
	}
	ctx1, cancel1 := context.WithCancel(ctx)
	defer cancel1()
	_, err := open(ctx1)
	require.NoError(t, err)
	s2, err := open(ctx)
	require.NoError(t, err)

	// Both streams' handlers have sent a message and are still running:
	// the third stream is blocked.
	_, err = open(ctx)
	d := decode(t, err)
	assert.Nil(t, d.retry, "concurrency blocks carry no RetryInfo")
	assert.Equal(t, sluicegrpc.ReasonConcurrencyLimited, d.info.GetReason())
	assert.EqualValues(t, 2, svc.streams.Load())
	st, _ := g.Stats(count)
	assert.EqualValues(t, 2, st.InFlight)

	// Ending a stream frees its slot.
	cancel1()
	require.Eventually(t, func() bool {
		st, _ := g.Stats(count)
		return st.InFlight == 1
	}, 5*time.Second, 5*time.Millisecond)
	s3, err := open(ctx)
	require.NoError(t, err)

	// Streams that run to their end release their slots too.
	close(svc.release)
	for _, s := range []grpc.ServerStreamingClient[greeterpb.CountReply]{s2, s3} {
		r, err := s.Recv()
		require.NoError(t, err)
		assert.EqualValues(t, 2, r.GetNumber())
		_, err = s.Recv()
		require.ErrorIs(t, err, io.EOF)
	}
	require.Eventually(t, func() bool {
		st, _ := g.Stats(count)
		return st.InFlight == 0
	}, 5*time.Second, 5*time.Millisecond)
}

func TestStreamRateLimitTrailer(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, core.Rule{Name: "count-rate", Resource: count, Kind: core.KindFlow,
		Algorithm: "token-bucket", Limit: 1, Window: 1500 * time.Microsecond})
	_, c, _ := serve(t, guarded(g)...)
	ctx := ctxT(t)

	s, err := c.Count(ctx, &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	require.NoError(t, err)

	s, err = c.Count(ctx, &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	d := decode(t, err)
	require.NotNil(t, d.retry)
	assert.Equal(t, 2*time.Millisecond, d.retry.GetRetryDelay().AsDuration(), "1.5ms rounded up")
	assert.EqualValues(t, 2, pushback(t, s.Trailer()), "set through ServerStream.SetTrailer")
}

func TestSkip(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, core.Rule{Name: "nothing", Resource: "*", Kind: core.KindFlow, Limit: 0})
	skip := sluicegrpc.WithSkipper(func(_ context.Context, m string) bool { return m == sayHello })
	svc, c, _ := serve(t, guarded(g, skip)...)
	ctx := ctxT(t)

	for range 5 {
		require.NoError(t, hello(ctx, c, "alice"))
	}
	assert.EqualValues(t, 5, svc.hellos.Load())
	_, ok := g.Stats(sayHello)
	assert.False(t, ok, "skipped calls are not counted")

	s, err := c.Count(ctx, &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	decode(t, err)
}

// recoverUnary turns a handler's panic into codes.Internal, as recovery
// interceptors do.
func recoverUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = status.Errorf(codes.Internal, "panic: %v", p)
		}
	}()
	return handler(ctx, req)
}

func TestPanicReleasesSlotAndCountsError(t *testing.T) {
	ours := func(g *core.Guard) grpc.UnaryServerInterceptor { return sluicegrpc.UnaryServerInterceptor(g) }
	for _, tc := range []struct {
		name  string
		chain func(g *core.Guard) grpc.ServerOption
	}{
		// The recovery interceptor runs inside ours: ours sees an
		// Internal error.
		{"recovery inside", func(g *core.Guard) grpc.ServerOption {
			return grpc.ChainUnaryInterceptor(ours(g), recoverUnary)
		}},
		// The recovery interceptor runs outside ours: the panic goes
		// through ours, which exits and lets it go on.
		{"recovery outside", func(g *core.Guard) grpc.ServerOption {
			return grpc.ChainUnaryInterceptor(recoverUnary, ours(g))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := clock.NewFake(time.Hour)
			g := newGuard(t, fc, core.Rule{Name: "one", Resource: sayHello, Kind: core.KindConcurrency, Limit: 1})
			svc, c, _ := serve(t, tc.chain(g))
			ctx := ctxT(t)

			err := hello(ctx, c, "panic")
			require.Equal(t, codes.Internal, status.Code(err), "%v", err)
			assert.Contains(t, status.Convert(err).Message(), "boom")
			st, _ := g.Stats(sayHello)
			assert.EqualValues(t, 0, st.InFlight, "the panicking call's slot is released")
			assert.EqualValues(t, 1, st.Error, "a panic counts as an error")
			assert.EqualValues(t, 1, st.Complete)

			for range 3 {
				require.NoError(t, hello(ctx, c, "alice"), "the slot of the panicked call is free")
			}
			assert.EqualValues(t, 4, svc.hellos.Load())
			st, _ = g.Stats(sayHello)
			assert.EqualValues(t, 1, st.Error)
		})
	}
}

// TestPanicGoesOn calls the interceptor directly: the panic reaches the
// caller unchanged, after Exit.
func TestPanicGoesOn(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, core.Rule{Name: "one", Resource: sayHello, Kind: core.KindConcurrency, Limit: 1})
	unary := sluicegrpc.UnaryServerInterceptor(g)
	info := &grpc.UnaryServerInfo{FullMethod: sayHello}
	require.PanicsWithValue(t, "boom", func() {
		_, _ = unary(context.Background(), nil, info, func(context.Context, any) (any, error) { panic("boom") })
	})
	st, _ := g.Stats(sayHello)
	assert.EqualValues(t, 0, st.InFlight)
	assert.EqualValues(t, 1, st.Error)

	stream := sluicegrpc.StreamServerInterceptor(g)
	require.PanicsWithValue(t, "stream boom", func() {
		_ = stream(nil, fakeServerStream{ctx: context.Background()}, &grpc.StreamServerInfo{FullMethod: sayHello},
			func(any, grpc.ServerStream) error { panic("stream boom") })
	})
	st, _ = g.Stats(sayHello)
	assert.EqualValues(t, 0, st.InFlight)
	assert.EqualValues(t, 2, st.Error)
}

type fakeServerStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s fakeServerStream) Context() context.Context { return s.ctx }

func TestErrorClassifier(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	rule := core.Rule{Name: "many", Resource: sayHello, Kind: core.KindFlow, Limit: 1000}
	ctx := ctxT(t)

	g := newGuard(t, fc, rule)
	_, c, _ := serve(t, guarded(g)...)
	require.Equal(t, codes.NotFound, status.Code(hello(ctx, c, "missing")))
	require.Equal(t, codes.Internal, status.Code(hello(ctx, c, "fail")))
	require.NoError(t, hello(ctx, c, "alice"))
	st, _ := g.Stats(sayHello)
	assert.EqualValues(t, 3, st.Complete)
	assert.EqualValues(t, 1, st.Error, "by default only a server fault (Internal) is an error, not NotFound")

	g = newGuard(t, fc, rule)
	everyCode := sluicegrpc.WithErrorClassifier(func(_ context.Context, _ string, err error) bool {
		return status.Code(err) != codes.OK
	})
	_, c, _ = serve(t, guarded(g, everyCode)...)
	require.Equal(t, codes.NotFound, status.Code(hello(ctx, c, "missing")))
	st, _ = g.Stats(sayHello)
	assert.EqualValues(t, 1, st.Complete)
	assert.EqualValues(t, 1, st.Error, "the classifier counts NotFound")
}

func TestMetadataHotspot(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, core.Rule{Name: "per-user", Resource: "/sluice.examples.Greeter/*", Kind: core.KindHotspot,
		Param: "metadata:x-user-id", Limit: 1, Window: time.Second, Overrides: map[string]int64{"vip": 100}})
	svc, c, _ := serve(t, guarded(g)...)
	ctx := ctxT(t)
	as := func(user string) context.Context { return metadata.AppendToOutgoingContext(ctx, "x-user-id", user) }

	require.NoError(t, hello(as("alice"), c, "a"))
	d := decode(t, hello(as("alice"), c, "a"))
	assert.Equal(t, "per-user", d.info.GetMetadata()["rule"])
	assert.Equal(t, "metadata:x-user-id", d.info.GetMetadata()["param"])
	assert.NotContains(t, d.info.GetMetadata(), "alice")
	require.NotNil(t, d.retry)
	require.NoError(t, hello(as("bob"), c, "b"), "each value has its own limit")
	for range 10 {
		require.NoError(t, hello(as("vip"), c, "v"), "override")
	}
	for range 3 {
		require.NoError(t, hello(ctx, c, "anonymous"), "a call without the metadata is not limited")
	}
	// The rule covers the stream too, and metadata keys are case-insensitive.
	s, err := c.Count(metadata.AppendToOutgoingContext(ctx, "X-User-ID", "bob"), &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	decode(t, err)
	assert.EqualValues(t, 1+1+10+3, svc.hellos.Load())

	// Hostile metadata does not slip past the limit: many values (each
	// limited; beyond the extractor's cap they share one value) and a huge
	// value (limited under its prefix).
	many := make([]string, 100)
	for i := range many {
		many[i] = "u" + strconv.Itoa(i)
	}
	manyCtx := metadata.AppendToOutgoingContext(ctx, "x-user-id", strings.Join(many, ","))
	require.NoError(t, hello(manyCtx, c, "m"))
	decode(t, hello(manyCtx, c, "m"))
	decode(t, hello(as("u3"), c, "m"))
	huge := strings.Repeat("h", 8<<10)
	require.NoError(t, hello(as(huge), c, "h"))
	decode(t, hello(as(huge+"x"), c, "h"))
}

// TestMetadataHotspotConcurrent makes the calls of many users at once: each
// user must be limited by its own count exactly, so that the params read for
// one call (the interceptor reuses the objects it reads them through) never
// stand in for another's.
func TestMetadataHotspotConcurrent(t *testing.T) {
	const users, limit, extra = 6, 4, 2
	g := newGuard(t, clock.NewFake(time.Hour), core.Rule{Name: "per-user", Resource: sayHello, Kind: core.KindHotspot,
		Param: "metadata:x-user-id", Limit: limit, Window: time.Second})
	_, c, _ := serve(t, guarded(g)...)
	ctx := ctxT(t)
	var passed [users]atomic.Int64
	var wg sync.WaitGroup
	for u := range users {
		for range limit + extra {
			wg.Go(func() {
				err := hello(metadata.AppendToOutgoingContext(ctx, "x-user-id", "user-"+strconv.Itoa(u)), c, "c")
				switch status.Code(err) {
				case codes.OK:
					passed[u].Add(1)
				case codes.ResourceExhausted:
				default:
					t.Errorf("user-%d: %v", u, err)
				}
			})
		}
	}
	wg.Wait()
	for u := range users {
		assert.EqualValues(t, limit, passed[u].Load(), "user-%d", u)
	}
}

func TestPeerAndIPFromSocket(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	rules := []core.Rule{
		{Name: "per-ip", Resource: sayHello, Kind: core.KindHotspot, Param: "ip", Limit: 2, Window: time.Second},
		{Name: "per-peer", Resource: count, Kind: core.KindHotspot, Param: "peer", Limit: 1, Window: time.Second},
	}
	ctx := ctxT(t)
	spoof := func(i int) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "x-forwarded-for", "203.0.113."+strconv.Itoa(i))
	}

	// 127.0.0.1 is not a trusted proxy: x-forwarded-for is ignored, and
	// every call counts against 127.0.0.1.
	g := newGuard(t, fc, rules...)
	_, c, _ := serve(t, guarded(g)...)
	require.NoError(t, hello(spoof(1), c, "a"))
	require.NoError(t, hello(spoof(2), c, "a"))
	d := decode(t, hello(spoof(3), c, "a"))
	assert.Equal(t, "per-ip", d.info.GetMetadata()["rule"])

	s, err := c.Count(spoof(4), &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	require.NoError(t, err)
	s, err = c.Count(spoof(5), &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	assert.Equal(t, "per-peer", decode(t, err).info.GetMetadata()["rule"])

	// Behind a trusted proxy (here: the loopback peer), "ip" is the
	// forwarded client, while "peer" stays the socket's.
	x, err := extractors.New(extractors.WithTrustedProxies("127.0.0.1"))
	require.NoError(t, err)
	g = newGuard(t, fc, rules...)
	_, c, _ = serve(t, guarded(g, sluicegrpc.WithExtractor(x))...)
	for i := range 5 {
		require.NoError(t, hello(spoof(i), c, "a"), "forwarded client %d", i)
	}
	require.NoError(t, hello(spoof(1), c, "a"))
	decode(t, hello(spoof(1), c, "a"))
	s, err = c.Count(spoof(6), &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	require.NoError(t, err)
	s, err = c.Count(spoof(7), &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	assert.Equal(t, "per-peer", decode(t, err).info.GetMetadata()["rule"], "peer ignores forwarding")
}

func TestClientInterceptorBlocksLocally(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	svc, _, conn := serve(t)
	g := newGuard(t, fc,
		core.Rule{Name: "out-rate", Resource: sayHello, Kind: core.KindFlow, Algorithm: "token-bucket", Limit: 1, Window: time.Second},
		core.Rule{Name: "out-streams", Resource: count, Kind: core.KindConcurrency, Limit: 1},
	)
	var ic *sluicegrpc.Interceptors
	ic, err := sluicegrpc.New(g)
	require.NoError(t, err)
	c := greeterpb.NewGreeterClient(dial(t, conn.Target(),
		grpc.WithChainUnaryInterceptor(ic.UnaryClient()),
		grpc.WithChainStreamInterceptor(ic.StreamClient()),
	))
	ctx := ctxT(t)

	require.NoError(t, hello(ctx, c, "alice"))
	var trailer metadata.MD
	d := decode(t, hello(ctx, c, "alice", grpc.Trailer(&trailer)))
	assert.Equal(t, "out-rate", d.info.GetMetadata()["rule"])
	require.NotNil(t, d.retry)
	assert.Equal(t, time.Second, d.retry.GetRetryDelay().AsDuration())
	assert.EqualValues(t, 1000, pushback(t, trailer), "the Trailer call option gets the pushback")
	assert.EqualValues(t, 1, svc.hellos.Load(), "the blocked call never reached the server")

	// An outgoing stream holds its slot until it ends.
	s1, err := c.Count(ctx, &greeterpb.CountRequest{N: 2, IntervalMs: -1})
	require.NoError(t, err)
	_, err = s1.Recv()
	require.NoError(t, err)
	_, err = c.Count(ctx, &greeterpb.CountRequest{N: 1})
	assert.Equal(t, sluicegrpc.ReasonConcurrencyLimited, decode(t, err).info.GetReason())
	assert.EqualValues(t, 1, svc.streams.Load(), "the blocked stream never reached the server")

	close(svc.release)
	_, err = s1.Recv()
	require.NoError(t, err)
	_, err = s1.Recv()
	require.ErrorIs(t, err, io.EOF)
	st, _ := g.Stats(count)
	assert.EqualValues(t, 0, st.InFlight, "reading to EOF ends the entry")
	assert.EqualValues(t, 0, st.Error)

	// A stream whose context ends releases its slot without being read.
	sctx, cancel := context.WithCancel(ctx)
	_, err = c.Count(sctx, &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	cancel()
	require.Eventually(t, func() bool {
		st, _ := g.Stats(count)
		return st.InFlight == 0
	}, 5*time.Second, 5*time.Millisecond)
	s3, err := c.Count(ctx, &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s3.Recv()
	require.NoError(t, err)
	_, err = s3.Recv()
	require.ErrorIs(t, err, io.EOF)
}

func TestLeakyBucketWaitHonoursContext(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, core.Rule{Name: "paced", Resource: sayHello, Kind: core.KindFlow,
		Algorithm: "leaky-bucket", Limit: 1, Window: time.Second, MaxWait: 10 * time.Second})
	svc, c, _ := serve(t, guarded(g)...)
	ctx := ctxT(t)

	require.NoError(t, hello(ctx, c, "first"))

	// The second call waits for its slot on the fake clock, which does
	// not move: the call's deadline ends the wait.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err := hello(short, c, "late")
	require.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
	expired, cancelExpired := context.WithCancel(ctx)
	cancelExpired()
	require.Eventually(t, func() bool { return fc.WaitForSleepers(expired, 1) != nil }, 5*time.Second, 5*time.Millisecond,
		"the server-side wait ended with the call")
	assert.EqualValues(t, 1, svc.hellos.Load())

	// A call that waits passes once its slot comes.
	done := make(chan error, 1)
	go func() { done <- hello(ctx, c, "patient") }()
	require.NoError(t, fc.WaitForSleepers(ctx, 1))
	fc.Advance(time.Second)
	require.NoError(t, <-done)
	assert.EqualValues(t, 2, svc.hellos.Load())
}

func TestBlockHandlerAndResource(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, core.Rule{Name: "greeter", Resource: "greeter", Kind: core.KindFlow,
		Algorithm: "token-bucket", Limit: 1, Window: time.Second})
	var seen atomic.Value
	opts := []sluicegrpc.Option{
		sluicegrpc.WithResource(func(context.Context, string) string { return "greeter" }),
		sluicegrpc.WithBlockHandler(func(_ context.Context, m string, b *core.BlockedError) error {
			seen.Store(m + " " + b.Rule)
			return status.Error(codes.Unavailable, "try elsewhere")
		}),
	}
	_, c, _ := serve(t, guarded(g, opts...)...)
	ctx := ctxT(t)

	require.NoError(t, hello(ctx, c, "a"))
	var trailer metadata.MD
	err := hello(ctx, c, "a", grpc.Trailer(&trailer))
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, sayHello+" greeter", seen.Load())
	assert.EqualValues(t, 1000, pushback(t, trailer), "the trailer is set whatever the handler returns")

	// Count shares the resource, so its limit.
	s, err := c.Count(ctx, &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	assert.Equal(t, codes.Unavailable, status.Code(err))
	_, ok := g.Stats(sayHello)
	assert.False(t, ok)
	st, _ := g.Stats("greeter")
	assert.EqualValues(t, 2, st.Block)
}

func TestReflectionListsService(t *testing.T) {
	g := newGuard(t, clock.NewFake(0), core.Rule{Resource: "*", Kind: core.KindConcurrency, Limit: 10})
	_, _, conn := serve(t, guarded(g)...)
	stream, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctxT(t))
	require.NoError(t, err)
	require.NoError(t, stream.Send(&rpb.ServerReflectionRequest{
		MessageRequest: &rpb.ServerReflectionRequest_ListServices{ListServices: "*"},
	}))
	resp, err := stream.Recv()
	require.NoError(t, err)
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	assert.Contains(t, names, "sluice.examples.Greeter")
	require.NoError(t, stream.CloseSend())
}

func TestConstruction(t *testing.T) {
	require.PanicsWithValue(t, "sluicegrpc.UnaryServerInterceptor: nil *core.Guard (make one with core.New)", func() {
		sluicegrpc.UnaryServerInterceptor(nil)
	})
	require.PanicsWithValue(t, "sluicegrpc.StreamServerInterceptor: nil *core.Guard (make one with core.New)", func() {
		sluicegrpc.StreamServerInterceptor(nil)
	})
	require.PanicsWithValue(t, "sluicegrpc.UnaryClientInterceptor: nil *core.Guard (make one with core.New)", func() {
		sluicegrpc.UnaryClientInterceptor(nil)
	})
	require.PanicsWithValue(t, "sluicegrpc.StreamClientInterceptor: nil *core.Guard (make one with core.New)", func() {
		sluicegrpc.StreamClientInterceptor(nil)
	})
	require.PanicsWithValue(t, "sluicegrpc: New: nil *core.Guard (make one with core.New)", func() {
		_, _ = sluicegrpc.New(nil)
	})

	g := newGuard(t, clock.NewFake(0))
	for _, tc := range []struct {
		opt  sluicegrpc.Option
		want string
	}{
		{sluicegrpc.WithResource(nil), "WithResource"},
		{sluicegrpc.WithExtractor(nil), "WithExtractor"},
		{sluicegrpc.WithSkipper(nil), "WithSkipper"},
		{sluicegrpc.WithCost(nil), "WithCost"},
		{sluicegrpc.WithBlockHandler(nil), "WithBlockHandler"},
		{sluicegrpc.WithErrorClassifier(nil), "WithErrorClassifier"},
		{nil, "option 0 is nil"},
	} {
		_, err := sluicegrpc.New(g, tc.opt)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}

	// A hotspot rule on a custom param the extractor does not know fails
	// at construction.
	g = newGuard(t, clock.NewFake(0), core.Rule{Name: "per-tenant", Resource: sayHello, Kind: core.KindHotspot,
		Param: "tenant", Limit: 1})
	_, err := sluicegrpc.New(g)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `rules[0] (per-tenant): param "tenant" is not a custom param of the gRPC extractor (registered: none)`)
	x, err := extractors.New(extractors.WithGRPCParam("tenant", func(context.Context, string) []string { return nil }))
	require.NoError(t, err)
	_, err = sluicegrpc.New(g, sluicegrpc.WithExtractor(x))
	require.NoError(t, err)
}

func TestBlockedStatus(t *testing.T) {
	for _, tc := range []struct {
		retry time.Duration
		ms    int64 // -1: no RetryInfo, no trailer
	}{
		{0, -1},
		{time.Nanosecond, 1},
		{time.Millisecond, 1},
		{time.Millisecond + 1, 2},
		{1500 * time.Millisecond, 1500},
		{time.Duration(1<<63 - 1), (1<<63 - 1) / int64(time.Millisecond)},
	} {
		b := &core.BlockedError{Resource: sayHello, Rule: "r", Kind: core.KindFlow, Limit: 5, Window: time.Second, RetryAfter: tc.retry}
		st := sluicegrpc.BlockedStatus(b)
		require.Equal(t, codes.ResourceExhausted, st.Code())
		d := decode(t, st.Err())
		if tc.ms < 0 {
			assert.Nil(t, d.retry)
			continue
		}
		require.NotNil(t, d.retry)
		delay := d.retry.GetRetryDelay().AsDuration()
		assert.LessOrEqual(t, delay, tc.retry)
		assert.GreaterOrEqual(t, tc.ms*int64(time.Millisecond), int64(delay), "pushback never earlier than RetryInfo")
		assert.Equal(t, tc.ms, sluicegrpc.PushbackMillisForTest(tc.retry))
	}
	assert.Equal(t, int64(-1), sluicegrpc.PushbackMillisForTest(-time.Second))
	assert.Equal(t, codes.ResourceExhausted, sluicegrpc.BlockedStatus(nil).Code())
}

// breakerDetails checks that err is the status of a call an open breaker
// named rule blocked on resource: Unavailable, a RetryInfo and an ErrorInfo
// of reason CIRCUIT_OPEN with metadata rule, resource and kind, and no other
// detail (no QuotaFailure: a breaker is no quota). It returns the RetryInfo
// delay.
func breakerDetails(t *testing.T, err error, rule, resource string) time.Duration {
	t.Helper()
	st, ok := status.FromError(err)
	require.True(t, ok, "not a status: %v", err)
	require.Equal(t, codes.Unavailable, st.Code(), "%v", err)
	assert.Contains(t, st.Message(), "circuit open")
	var retry *errdetails.RetryInfo
	var info *errdetails.ErrorInfo
	for _, x := range st.Details() {
		switch x := x.(type) {
		case *errdetails.RetryInfo:
			retry = x
		case *errdetails.ErrorInfo:
			info = x
		default:
			t.Fatalf("unexpected detail %T: %v (a breaker is no quota)", x, x)
		}
	}
	require.NotNil(t, retry, "RetryInfo detail")
	require.NotNil(t, info, "ErrorInfo detail")
	assert.Equal(t, sluicegrpc.ReasonCircuitOpen, info.GetReason())
	assert.Equal(t, "CIRCUIT_OPEN", info.GetReason())
	assert.Equal(t, "sluice", info.GetDomain())
	assert.Equal(t, map[string]string{"rule": rule, "resource": resource, "kind": "breaker"}, info.GetMetadata())
	return retry.GetRetryDelay().AsDuration()
}

// countAll opens a Count stream of n and reads it to its end, returning the
// numbers received and the error that ended it (nil for io.EOF).
func countAll(ctx context.Context, c greeterpb.GreeterClient, n int32, opts ...grpc.CallOption) ([]int32, metadata.MD, error) {
	stream, err := c.Count(ctx, &greeterpb.CountRequest{N: n}, opts...)
	if err != nil {
		return nil, nil, err
	}
	var got []int32
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			return got, stream.Trailer(), nil
		}
		if err != nil {
			return got, stream.Trailer(), err
		}
		got = append(got, r.GetNumber())
	}
}

func TestBreakerBlocksUnaryAndStreamWithUnavailable(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, core.Rule{Name: "greeter-breaker", Resource: "*", Kind: core.KindBreaker,
		Strategy: "error-count", Threshold: 2, MinRequests: 1, OpenFor: 5 * time.Second})
	svc, c, _ := serve(t, guarded(g)...)
	ctx := ctxT(t)

	// The first failing calls go through and fail.
	for range 2 {
		assert.Equal(t, codes.Internal, status.Code(hello(ctx, c, "fail")))
	}
	// The breaker is open: Unavailable, RetryInfo and the pushback trailer,
	// and the handler is not called.
	for range 3 {
		var trailer metadata.MD
		delay := breakerDetails(t, hello(ctx, c, "alice", grpc.Trailer(&trailer)), "greeter-breaker", sayHello)
		assert.Equal(t, 5*time.Second, delay)
		assert.EqualValues(t, 5000, pushback(t, trailer))
	}
	assert.EqualValues(t, 2, svc.hellos.Load(), "a blocked call never reaches the handler")

	// The breaker's glob covers the stream too: one state for both. Its
	// trailer comes through ServerStream.SetTrailer.
	fc.Advance(1500 * time.Millisecond)
	got, trailer, err := countAll(ctx, c, 1)
	assert.Empty(t, got)
	delay := breakerDetails(t, err, "greeter-breaker", count)
	assert.Equal(t, 3500*time.Millisecond, delay)
	assert.EqualValues(t, 3500, pushback(t, trailer))
	assert.EqualValues(t, 0, svc.streams.Load())

	// After openFor a probe goes through; its success closes the breaker.
	fc.Advance(3500 * time.Millisecond)
	require.NoError(t, hello(ctx, c, "alice"))
	require.NoError(t, hello(ctx, c, "bob"))
	got, trailer, err = countAll(ctx, c, 2)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2}, got)
	assert.EqualValues(t, -1, pushback(t, trailer))
	assert.EqualValues(t, 4, svc.hellos.Load())
	assert.EqualValues(t, 1, svc.streams.Load())

	snap := g.Snapshot()
	require.NotNil(t, snap.Rules[0].Breaker)
	assert.EqualValues(t, "closed", snap.Rules[0].Breaker.State)
	assert.EqualValues(t, 1, snap.Rules[0].Breaker.Trips)
}

func TestBreakerTripsOnFailingStreams(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, core.Rule{Name: "count-breaker", Resource: count, Kind: core.KindBreaker,
		Strategy: "error-count", Threshold: 2, MinRequests: 1, OpenFor: 2 * time.Second})
	svc, c, _ := serve(t, guarded(g)...)
	ctx := ctxT(t)

	for range 2 {
		_, _, err := countAll(ctx, c, -1)
		assert.Equal(t, codes.Internal, status.Code(err), "%v", err)
	}
	_, trailer, err := countAll(ctx, c, 1)
	assert.Equal(t, 2*time.Second, breakerDetails(t, err, "count-breaker", count))
	assert.EqualValues(t, 2000, pushback(t, trailer))
	assert.EqualValues(t, 2, svc.streams.Load(), "a blocked stream never reaches the handler")
	require.NoError(t, hello(ctx, c, "alice"), "the breaker covers its resource only")

	// A failed probe opens it again; a successful one closes it.
	fc.Advance(2 * time.Second)
	_, _, err = countAll(ctx, c, -1)
	assert.Equal(t, codes.Internal, status.Code(err), "the probe reaches the handler")
	_, _, err = countAll(ctx, c, 1)
	assert.Equal(t, 2*time.Second, breakerDetails(t, err, "count-breaker", count))
	fc.Advance(2 * time.Second)
	for range 3 {
		got, _, err := countAll(ctx, c, 1)
		require.NoError(t, err)
		assert.Equal(t, []int32{1}, got)
	}
	assert.EqualValues(t, 6, svc.streams.Load())
}

func TestBreakerTripsOnSlowCalls(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, core.Rule{Name: "slow-breaker", Resource: sayHello, Kind: core.KindBreaker,
		Strategy: "slow-ratio", Threshold: 1, MaxRT: 100 * time.Millisecond, MinRequests: 1, OpenFor: time.Second})
	svc, c, _ := serve(t, guarded(g)...)
	ctx := ctxT(t)

	// The call takes 150ms on the Guard's clock: it succeeds, but slowly.
	done := make(chan error, 1)
	go func() { done <- hello(ctx, c, "hold") }()
	require.Eventually(t, func() bool { return svc.hellos.Load() == 1 }, 5*time.Second, time.Millisecond)
	fc.Advance(150 * time.Millisecond)
	svc.release <- struct{}{}
	require.NoError(t, <-done)

	assert.Equal(t, time.Second, breakerDetails(t, hello(ctx, c, "alice"), "slow-breaker", sayHello))
	assert.EqualValues(t, 1, svc.hellos.Load())
	// A fast probe closes it.
	fc.Advance(time.Second)
	require.NoError(t, hello(ctx, c, "alice"))
	require.NoError(t, hello(ctx, c, "alice"))
}

func TestClientBreakerBlocksLocally(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	svc, _, conn := serve(t)
	g := newGuard(t, fc, core.Rule{Name: "out-breaker", Resource: "/sluice.examples.Greeter/*", Kind: core.KindBreaker,
		Strategy: "error-ratio", Threshold: 0.5, MinRequests: 2, OpenFor: time.Second})
	c := greeterpb.NewGreeterClient(dial(t, conn.Target(),
		grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(g)),
		grpc.WithChainStreamInterceptor(sluicegrpc.StreamClientInterceptor(g))))
	ctx := ctxT(t)

	// One success, one failure the server answered: half failed, the
	// client's breaker opens.
	require.NoError(t, hello(ctx, c, "alice"))
	assert.Equal(t, codes.Internal, status.Code(hello(ctx, c, "fail")))
	var trailer metadata.MD
	delay := breakerDetails(t, hello(ctx, c, "alice", grpc.Trailer(&trailer)), "out-breaker", sayHello)
	assert.Equal(t, time.Second, delay)
	assert.EqualValues(t, 1000, pushback(t, trailer))
	assert.EqualValues(t, 2, svc.hellos.Load(), "the blocked call never left the client")

	// Outgoing streams are blocked locally too, before the stream opens.
	fc.Advance(250 * time.Millisecond)
	trailer = nil
	_, err := c.Count(ctx, &greeterpb.CountRequest{N: 1}, grpc.Trailer(&trailer))
	assert.Equal(t, 750*time.Millisecond, breakerDetails(t, err, "out-breaker", count))
	assert.EqualValues(t, 750, pushback(t, trailer))
	assert.EqualValues(t, 0, svc.streams.Load())

	// After openFor, a probe leaves the client; its success closes the
	// breaker, and calls and streams go out again.
	fc.Advance(750 * time.Millisecond)
	require.NoError(t, hello(ctx, c, "alice"))
	got, _, err := countAll(ctx, c, 2)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2}, got)
	require.NoError(t, hello(ctx, c, "bob"))
	assert.EqualValues(t, 4, svc.hellos.Load())
	assert.EqualValues(t, 1, svc.streams.Load())
}

func TestClientBreakerTripsOnFailingStreams(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	svc, _, conn := serve(t)
	g := newGuard(t, fc, core.Rule{Name: "out-count-breaker", Resource: count, Kind: core.KindBreaker,
		Strategy: "error-count", Threshold: 2, MinRequests: 1, OpenFor: time.Second})
	c := greeterpb.NewGreeterClient(dial(t, conn.Target(),
		grpc.WithChainStreamInterceptor(sluicegrpc.StreamClientInterceptor(g))))
	ctx := ctxT(t)

	// The outcome of an outgoing stream is the error its end brings.
	for range 2 {
		_, _, err := countAll(ctx, c, -1)
		assert.Equal(t, codes.Internal, status.Code(err), "%v", err)
	}
	_, err := c.Count(ctx, &greeterpb.CountRequest{N: 1})
	assert.Equal(t, time.Second, breakerDetails(t, err, "out-count-breaker", count))
	assert.EqualValues(t, 2, svc.streams.Load())

	fc.Advance(time.Second)
	got, _, err := countAll(ctx, c, 3)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2, 3}, got)
	got, _, err = countAll(ctx, c, 1)
	require.NoError(t, err, "closed")
	assert.Equal(t, []int32{1}, got)
}

func TestBlockedStatusBreaker(t *testing.T) {
	b := &core.BlockedError{Resource: sayHello, Rule: "b", Kind: core.KindBreaker, RetryAfter: 1500 * time.Microsecond}
	assert.Equal(t, 1500*time.Microsecond, breakerDetails(t, sluicegrpc.BlockedStatus(b).Err(), "b", sayHello))
	assert.EqualValues(t, 2, sluicegrpc.PushbackMillisForTest(b.RetryAfter), "the trailer rounds up")

	// Without a retry time (which core does not give a breaker) there is
	// no RetryInfo; the code and ErrorInfo stay.
	st := sluicegrpc.BlockedStatus(&core.BlockedError{Resource: sayHello, Rule: "b", Kind: core.KindBreaker})
	assert.Equal(t, codes.Unavailable, st.Code())
	require.Len(t, st.Details(), 1)
	info, ok := st.Details()[0].(*errdetails.ErrorInfo)
	require.True(t, ok, "%T", st.Details()[0])
	assert.Equal(t, sluicegrpc.ReasonCircuitOpen, info.GetReason())
}

// TestBlockedStatusOverloaded: a call an adaptive limit blocked is
// Unavailable (the server is overloaded, whoever calls) with RetryInfo and
// an ErrorInfo of reason OVERLOADED; one that can never pass stays
// ResourceExhausted.
func TestBlockedStatusOverloaded(t *testing.T) {
	b := &core.BlockedError{Resource: sayHello, Rule: "api-adaptive", Kind: core.KindAdaptive, Limit: 12, RetryAfter: 30 * time.Millisecond}
	st := sluicegrpc.BlockedStatus(b)
	require.Equal(t, codes.Unavailable, st.Code())
	var retry *errdetails.RetryInfo
	var info *errdetails.ErrorInfo
	for _, x := range st.Details() {
		switch x := x.(type) {
		case *errdetails.RetryInfo:
			retry = x
		case *errdetails.ErrorInfo:
			info = x
		default:
			t.Fatalf("unexpected detail %T: %v", x, x)
		}
	}
	require.NotNil(t, retry)
	assert.Equal(t, 30*time.Millisecond, retry.GetRetryDelay().AsDuration())
	require.NotNil(t, info)
	assert.Equal(t, "OVERLOADED", info.GetReason())
	assert.Equal(t, map[string]string{"rule": "api-adaptive", "resource": sayHello, "kind": "adaptive", "limit": "12"}, info.GetMetadata())
	assert.Equal(t, int64(30), sluicegrpc.PushbackMillisForTest(b.RetryAfter))

	b.Never, b.RetryAfter = true, 0
	assert.Equal(t, codes.ResourceExhausted, sluicegrpc.BlockedStatus(b).Code())
}

// hotCPU is a core.SystemSource reporting a CPU at 95%.
type hotCPU struct{}

func (hotCPU) CPU() (float64, error)  { return 0.95, nil }
func (hotCPU) Load() (float64, error) { return 0, nil }

// TestSystemRuleUnavailableOverLoopback: a call a system rule sheds gets
// Unavailable with RetryInfo, an ErrorInfo of reason OVERLOADED and the
// pushback trailer, as one an adaptive limit sheds.
func TestSystemRuleUnavailableOverLoopback(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithSystemSource(hotCPU{}), core.WithRules(core.Rule{
		Name: "cpu", Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.8}))
	require.NoError(t, err)
	defer g.Close()
	svc, c, _ := serve(t, guarded(g)...)
	var trailer metadata.MD
	err = hello(ctxT(t), c, "alice", grpc.Trailer(&trailer))
	st, ok := status.FromError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, codes.Unavailable, st.Code(), "%v", err)
	assert.Zero(t, svc.hellos.Load())
	var retry *errdetails.RetryInfo
	var info *errdetails.ErrorInfo
	for _, x := range st.Details() {
		switch x := x.(type) {
		case *errdetails.RetryInfo:
			retry = x
		case *errdetails.ErrorInfo:
			info = x
		default:
			t.Fatalf("unexpected detail %T: %v", x, x)
		}
	}
	require.NotNil(t, retry)
	assert.Equal(t, 500*time.Millisecond, retry.GetRetryDelay().AsDuration(), "the next sample of the CPU")
	require.NotNil(t, info)
	assert.Equal(t, sluicegrpc.ReasonOverloaded, info.GetReason())
	assert.Equal(t, map[string]string{"rule": "cpu", "resource": sayHello, "kind": "system"}, info.GetMetadata())
	assert.EqualValues(t, 500, pushback(t, trailer))
}

// warmCPU is a core.SystemSource reporting a CPU at 75%.
type warmCPU struct{}

func (warmCPU) CPU() (float64, error)  { return 0.75, nil }
func (warmCPU) Load() (float64, error) { return 0, nil }

// TestSystemRulePriorityFromMetadata: a system rule reading levels from
// the metadata x-priority sheds sheddable calls above 90% of its CPU
// threshold while critical ones come, and lets critical ones through.
func TestSystemRulePriorityFromMetadata(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithSystemSource(warmCPU{}), core.WithRules(core.Rule{
		Name: "cpu", Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.8, Priority: "metadata:x-priority"}))
	require.NoError(t, err)
	defer g.Close()
	_, c, _ := serve(t, guarded(g)...)
	ctx := ctxT(t)
	level := func(p string) context.Context { return metadata.AppendToOutgoingContext(ctx, "x-priority", p) }
	require.NoError(t, hello(level("critical"), c, "a"))
	err = hello(level("sheddable"), c, "b")
	assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
	require.NoError(t, hello(level("critical"), c, "c"))
}
