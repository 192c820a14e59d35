package core

import (
	"time"

	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/hotspot"
	"github.com/sluicekit/sluice/core/store"
)

// Kind is the kind of a rule.
type Kind string

// The rule kinds.
const (
	// KindFlow limits the request rate of a resource.
	KindFlow Kind = "flow"
	// KindConcurrency limits the number of requests of a resource in flight.
	KindConcurrency Kind = "concurrency"
	// KindHotspot limits each value of a request parameter separately.
	KindHotspot Kind = "hotspot"
	// KindBreaker is a circuit breaker: it watches the outcomes of a
	// resource's requests and rejects them all for a while when too many
	// are slow or fail (package breaker).
	KindBreaker Kind = "breaker"
	// KindAdaptive limits the number of requests of a resource in flight
	// to a limit it finds from their response times: it rises while they
	// stay near their minimum and falls when they grow (see
	// AdaptiveStats).
	KindAdaptive Kind = "adaptive"
	// KindSystem protects the service by a signal of its own load (see
	// Signal): it sheds requests while the signal is above the rule's
	// Threshold.
	KindSystem Kind = "system"
)

// Rule is one limit on the resources its Resource matches. A rules file
// (package rulesfile) has one field per Rule field, named as in the json tags.
// Zero fields take their documented defaults; fields that do not apply to a
// rule's Kind or Algorithm must be zero.
type Rule struct {
	// Name identifies the rule in errors, RateLimit fields, problem bodies,
	// metrics and logs, written the same in each: ASCII letters, digits and
	// -_.:/{}*$#(), at most 200 bytes. Optional; when empty a name is
	// derived from Kind and Resource ("flow:GET:/items/{id}"). Names are
	// unique within a rule set.
	Name string `json:"name,omitempty"`
	// Resource is a resource name, or a glob in which each '*' matches any
	// run of characters, '/' included: "GET /items/{id}", "GET /items/*",
	// "/pkg.Svc/*", "*". HTTP resources are "METHOD TEMPLATE" with
	// net/http's ServeMux wildcards; a template without a method
	// ("/items/{id}") applies to every method, and a gRPC full method
	// ("/pkg.Svc/Method") to that method. A lowercase method, gin and echo
	// parameters (":id") and catch-alls ("*name") are normalized; the error
	// of what is refused says what to write.
	Resource string `json:"resource"`
	Kind     Kind   `json:"kind"`
	// Limit is requests per Window (flow, hotspot) or requests in flight
	// (concurrency). 0 blocks every request.
	Limit int64 `json:"limit"`
	// Window is the period Limit applies to (flow, hotspot; default 1s),
	// the span of a breaker's statistics (default 10s), or how often an
	// adaptive rule reconsiders its limit, from the response times of the
	// requests that ended in it (default 100ms).
	Window time.Duration `json:"window,omitempty"`
	// Algorithm is one of the Algorithm constants: for flow rules any but
	// concurrency (default leap-array), for hotspot rules token-bucket
	// (default), leaky-bucket or concurrency.
	Algorithm Algorithm `json:"algorithm,omitempty"`
	// Buckets is the number of leap-array buckets of a flow rule or a
	// breaker's statistics. Default 10.
	Buckets int `json:"buckets,omitempty"`
	// Burst is the number of token-bucket tokens above Limit.
	Burst int64 `json:"burst,omitempty"`
	// MaxWait is the longest a leaky-bucket request may queue for its turn.
	MaxWait time.Duration `json:"maxWait,omitempty"`
	// Warmup ramps a flow limit from Limit/ColdFactor to Limit.
	Warmup     time.Duration `json:"warmup,omitempty"`
	ColdFactor int           `json:"coldFactor,omitempty"`
	// Param names the request value a hotspot rule limits by, e.g.
	// "header:X-User-ID", "query:tenant", "ip".
	Param string `json:"param,omitempty"`
	// MaxKeys bounds the number of param values a hotspot rule tracks; a
	// value evicted while it is still limited keeps its debt (see package
	// hotspot).
	MaxKeys int `json:"maxKeys,omitempty"`
	// Overrides gives specific param values their own limit; 0 blocks the
	// value.
	Overrides map[string]int64 `json:"overrides,omitempty"`
	// OnMissing is what a hotspot rule does with a request that lacks its
	// param (no value, or no WithParams): MissingSkip (empty means skip),
	// MissingReject or MissingShared.
	OnMissing OnMissing `json:"onMissing,omitempty"`

	// Store names the shared store that keeps a flow or hotspot rule's
	// counts, one given to the Guard with WithStore, so that the limit
	// holds for every Guard (every instance) using that store together.
	// Empty: the Guard's own memory. With a store, a flow rule uses the
	// algorithm sliding-counter (its default there), token-bucket or
	// leaky-bucket, a hotspot rule token-bucket (its default, as without a
	// store: "100 per minute" admits 100 at once, then one every 0.6s) or
	// leaky-bucket; neither has a warmup.
	Store string `json:"store,omitempty"`
	// Mode is how the store decides: store.Exact (default; a round trip per
	// decision) or store.Approximate (local decisions, counts synchronized
	// periodically; see package store).
	Mode store.Mode `json:"mode,omitempty"`
	// OnFailure is what the rule does while its store fails: FailLocal
	// (default), FailOpen or FailClosed.
	OnFailure FailurePolicy `json:"onFailure,omitempty"`
	// LocalLimit is the limit per Window this process applies while the
	// store fails and OnFailure is local: its share of Limit (say Limit
	// divided by the number of instances). Default Limit. A hotspot rule's
	// overrides get the same share (LocalLimit/Limit of theirs, at least 1).
	LocalLimit int64 `json:"localLimit,omitempty"`

	// Strategy is what a breaker trips on: breaker.SlowRatio,
	// breaker.ErrorRatio or breaker.ErrorCount; for a system rule of
	// signal cpu, StrategyBBR.
	Strategy breaker.Strategy `json:"strategy,omitempty"`
	// Threshold trips a breaker: a ratio in (0, 1] of slow or failed
	// requests, or a number of failed requests (error-count). For a system
	// rule it is the highest value of its Signal at which it admits
	// requests (see Signal for the units).
	Threshold float64 `json:"threshold,omitempty"`
	// MaxRT is the response time above which a request is slow
	// (slow-ratio).
	MaxRT time.Duration `json:"maxRT,omitempty"`
	// MinRequests is the number of requests that must complete in a
	// breaker's window before it may trip. Default 10.
	MinRequests int64 `json:"minRequests,omitempty"`
	// OpenFor is how long an open breaker rejects requests before it lets
	// probes through (half-open), and how long a probe may take. Default 5s.
	// At most 2^52 ns (about 52 days).
	OpenFor time.Duration `json:"openFor,omitempty"`
	// Probes is the number of requests a half-open breaker lets through;
	// all must succeed for it to close. Default 1.
	Probes int64 `json:"probes,omitempty"`

	// MinLimit and MaxLimit bound the limit of an adaptive rule on
	// requests in flight. Defaults 2 (or MaxLimit when lower) and 1000
	// (or MinLimit when higher). At most 2^52.
	MinLimit int64 `json:"minLimit,omitempty"`
	MaxLimit int64 `json:"maxLimit,omitempty"`
	// Tolerance is how many times its lowest response time an adaptive
	// rule lets the recent one be before its limit falls: above 1, at
	// most 100; default 1.5. Lower keeps requests from queueing more, at
	// the risk of a limit too low for a service whose response times
	// vary.
	Tolerance float64 `json:"tolerance,omitempty"`
	// ProbeInterval is the longest time between two probes of an adaptive
	// rule for its lowest response time, which lower its limit for a few
	// Windows, to what nothing queues at if that time was right. At least
	// Window; default 30s.
	ProbeInterval time.Duration `json:"probeInterval,omitempty"`

	// Signal is what a system rule watches (see Signal).
	Signal Signal `json:"signal,omitempty"`
	// Priority names the param a request's level is read from (see
	// Priority), for system and adaptive rules, e.g. "header:X-Priority":
	// under overload they shed the lower levels first. Empty: every
	// request's level is the one WithPriority gave its context, else
	// PriorityDefault.
	Priority string `json:"priority,omitempty"`
	// Shadow makes the rule evaluated and counted as if enforced, but
	// never enforced: a request it would reject goes on (see WithShadow).
	// Changing Shadow alone keeps the rule's state and counts.
	Shadow bool `json:"shadow,omitempty"`
}

// Signal is what a system rule (KindSystem) watches: it sheds requests
// while the signal is above the rule's Threshold. The signals qps,
// inflight and rt are counted by the rule itself over the requests it
// applies to (all of them for resource "*"); cpu and load are the host's,
// read every half second off the request path (see WithSystemSource).
type Signal string

// The signals of system rules, and what their Threshold is.
const (
	// SignalQPS is the number of requests admitted over the last second.
	SignalQPS Signal = "qps"
	// SignalInFlight is the number of requests in flight.
	SignalInFlight Signal = "inflight"
	// SignalRT is the average response time of the requests completed
	// over the last fifth of a second (two tenths), in milliseconds: once
	// it is above the threshold, and for a second after it was or the
	// rule last shed a request, requests are admitted while those in
	// flight stay under the completions per second of the last second
	// times the threshold (Little's law), plus one, which holds the
	// response time about at the threshold with the service busy.
	SignalRT Signal = "rt"
	// SignalCPU is the service's own CPU usage, a fraction in (0, 1]:
	// its cgroup's usage over the CPU quota that binds it (the smallest
	// on its cgroup or a parent, cgroup v1 or v2), or, with no quota, the
	// process's CPU time over the CPUs it may use (GOMAXPROCS); never the
	// whole machine's, so that busy neighbours do not shed a service
	// under its capacity. While it is above the threshold every request
	// is shed, or, with StrategyBBR, those that would raise the requests
	// in flight above what the rule's recent throughput sustains.
	SignalCPU Signal = "cpu"
	// SignalLoad is the 1-minute load average (/proc/loadavg); while it is
	// above the threshold every request is shed.
	SignalLoad Signal = "load"
)

// OnMissing is what a hotspot rule does with a request that lacks its param
// (Rule.OnMissing).
type OnMissing string

// The OnMissing policies.
const (
	// MissingSkip does not limit the request by the rule.
	MissingSkip OnMissing = "skip"
	// MissingReject rejects the request: it will never pass
	// (BlockedError.Never), and counts as a block of the rule.
	MissingReject OnMissing = "reject"
	// MissingShared limits all the requests that lack the param together,
	// as one value no request can send (its state is the rule's limit,
	// overrides aside).
	MissingShared OnMissing = "shared"
)

// Algorithm is the algorithm of a flow or hotspot rule (Rule.Algorithm),
// named as in a rules file: store.Algorithm, the one algorithm type of the
// Guard and its stores.
type Algorithm = store.Algorithm

// The rule algorithms. Flow rules take all but AlgorithmConcurrency;
// hotspot rules take AlgorithmTokenBucket, AlgorithmLeakyBucket and
// AlgorithmConcurrency.
const (
	AlgorithmLeapArray      Algorithm = "leap-array"
	AlgorithmFixedWindow    Algorithm = "fixed-window"
	AlgorithmSlidingLog     Algorithm = "sliding-log"
	AlgorithmSlidingCounter Algorithm = "sliding-counter"
	AlgorithmTokenBucket    Algorithm = "token-bucket"
	AlgorithmLeakyBucket    Algorithm = "leaky-bucket"
	AlgorithmConcurrency    Algorithm = "concurrency"
)

// FailurePolicy is what a rule with a store does while its store fails
// (Rule.OnFailure).
type FailurePolicy string

// The failure policies.
const (
	// FailLocal decides on Rule.LocalLimit in this process alone.
	FailLocal FailurePolicy = "local"
	// FailOpen admits every request.
	FailOpen FailurePolicy = "open"
	// FailClosed rejects every request.
	FailClosed FailurePolicy = "closed"
)

// flowConfig returns the flow.Config of a flow rule.
func (r *Rule) flowConfig() flow.Config {
	return flow.Config{Algorithm: flow.Algorithm(r.Algorithm), Limit: r.Limit, Window: r.Window, Buckets: r.Buckets,
		Burst: r.Burst, MaxWait: r.MaxWait, Warmup: r.Warmup, ColdFactor: r.ColdFactor}
}

// hotspotConfig returns the hotspot.Config of a hotspot rule.
func (r *Rule) hotspotConfig() hotspot.Config {
	return hotspot.Config{Algorithm: hotspot.Algorithm(r.Algorithm), Limit: r.Limit, Window: r.Window, Burst: r.Burst,
		MaxWait: r.MaxWait, MaxKeys: r.MaxKeys, Overrides: r.Overrides}
}
