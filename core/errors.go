package core

import (
	"errors"
	"time"
)

// ErrBlocked is the error every BlockedError matches with errors.Is.
var ErrBlocked = errors.New("sluice: blocked")

// Reasons Totals.BlockedBy counts refused requests under that are no
// kind's, BlockReasons' last two: ReasonFallback for the blocks of a
// store's failure policy (BlockedError.Fallback), ReasonCancelled for the
// requests whose context ended while they waited for their turn.
const (
	ReasonFallback  = "fallback"
	ReasonCancelled = "cancelled"
)

const reasonFallback, reasonCancelled = maxReasons - 2, maxReasons - 1 // their indexes in blockReasons

// BlockedError is the error Enter returns when rules reject a request, with
// what an adapter puts in the response (see "Blocked requests" in the
// package doc for which rules are asked). Enter may return the same
// BlockedError for several requests rejected alike: it must not be changed.
type BlockedError struct {
	Resource string // the resource entered
	// Rule is the name of the rule that decided the response: one that
	// never lets the request pass (see Never), else the rejecting rule
	// whose retry time is the latest (the first of those on a tie).
	Rule  string
	Kind  Kind   // that rule's kind
	Param string // for hotspot rules, the param limited (Rule.Param)
	// Limit is that rule's quota (Quota.Limit: the configured limit, with
	// a token bucket's burst; requests in flight for concurrency).
	Limit int64
	// Window is the period of Limit (Quota.Window); 0 for concurrency
	// limits (of kind concurrency, or hotspot with algorithm concurrency).
	Window    time.Duration
	Remaining int64 // that rule's quota left at the decision, at most Limit
	// RetryAfter is the latest of the times after which each rejecting
	// rule would admit the same request if nothing else arrived, rounded
	// up to the millisecond: the earliest a retry may pass, as far as the
	// state at the decision can tell. A concurrency limit adds none (a
	// slot frees whenever a request in flight ends), so RetryAfter is 0
	// when only such limits rejected. For a breaker (Kind KindBreaker;
	// Limit, Window and Remaining 0) it is the time until the breaker lets
	// probes through, or, while it is half-open with every probe out, until
	// the probes' deadline. It is 0 when Never is true.
	RetryAfter time.Duration
	// Fallback is true when the rule keeps its counts in a store that
	// failed, and the rejection is its failure policy's (closed, or the
	// local limit): see Guard.Stores.
	Fallback bool
	// Never is true when the request can never pass, however long it
	// waits: a rule's limit for it is 0 (a limit of 0, a hotspot value
	// overridden to 0) or below the permits it asks for (WithCount above a
	// rule's capacity: its limit, plus a token bucket's burst). Adapters
	// then give no retry time, so that clients do not retry.
	Never bool
	// Policies are the quota policies of the request, in rule order: one
	// for every rate rule (flow or hotspot, not concurrency) that applied
	// to it, and for every concurrency limit that rejected it. Those that
	// rejected it have Blocked set, and their Reset is their own retry
	// time. Breakers and system rules have none: they are no quota.
	Policies []Quota
	class    *BlockClass // how it is answered (Class); nil when made outside a Guard
}

// Quota is one quota policy of a request after a decision, as the
// RateLimit header fields describe it: a rate limit (flow or hotspot rule)
// admits Limit requests per Window; a concurrency limit (Window 0) admits
// Limit requests in flight.
type Quota struct {
	Rule string // the rule's name
	// Limit is the rule's configured limit (a warm-up ramp's lower limit
	// in force is not advertised: Remaining shows it), with a token
	// bucket's burst: the most requests the rule ever admits at once.
	Limit int64
	// Window is the period of Limit: the rule's window, or, for a token
	// bucket with a burst, the time it takes to refill Limit tokens, so
	// that Limit per Window is the bucket's rate. 0 for concurrency.
	Window time.Duration
	// Remaining is the quota left after the decision (before it, for a
	// request that was rejected): at most Limit.
	Remaining int64
	// Reset is an upper bound on the time until the full quota is available
	// again if no request arrives: the window for window algorithms, the
	// time to refill the bucket for token and leaky buckets. For a rule
	// that rejected the request (Blocked) it is instead the time after
	// which it would admit it, rounded up to the millisecond, 0 if it
	// never will or is a concurrency limit; and for a rate limit that
	// admitted the request but has no quota left (Remaining 0), the
	// time from when the request proceeds until it would admit the next,
	// rounded up to the millisecond: what a rejection right after it says.
	Reset   time.Duration
	Blocked bool // the rule rejected the request (in BlockedError.Policies only)
}

// BlockClass is how the blocks of a kind of rule are answered, which the
// adapters read (BlockedError.Class) rather than the kind: a request that
// can never pass (BlockedError.Never) is answered as such whatever its
// class.
type BlockClass struct {
	// Status is the HTTP status: 429 Too Many Requests for a quota the
	// client exceeded, 503 Service Unavailable for a server that cannot
	// take the request now, whoever sends it.
	Status         int
	Problem, Title string // the problem type (RFC 9457) of the response body, and its title
	GRPCCode       uint32 // the gRPC status code: 8 ResourceExhausted, 14 Unavailable
	Reason         string // of the google.rpc.ErrorInfo detail of a gRPC status ("RATE_LIMITED", ...)
	// Quota is true for the blocks of a quota policy: they carry
	// RateLimit fields, the limit and the rules that rejected. Blocks of
	// a rule that is none (a breaker, a system rule) carry only a retry
	// time, and Detail.
	Quota bool
	// Detail is the problem detail of a block that is no quota's, a
	// format of the resource and the rule's name:
	// `%s is failing: circuit breaker "%s" is open`.
	Detail string
	says   string // the state a block that is no quota's names (shedBlock); "" for a quota
	// reason is the index in blockReasons that Totals.BlockedBy counts the
	// blocks under: the kind's, or for a kind of a Guard's own (WithKind)
	// the kind's of the rule enforcing it.
	reason int
}

// The problem types of blocked responses: those
// draft-ietf-httpapi-ratelimit-headers (section 10.2) asks IANA to
// register in the HTTP Problem Types registry.
const (
	problemQuotaExceeded   = "https://iana.org/assignments/http-problem-types#quota-exceeded"
	problemReducedCapacity = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
)

// The gRPC codes of BlockClass.GRPCCode.
const (
	grpcResourceExhausted = 8
	grpcUnavailable       = 14
)

// quotaBlock is the class of a quota exceeded: 429, ResourceExhausted.
func quotaBlock() BlockClass {
	return BlockClass{Status: 429, Problem: problemQuotaExceeded, Title: "Quota Exceeded",
		GRPCCode: grpcResourceExhausted, Reason: "RATE_LIMITED", Quota: true}
}

// capacityBlock is the class of a server that cannot take a request now,
// whoever sends it: 503 and the temporary-reduced-capacity problem type.
func capacityBlock(code uint32, reason string, quota bool, detail string) BlockClass {
	return BlockClass{Status: 503, Problem: problemReducedCapacity, Title: "Temporary Reduced Capacity",
		GRPCCode: code, Reason: reason, Quota: quota, Detail: detail}
}

// shedBlock is the class of a rule that is no quota, which sheds requests
// while its state lasts (a breaker, a system rule): 503, Unavailable, the
// problem detail detail, and says, that state, in BlockedError.Error.
func shedBlock(reason, detail, says string) BlockClass {
	c := capacityBlock(grpcUnavailable, reason, false, detail)
	c.says = says
	return c
}

// Is reports whether target is ErrBlocked.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }
