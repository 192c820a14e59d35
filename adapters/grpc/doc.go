// Package sluicegrpc guards gRPC servers and clients with a sluice
// core.Guard: interceptors that enter the Guard for every call, run it when
// admitted and answer codes.ResourceExhausted (codes.Unavailable for an open
// circuit breaker), with retry information, when a rule blocks it.
//
// One line protects a server:
//
//	grpc.NewServer(
//		grpc.ChainUnaryInterceptor(sluicegrpc.UnaryServerInterceptor(guard)),
//		grpc.ChainStreamInterceptor(sluicegrpc.StreamServerInterceptor(guard)),
//	)
//
// # Resources and params
//
// The resource of a call is its full method, "/pkg.Service/Method" (rules may
// use globs such as "/pkg.Service/*"); WithResource changes it. Calls to
// methods the server does not register, which only a server with
// grpc.UnknownServiceHandler (a proxy) serves, share the resource
// extractors.Unmatched, as HTTP requests no route matched do (the stream
// interceptor knows them by the nil service gRPC passes it, so a service
// registered with a nil implementation counts as unregistered): names clients
// make up never become resources (without WithResource, which is given
// every raw name: a proxy limiting the methods it forwards one by one
// should map the names it knows and the rest to one). Hotspot rules
// read the call's params through the extractors.Extractor given to the
// Guard (core.WithParamSource) or to the interceptors (WithExtractor;
// default extractors.New()): "metadata:NAME" (incoming metadata on servers,
// outgoing metadata on clients), "peer" (the socket peer's IP), "ip" (the
// peer, or the x-forwarded-for metadata when the peer is a trusted proxy),
// "method" (the full method) and custom params. Only params that a matching
// rule names are read.
//
// # Entries and outcomes
//
// Unary and stream interceptors share one code path: Enter, run the handler,
// classify its error, Exit. Exit runs exactly once per admitted call, with
// the handler's outcome, also when the handler panics: the call then counts
// as failed, its concurrency slots are released and the panic goes on (to a
// recovery interceptor placed after this one, or to gRPC, which ends the
// process as for any handler panic). A server stream's entry lasts the whole
// stream, so a concurrency rule counts open streams. By default only the
// codes a server fault yields count as failures in the Guard's statistics,
// as the HTTP adapters count only 5xx: Unknown (an error without a status
// has it), DeadlineExceeded, Internal, Unavailable and DataLoss. A caller's
// mistakes (NotFound, InvalidArgument, Unauthenticated, PermissionDenied,
// AlreadyExists, FailedPrecondition, OutOfRange, Unimplemented,
// ResourceExhausted, Canceled...) do not, so one client's bad calls cannot
// open an error breaker for every client; WithErrorClassifier changes that.
// Nor does, whatever the classifier, a stream whose handler returns the
// Internal error RecvMsg gave for a message gRPC could not decode (a unary
// request gRPC cannot decode is refused before the interceptors run). On a
// client, a call gRPC refused to send (Internal: outgoing metadata outside
// printable ASCII, a unary request it could not marshal) is the caller's
// giving up, never the upstream failing. A call failing with Canceled
// after its context ended was given up by its caller (a client hanging up,
// on servers; the calling code, on clients), and so was
// a server's call failing with DeadlineExceeded then: Exit is told so
// (core.Entry.Exit), and error breakers do not count it. On a client,
// DeadlineExceeded is the upstream's slowness, and counts as a failure. WithSkipper lets
// calls through without entering the Guard (health checks, reflection).
// WithCost makes a call take several permits (core.WithCount), from its
// request message. A param of extractors.WithContextParam reads a value an
// earlier interceptor (authentication, say) stored in the call's context.
//
// Leaky-bucket rules make calls wait for their turn; a wait ends with the
// call's context, and the call then fails with codes.Canceled or
// codes.DeadlineExceeded.
//
// # Blocked calls
//
// A blocked call never reaches the handler. It fails with
// BlockedStatus(b), whose code and details depend on what blocked it:
//
//   - a rate or concurrency limit: codes.ResourceExhausted, for both, with
//     a google.rpc.RetryInfo detail whose retry delay is the BlockedError's
//     RetryAfter (rate limits only): the latest time any rule that rejected
//     the call allows, a google.rpc.ErrorInfo of reason RATE_LIMITED or
//     CONCURRENCY_LIMITED and a google.rpc.QuotaFailure naming every rule
//     that rejected it;
//   - a call that can never pass (a rule's limit for it is 0, as for a
//     hotspot value overridden to 0, or below the permits it asks for):
//     codes.ResourceExhausted with no RetryInfo, an ErrorInfo of reason
//     WILL_NOT_PASS (ReasonWillNotPass) and the QuotaFailure;
//   - an open circuit breaker (a rule of kind breaker, which opens when the
//     method's recent calls failed or were slow): codes.Unavailable, since
//     the method is failing whoever calls, not the caller over a quota, and
//     Unavailable is the code clients and retry policies treat as
//     transient. Its details are a google.rpc.RetryInfo whose retry delay is
//     the time until the breaker lets a probe through (while it is
//     half-open with every probe out, until the probes' deadline) and a
//     google.rpc.ErrorInfo of reason CIRCUIT_OPEN (ReasonCircuitOpen) with
//     metadata rule, resource and kind ("breaker"); there is no
//     QuotaFailure, a breaker being no quota.
//
// The interceptor also sets the grpc-retry-pushback-ms trailer to
// RetryAfter in milliseconds, rounded up, so that a gRPC client with a
// retry policy waits at least as long as RetryInfo says; for a call that
// can never pass it sets it to -1, which tells such a client not to retry
// at all (gRFC A6).
// Concurrency limits have no retry time (RetryAfter 0): their calls get
// neither RetryInfo nor the trailer, and a retrying client falls back to its
// own backoff. WithBlockHandler replaces the status; the trailer is set
// anyway. A service that wants clients to try another instance when a
// concurrency rule (a server at capacity, whoever calls) blocks them can
// return codes.Unavailable for Kind core.KindConcurrency from its block
// handler, as the HTTP adapters answer 503 there.
//
// Outcomes are what opens and closes a breaker: by default every call
// that ends with a code other than OK counts as failed (see "Entries and
// outcomes"), and the Guard measures each call's response time.
//
// # Clients
//
// The client interceptors limit outgoing calls with the same rules (the
// resource is the full method) and return the same status locally, without
// calling the server: ResourceExhausted for a limit, Unavailable for an
// open breaker, which on a client keeps calls away from a server whose
// answers keep failing; a grpc.Trailer call option receives the pushback
// trailer. An outgoing stream's entry lasts until the stream
// ends (see Interceptors.StreamClient). With WithThrottle (package
// throttle) the client also throttles itself while the server answers
// ResourceExhausted or Unavailable (not gRPC's own ResourceExhausted for a
// message over a size limit, which says nothing of its load), and pauses for the retry time it
// gives while it rejects most calls; a call the throttle rejects gets Unavailable without reaching the
// server.
//
// # Construction
//
// New validates its options and returns an error naming a bad one, or an
// Extractor other than the one given to the Guard (extractors.ForAdapter),
// and adds the Extractor's gRPC params to the Guard's param sources
// (core.ParamSource): a hotspot rule naming a param that no source of the
// Guard supplies, such as a misspelt custom param, is an error of New, and
// is refused by every later SetRules and reload, which keep the rules in
// force. UnaryServerInterceptor and the three other
// constructors call New and panic with its error, or when the Guard is nil,
// at construction, before any call: a misconfigured server fails at
// start-up.
//
// # Cost
//
// On the pass path the interceptors format nothing and allocate nothing of
// their own. A call's params are gathered only when a rule deciding it
// reads them (core.Guard.EnterLazy), in a holder from a pool of the
// Interceptors' (the Guard uses it only during Enter): the rules that
// decide the call are the ones asked, so a call arriving while SetRules
// replaces the rules is never decided by rules that read params without
// them.
// Reading a metadata param costs one allocation, grpc-go's: its
// metadata.ValueFromIncomingContext, the one way to read one incoming key,
// returns a copy of the values. Metadata is read only for a param a
// matching rule names.
//
// The unary server interceptor adds 3-5 ns of CPU time per call to the
// Guard's Enter and Exit (BenchmarkUnarySluiceFlow less
// BenchmarkUnarySluiceCore, one flow rule, eight incoming metadata
// headers, interleaved rounds on 2 busy AMD EPYC vCPUs), most of it the
// deferred Exit that keeps a panicking handler's call counted. A call with
// WithSkipper or WithCost takes the path the other interceptors share (with
// a cost of 1, 15 ns more in the same runs). To measure it:
//
//	go -C adapters/grpc/internal/peerbench test -run '^$' -bench 'UnarySluice(Flow|Core)' -benchmem .
package sluicegrpc
