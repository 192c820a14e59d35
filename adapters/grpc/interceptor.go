package sluicegrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// Interceptors guards gRPC calls with a core.Guard. Its four methods return
// the server and client interceptors; they share the Guard, the options and
// one code path. An Interceptors is safe for concurrent use.
type Interceptors struct {
	g   *core.Guard
	cfg config
	// params lends the params handed to Enter, which the Guard uses only
	// during Enter, so that they cost no allocation per call.
	params sync.Pool // of *extractors.Params
}

// New returns the interceptors of g configured by opts, or an error naming
// the invalid option. New panics when g is nil.
func New(g *core.Guard, opts ...Option) (*Interceptors, error) {
	if g == nil {
		panic("sluicegrpc: New: nil *core.Guard (make one with core.New)")
	}
	c, err := newConfig(g, opts)
	if err != nil {
		return nil, err
	}
	ic := &Interceptors{g: g, cfg: *c}
	ic.params.New = func() any { return new(extractors.Params) }
	return ic, nil
}

func mustNew(who string, g *core.Guard, opts []Option) *Interceptors {
	if g == nil {
		panic(who + ": nil *core.Guard (make one with core.New)")
	}
	ic, err := New(g, opts...)
	if err != nil {
		panic(who + ": " + err.Error())
	}
	return ic
}

// UnaryServerInterceptor returns a server interceptor that guards unary calls
// with g: see New, Interceptors.UnaryServer and the package documentation.
// It panics, when called, if g is nil or an option is invalid.
func UnaryServerInterceptor(g *core.Guard, opts ...Option) grpc.UnaryServerInterceptor {
	return mustNew("sluicegrpc.UnaryServerInterceptor", g, opts).UnaryServer()
}

// StreamServerInterceptor returns a server interceptor that guards streaming
// calls with g: see Interceptors.StreamServer. It panics, when called, if g
// is nil or an option is invalid.
func StreamServerInterceptor(g *core.Guard, opts ...Option) grpc.StreamServerInterceptor {
	return mustNew("sluicegrpc.StreamServerInterceptor", g, opts).StreamServer()
}

// UnaryClientInterceptor returns a client interceptor that limits outgoing
// unary calls with g: see Interceptors.UnaryClient. It panics, when called,
// if g is nil or an option is invalid.
func UnaryClientInterceptor(g *core.Guard, opts ...Option) grpc.UnaryClientInterceptor {
	return mustNew("sluicegrpc.UnaryClientInterceptor", g, opts).UnaryClient()
}

// StreamClientInterceptor returns a client interceptor that limits outgoing
// streams with g: see Interceptors.StreamClient. It panics, when called, if g
// is nil or an option is invalid.
func StreamClientInterceptor(g *core.Guard, opts ...Option) grpc.StreamClientInterceptor {
	return mustNew("sluicegrpc.StreamClientInterceptor", g, opts).StreamClient()
}

// UnaryServer returns the unary server interceptor: it enters the resource of
// the call (its full method), runs the handler when admitted and exits with
// the handler's outcome; a blocked call gets the block handler's error and
// never reaches the handler.
//
//go:noinline
func (ic *Interceptors) UnaryServer() grpc.UnaryServerInterceptor {
	// Without a skipper or a cost, guard's code path written out, without
	// its closure, and enter's, without a call returning the Entry: keep
	// them alike. Not inlined: a closure copied into a caller UnaryServer
	// is inlined into is compiled without inlining the calls in it
	// (EnterLazy, outcome): 7 ns a call.
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		method := info.FullMethod
		if ic.cfg.skip != nil || ic.cfg.cost != nil {
			var resp any
			err := ic.guard(ctx, method, req, sink{}, func(ctx context.Context) (err error) {
				resp, err = handler(ctx, req)
				return err
			})
			return resp, err
		}
		var p *extractors.Params
		e, err := ic.g.EnterLazy(ctx, ic.resourceOf(ctx, method), func() core.Params {
			p = ic.lend(ctx, method)
			return p
		})
		if p != nil { // Enter is done with it
			ic.giveBack(p)
		}
		if err != nil {
			return nil, ic.blocked(ctx, method, sink{}, err)
		}
		outcome := errPanicked // unless the handler returns
		defer func() { e.Exit(outcome) }()
		resp, err := handler(ctx, req)
		outcome = ic.outcome(ctx, method, err, false)
		return resp, err
	}
}

// StreamServer returns the stream server interceptor. The entry lasts the
// whole stream: a concurrency rule counts the stream in flight until its
// handler returns. Calls to methods the server does not register, which
// reach a grpc.UnknownServiceHandler (grpc passes it no service, srv nil,
// and a bidirectional stream), share the resource extractors.Unmatched
// unless WithResource names them.
func (ic *Interceptors) StreamServer() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		unregistered := srv == nil && info.IsClientStream && info.IsServerStream
		rs := &recvStream{ServerStream: ss}
		return ic.guard(ss.Context(), info.FullMethod, nil, sink{ss: ss, rs: rs, unregistered: unregistered}, func(context.Context) error {
			return handler(srv, rs)
		})
	}
}

// UnaryClient returns the unary client interceptor: it limits outgoing calls
// (resource: the full method; params from the outgoing metadata) and returns
// the block error locally, without calling the server. When the call has a
// grpc.Trailer option, a block fills it with the grpc-retry-pushback-ms
// trailer a server would have sent.
func (ic *Interceptors) UnaryClient() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		th := ic.cfg.throttle
		if th == nil || ic.cfg.skip != nil && ic.cfg.skip(ctx, method) {
			return ic.guard(ctx, method, req, sink{callOpts: opts, client: true}, func(ctx context.Context) error {
				return invoker(ctx, method, req, reply, cc, opts...)
			})
		}
		resource := ic.resourceOf(ctx, method)
		if err := th.Allow(resource); err != nil {
			return throttledStatus(err)
		}
		sent := false
		var trailer metadata.MD
		err := ic.guard(ctx, method, req, sink{callOpts: opts, client: true}, func(ctx context.Context) error {
			sent = true
			return invoker(ctx, method, req, reply, cc, append(opts[:len(opts):len(opts)], grpc.Trailer(&trailer))...) // a copy: opts is the caller's
		})
		if sent {
			recordOutcome(th, resource, err, trailer, false)
		}
		return err
	}
}

// StreamClient returns the stream client interceptor. The entry lasts until
// the stream ends: RecvMsg returns an error (io.EOF is success), the single
// response of a stream without server streaming is received, the call's
// context is done, or gRPC ends the stream otherwise (grpc.OnFinish: the
// ClientConn closed, which counts as the caller giving up; SendMsg or
// Header failed). A stream the caller abandons without any of these
// (which also leaks gRPC's own resources) keeps its entry.
func (ic *Interceptors) StreamClient() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		if ic.cfg.skip != nil && ic.cfg.skip(ctx, method) {
			return streamer(ctx, desc, cc, method, opts...)
		}
		th := ic.cfg.throttle
		var resource string
		if th != nil {
			resource = ic.resourceOf(ctx, method)
			if err := th.Allow(resource); err != nil {
				return nil, throttledStatus(err)
			}
		}
		var e core.Entry
		if err := ic.enter(&e, ctx, method, nil, sink{callOpts: opts, client: true}); err != nil {
			return nil, err
		}
		started := false
		defer func() {
			if !started {
				e.Exit(errPanicked) // the streamer panicked; the panic goes on
			}
		}()
		s := &clientStream{ic: ic, ctx: ctx, method: method, entry: e, single: !desc.ServerStreams, resource: resource}
		cs, err := streamer(ctx, desc, cc, method, append(opts[:len(opts):len(opts)], grpc.OnFinish(s.onFinish))...)
		started = true
		if err != nil {
			s.finish(err, false)
			return nil, err
		}
		s.ClientStream = cs
		stop := context.AfterFunc(ctx, func() {
			s.finish(status.FromContextError(ctx.Err()).Err(), false)
		})
		if s.stop.Store(&stop); s.done.Load() { // finish may have missed it
			stop()
		}
		return s, nil
	}
}

// errPanicked is the outcome Exit records for a handler that panicked.
var errPanicked = errors.New("sluicegrpc: handler panicked")

// sink says where a blocked call's trailer goes: to the server stream ss, to
// the call's grpc.Trailer options on clients, or else to grpc.SetTrailer;
// and whether the server registers the call's method.
type sink struct {
	ss           grpc.ServerStream
	callOpts     []grpc.CallOption
	client       bool
	unregistered bool        // a server call for a grpc.UnknownServiceHandler
	rs           *recvStream // a server stream's, as its handler has it
}

// recvStream is a server stream that keeps the error its RecvMsg returned
// for what the client sent (a message gRPC cannot decode or decompress:
// Internal), which handlers return as is: the client's doing, like a unary
// request gRPC cannot decode (refused before the interceptor), and no
// failure of the server.
type recvStream struct {
	grpc.ServerStream
	err atomic.Pointer[error]
}

func (s *recvStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if status.Code(err) == codes.Internal {
		s.err.Store(&err)
	}
	return err
}

// clients reports whether err is an error RecvMsg returned for what the
// client sent.
func (s *recvStream) clients(err error) bool {
	if s == nil || err == nil {
		return false
	}
	kept := s.err.Load()
	return kept != nil && *kept == err
}

// guard is the code path the interceptors share: skip, Enter, run the call,
// classify its error, Exit (the unary server interceptor writes it out for
// calls without a skipper or a cost; keep the two alike). Exit runs exactly
// once, with errPanicked when fn panics (the panic then goes on). req is
// the request message of a unary call, nil for a stream.
func (ic *Interceptors) guard(ctx context.Context, fullMethod string, req any, to sink, fn func(context.Context) error) error {
	if ic.cfg.skip != nil && ic.cfg.skip(ctx, fullMethod) {
		return fn(ctx)
	}
	var e core.Entry
	if err := ic.enter(&e, ctx, fullMethod, req, to); err != nil {
		return err
	}
	outcome := errPanicked // unless fn returns
	defer func() { e.Exit(outcome) }()
	err := fn(ctx)
	switch {
	case to.rs.clients(err):
		outcome = nil
	case to.client && unsendable(ctx, req, err):
		outcome = errors.Join(err, context.Canceled) // never sent: the caller gave up
	default:
		outcome = ic.outcome(ctx, fullMethod, err, to.client)
	}
	return err
}

// unsendable reports whether err is gRPC's Internal error for a call it
// refused to send, the caller's: its outgoing metadata gRPC does not carry
// (a value outside printable ASCII, a user's name with an accent, say), or
// a request req, of a unary call, its proto codec cannot marshal ("grpc:
// error while marshaling": a proto3 string of invalid UTF-8). A server
// whose answer it cannot marshal fails with the same words; req then
// marshals.
func unsendable(ctx context.Context, req any, err error) bool {
	if err == nil {
		return false
	}
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Internal {
		return false
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	for k, vs := range md {
		if k == "" || k[0] != ':' && strings.TrimFunc(k, metadataKeyRune) != "" {
			return true
		}
		for _, v := range vs {
			if !strings.HasSuffix(k, "-bin") && strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0 {
				return true
			}
		}
	}
	if req == nil || !strings.HasPrefix(st.Message(), "grpc: error while marshaling") {
		return false
	}
	b, merr := encoding.GetCodecV2(grpcproto.Name).Marshal(req)
	b.Free()
	return merr != nil
}

// metadataKeyRune reports whether r may be in a metadata key: 0-9, a-z,
// '-', '_' and '.'.
func metadataKeyRune(r rune) bool {
	return 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.'
}

// enter enters the call's resource, writing the entry to *e (the zero
// Entry on an error; a call returning the Entry would copy it twice more).
// Its error is the one to return to the caller: the block handler's for a
// block (with the pushback trailer set), a status for anything else. The
// call's params are gathered in a holder lent by ic.params only when the
// rules deciding the call read them (core.Guard.EnterLazy).
func (ic *Interceptors) enter(e *core.Entry, ctx context.Context, fullMethod string, req any, to sink) error {
	resource := extractors.Unmatched
	if !to.unregistered || ic.cfg.resource != nil {
		resource = ic.resourceOf(ctx, fullMethod)
	}
	var p *extractors.Params
	lend := func() core.Params {
		p = ic.lend(ctx, fullMethod)
		return p
	}
	var err error
	if ic.cfg.cost != nil {
		*e, err = ic.g.EnterLazy(ctx, resource, lend, core.WithCount(max(ic.cfg.cost(ctx, fullMethod, req), 1)))
	} else {
		*e, err = ic.g.EnterLazy(ctx, resource, lend)
	}
	if p != nil { // Enter is done with it
		ic.giveBack(p)
	}
	if err != nil {
		return ic.blocked(ctx, fullMethod, to, err)
	}
	return nil
}

// lend lends a params holder from ic.params, holding the call's params.
func (ic *Interceptors) lend(ctx context.Context, fullMethod string) *extractors.Params {
	p := ic.params.Get().(*extractors.Params)
	p.ResetGRPC(ic.cfg.extractor, callInfo{}, ctx, fullMethod)
	return p
}

// giveBack gives p, lent by lend, back to ic.params.
func (ic *Interceptors) giveBack(p *extractors.Params) {
	p.ResetGRPC(nil, nil, nil, "")
	ic.params.Put(p)
}

// resourceOf returns the resource of a call to fullMethod.
func (ic *Interceptors) resourceOf(ctx context.Context, fullMethod string) string {
	if ic.cfg.resource != nil {
		return ic.cfg.resource(ctx, fullMethod)
	}
	return fullMethod
}

// blocked turns an error of Enter into the error of the call.
func (ic *Interceptors) blocked(ctx context.Context, fullMethod string, to sink, err error) error {
	var b *core.BlockedError
	if !errors.As(err, &b) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			// A leaky-bucket wait ended with the call's context.
			return status.FromContextError(err).Err()
		}
		return status.Error(codes.Internal, err.Error())
	}
	if ms, ok := pushback(b); ok {
		to.setTrailer(ctx, metadata.MD{pushbackKey: []string{ms}})
	}
	if ic.cfg.onBlock != nil {
		if err := ic.cfg.onBlock(ctx, fullMethod, b); err != nil {
			return err
		}
	}
	return BlockedStatus(b).Err()
}

func (to sink) setTrailer(ctx context.Context, md metadata.MD) {
	switch {
	case to.ss != nil:
		to.ss.SetTrailer(md)
	case to.client:
		for _, o := range to.callOpts {
			if t, ok := o.(grpc.TrailerCallOption); ok && t.TrailerAddr != nil {
				*t.TrailerAddr = md
			}
		}
	default:
		// Fails only outside a gRPC server (a direct call in a test), where
		// there is nobody to send a trailer to.
		_ = grpc.SetTrailer(ctx, md)
	}
}

// outcome is the error Exit records for a call that returned err. A call
// that failed with Canceled once its context ended was given up by its
// caller, and so was a server's call failing with DeadlineExceeded (on a
// client, that is the upstream's slowness): gRPC's errors wrap no context
// error, so the error then wraps the context's, for Exit to see it
// (core.Entry.Exit).
func (ic *Interceptors) outcome(ctx context.Context, fullMethod string, err error, client bool) error {
	if err == nil {
		return nil // small enough to inline: a call that succeeds pays no call here
	}
	return ic.failure(ctx, fullMethod, err, client)
}

// failure is outcome for a call that returned err != nil.
func (ic *Interceptors) failure(ctx context.Context, fullMethod string, err error, client bool) error {
	if !ic.cfg.isFailure(ctx, fullMethod, err) {
		return nil
	}
	if c := status.Code(err); (c == codes.Canceled || c == codes.DeadlineExceeded && !client) && ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", err, ctx.Err())
	}
	return err
}

// defaultIsFailure is the default error classifier: only the codes a server
// fault yields (Unknown, as errors without a status have, DeadlineExceeded,
// Internal, Unavailable, DataLoss) count as failures, as the HTTP adapters
// count only 5xx; the codes of a caller's mistakes do not.
func defaultIsFailure(_ context.Context, _ string, err error) bool {
	switch status.Code(err) {
	case codes.Unknown, codes.DeadlineExceeded, codes.Internal, codes.Unavailable, codes.DataLoss:
		return true
	}
	return false
}

// clientStream holds the entry of an outgoing stream until the stream ends.
type clientStream struct {
	grpc.ClientStream
	ic     *Interceptors
	ctx    context.Context
	method string
	entry  core.Entry
	single bool // no server streaming: one response ends the stream
	// resource is the stream's resource when the client throttles.
	resource string
	stop     atomic.Pointer[func() bool] // of the AfterFunc of ctx
	done     atomic.Bool
	answered atomic.Bool // a message was received (for the throttle)
	// receiving is set while RecvMsg runs; ended holds the error gRPC
	// ended the stream with (onFinish) while it did.
	receiving atomic.Bool
	ended     atomic.Pointer[error]
}

// onFinish is the stream's grpc.OnFinish callback: gRPC ended the stream
// with err. It leaves the stream to a RecvMsg under way, which returns the
// end with its trailer, unless that RecvMsg returns a message. A Canceled
// status while the call's context lives is the ClientConn closing: the
// caller gave up on the stream.
func (s *clientStream) onFinish(err error) {
	if status.Code(err) == codes.Canceled && s.ctx.Err() == nil {
		err = fmt.Errorf("%w (%w)", err, context.Canceled)
	}
	s.ended.Store(&err)
	if !s.receiving.Load() {
		s.finish(err, false)
	}
}

func (s *clientStream) RecvMsg(m any) error {
	s.receiving.Store(true)
	err := s.ClientStream.RecvMsg(m)
	switch {
	case errors.Is(err, io.EOF):
		s.finish(nil, true)
	case err != nil:
		s.finish(err, true)
	case s.single:
		s.finish(nil, false)
	default:
		if s.ic.cfg.throttle != nil && !s.answered.Load() {
			s.answered.Store(true)
		}
		s.receiving.Store(false)
		if end := s.ended.Load(); end != nil { // after the Store: see onFinish
			s.finish(*end, false)
		}
		return nil
	}
	s.receiving.Store(false)
	return err
}

// finish exits the entry once, whoever sees the end of the stream first;
// ended says that RecvMsg returned an error (io.EOF included), after which
// the stream's trailer may be read.
func (s *clientStream) finish(err error, ended bool) {
	if !s.done.CompareAndSwap(false, true) {
		return
	}
	if stop := s.stop.Load(); stop != nil {
		(*stop)()
	}
	if unsendable(s.ctx, nil, err) {
		s.entry.Exit(errors.Join(err, context.Canceled)) // never sent: the caller gave up
	} else {
		s.entry.Exit(s.ic.outcome(s.ctx, s.method, err, true))
	}
	if th := s.ic.cfg.throttle; th != nil {
		var trailer metadata.MD
		if ended {
			trailer = s.ClientStream.Trailer()
		}
		recordOutcome(th, s.resource, err, trailer, s.answered.Load())
	}
}
