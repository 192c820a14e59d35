// Package sluiceenvoy serves Envoy's rate limit service (RLS v3,
// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit) from a sluice
// Guard, so that Envoy, Istio, Envoy Gateway, Contour and Emissary limit the
// services behind them, whatever their language, with sluice's algorithms,
// stores and dashboard. Command sluice-rls (cmd/sluice-rls) runs one;
// README.md shows the Envoy configuration that asks it.
//
//	g, _ := core.New(core.WithShadowQuotas())
//	cfg, _ := sluiceenvoy.LoadFiles("/etc/ratelimit/config")
//	s, _ := sluiceenvoy.New(g, cfg)
//	s.Register(grpcServer)
//
// The Server owns the Guard's rules: New and SetConfig set them from a
// Config, and a Watcher keeps them in step with config files, polling on
// the Guard's clock (WatcherOptions.Clock); a change made to the files
// between LoadFiles and NewWatcher applies at its first polls
// (TestWatcherAppliesChangeBeforeStart). A config with
// a problem is refused whole, with every problem named (file, line, field),
// and the config in force stays; the counts of the limits a new config keeps
// carry over.
//
// # The envoyproxy/ratelimit config format
//
// A YAML file per domain, unchanged: domain, and nested descriptors with
// key, optional value, rate_limit (unit second, minute, hour, day, week,
// month (30 days) or year (365 days); requests_per_unit; unlimited; name;
// replaces), descriptors and shadow_mode. Matching follows the reference
// server's code (src/config/config_impl.go at 3fb7025, the version the oracle test builds), which differs
// from its README in places:
//
//   - A descriptor's entries are matched level by level: at each, the child
//     whose key_value is the entry's, else the first child (in file order)
//     with a '*' whose key_value matches (a '*' anywhere in the key or value
//     matches any run of characters, not only a trailing one), else the child
//     with the entry's key and no value.
//   - A limit applies only when it is at the depth of the request's last
//     entry: a descriptor with fewer or more entries than the path to a limit
//     is not limited by it.
//   - Nodes are named key_value, so a request entry with the key "a" and the
//     value "b" matches the descriptor with the key "a_b" and no value, as in
//     the reference server.
//   - A descriptor that matches a node without rate_limit is not limited
//     (whitelisted); requests_per_unit 0 rejects every request.
//   - replaces: a limit whose name another matched limit of the same request
//     replaces is not applied (its status is OK, without current_limit).
//
// Each limit becomes a rule named after its path, as the reference names its
// statistics ("edge.remote_address", "edge.tenant.plan_gold"; bytes rule
// names do not allow, '*' and '/' among them, are written '_'; a path two
// limits share, such as domain a's b.c and domain a.b's c, takes #2 for the
// later one, and a reload leaves each limit its name, counts and statistics
// whatever domains it adds: TestReloadKeepsEachLimitItsName). A limit whose
// path has only exact values is a flow rule: one count, the leap-array
// algorithm (a sliding window of 10 buckets). A limit whose path has a node
// without value or with a '*' is a hotspot rule keyed by the request's
// entries, one count per distinct descriptor as in the reference, in
// hotspot's bounded table (MaxKeys, 100,000 by default; a value evicted
// while limited keeps its debt): the token-bucket algorithm in memory, which
// refills continuously (Limit per unit, no burst above Limit). With a Store
// (WithRuleDefaults), the flow rules are sliding counters in the store and
// the hotspot rules token buckets in the store. The algorithm
// can be chosen per limit with the sluice extension key (which the reference
// server would refuse):
//
//	rate_limit: {unit: minute, requests_per_unit: 100, sluice: {algorithm: sliding-log}}
//
// share_threshold, on a descriptor with a '*', makes every value it matches
// share one count, as in the reference. detailed_metric and value_to_metric
// are accepted and change nothing: they only name the reference's
// statistics (see DescriptorStats). quota_mode and metadata are refused, as
// are two files of one domain (the reference's MERGE_DOMAIN_CONFIG is not
// implemented).
//
// # sluice rules files
//
// A domain that no envoyproxy/ratelimit file has is served from sluice rules
// (Config.Rules, rules files among the config files): a descriptor is the
// resource named by the domain and its entries' keys joined by '/', and each
// entry's value is the param named by its key. So the descriptor
// [(user, alice)] of domain api enters the resource "api/user" with the param
// user = "alice", which these rules limit:
//
//	rules:
//	  - resource: api/user          # every user, 100 a minute each
//	    kind: hotspot
//	    param: user
//	    limit: 100
//	    window: 1m
//	    overrides: {ci-bot: 1000}
//	  - resource: api/*             # every descriptor of api together
//	    kind: flow
//	    limit: 5000
//
// A hotspot rule on a resource without '*' whose param is none of its keys
// would limit nothing, and is refused (unless its onMissing is shared or
// reject). Any kind of rule applies (a concurrency limit is released at
// once: a ShouldRateLimit call is its whole request) but breakers, which
// are refused: a call has no outcome that could open one. A domain is known when a rule's
// resource names it (the text before its first '/', or a glob matching it);
// keys with '/' or '*' are refused in those domains.
//
// Sluice rules limit the descriptors of these domains only: a rule's
// resource must have a '/' after a domain, and no empty key (New and
// SetConfig refuse "*", "api", "/api/user" or "api/", naming the rule) and
// must not name a domain that an envoyproxy/ratelimit file
// has ("edge/user" beside edge.yaml, which would never apply), and the
// resources of the envoyproxy/ratelimit limits
// ("edge.remote_address") and of descriptors' limit overrides
// ("override:100-per-60s") have none, so that no glob reaches them; "*/*"
// is every descriptor of every domain of sluice rules
// (TestRulesStayInTheirDomains). A descriptor that no rule matches is OK,
// without limit, and makes no resource of the Guard; each distinct one a
// glob rule matches is a resource (its statistics, not its decision),
// within the Guard's bound (core.WithMaxResources, 10,000 by default),
// beyond which they share core.OverflowResource's statistics
// (TestUnmatchedDescriptorsMakeNoResource). The limits of the config, of
// exact-named rules and of overrides have resources of their own, made
// when they are set, which no such flood takes: after 10,240 client-chosen
// descriptors in 160 requests, the limits asked afterwards, and one a reload
// added, count their own requests (TestFloodLeavesConfiguredLimitsTheirStatistics;
// sluice-rls's /metrics: TestFloodLeavesConfiguredLimitsTheirMetrics). So
// does the dashboard's history, which keeps every configured limit's and
// up to 1,000 others', those first seen: after 1,152 client-chosen
// descriptors, the limits asked afterwards have a history of their own
// (TestFloodLeavesConfiguredLimitsTheirHistory).
//
// # The request
//
// Every descriptor is decided, in order, each by its own Guard.Enter; the
// answer is OVER_LIMIT when any is rejected. The cost of a descriptor is its
// hits_addend when set, else the request's, else 1. A descriptor's limit
// field replaces its config's limit with a hotspot rule of that limit per
// that unit (times unit_multiplier), one per distinct limit (at most
// WithMaxOverrides), keyed by domain and entries. Each status has the code,
// current_limit (the config's; for sluice rules the rule's limit per the
// unit its window is, or per second with unit_multiplier), limit_remaining
// and duration_until_reset: for an admitted descriptor the time until its
// quota is whole again, for a rejected one the time after which it would be
// admitted. An unlimited descriptor has limit_remaining 4294967295; one that
// no limit matches has neither limit nor remaining, as in the reference.
//
// response_headers_to_add carries the RateLimit-Policy and RateLimit fields
// (draft-ietf-httpapi-ratelimit-headers), as the HTTP adapters write them,
// of every limited descriptor
// (WithoutRateLimitHeaders removes them), and with WithXRateLimitHeaders the
// X-RateLimit-Limit, -Remaining and -Reset headers of draft 03, as Envoy's
// filter writes them with enable_x_ratelimit_headers. An OVER_LIMIT answer
// also carries Retry-After (unless the request can never pass, or only a
// limit on requests in flight rejected it, which has no retry time),
// Content-Type application/problem+json and, as raw_body, the problem
// document the HTTP adapters send with a 429.
//
// Envoy lets a request through when the service answers an error, or
// nothing within the filter's timeout (the call's gRPC deadline, 20 ms by
// default), unless failure_mode_deny is set; the server answers with a
// decision where it can:
//
//   - A request has at most 64 descriptors (WithMaxDescriptors; sluice-rls
//     -max-descriptors): deciding 20,000 took 92 ms. One with more is
//     OVER_LIMIT, deciding and counting none, with a problem document
//     naming the bound and no Retry-After: Envoy answers 429 whatever its
//     failure_mode_deny (TestMaxDescriptors; about 0.16 ms and 165 kB for
//     20,000 descriptors: go test -run XXX -bench ShouldRateLimit/beyond
//     -benchmem). Before, it was an error, which Envoy lets through
//     unlimited unless failure_mode_deny is set; a route whose rate_limits
//     make more descriptors needs a higher bound. So is a request whose
//     limit override would be one distinct limit more than
//     WithMaxOverrides (64; sluice-rls -max-overrides) allows, which was
//     ResourceExhausted (TestMaxOverrides).
//   - Shadow mode: these bounds refuse a request only when a limit that is
//     not in shadow mode may apply to it (a limit of its domain, a sluice
//     rule whose resource may name its domain, or a limit override, which
//     is never in shadow mode, as in the reference, unless core.WithShadow
//     makes every rule a shadow rule), and their problem document says so.
//     Otherwise the request is OK, none of its descriptors decided, and an
//     override beyond WithMaxOverrides is OK without limit, the others
//     decided (TestBoundsInShadowMode).
//   - A leaky-bucket rule with a maxWait makes a call wait for its turn,
//     for at most three quarters of the time left before the call's
//     deadline: a later turn is given back and the descriptor answered
//     OVER_LIMIT then, so that Envoy never lets a request the bucket paces
//     through on its timeout (TestWaitBeyondDeadlineIsOverLimit: a turn 10 s
//     away, a call of 4 s answered after 3 s). The answer carries what the
//     other refusals carry; its retry time is the rule's maxWait, the
//     latest the turn could have been (the turn itself is not known).
//
// An empty domain, no descriptors, a descriptor without entries or with an
// empty key, or one of a domain of sluice rules whose resource is over 1024
// bytes (a rule's longest) get the gRPC error InvalidArgument, an unknown
// domain NotFound
// (WithUnknownDomainOK answers OK instead, as the reference does), each with
// a message saying what is wrong.
//
// # Differences from envoyproxy/ratelimit
//
// The oracle test (internal/oracle, TestSameAnswersAsReference) sends the
// same requests to the reference server, built from its module, and to this
// one, with one config: codes, limits and remaining counts agree, for nested
// descriptors, wildcards, share_threshold, replaces, unlimited, whitelisted
// and blocked (0) descriptors, hits_addend and shadow mode (with
// core.WithShadowQuotas). The deliberate differences:
//
//   - Windows slide or refill: no window boundary lets twice the limit
//     through, and duration_until_reset is not the time to the end of a
//     clock-aligned window.
//   - A rejected hit is not counted: the reference counts every hit, so a
//     request whose cost is above what remains uses up the window, and later
//     smaller ones are rejected too; here they pass while quota remains.
//   - A descriptor's limit override has a count of its own; the reference
//     shares the count of the config's limit of the same descriptor.
//   - A limit per year is refused (New, SetConfig): a window is at most 52
//     days, 30 with a Store. So is a descriptor's limit override longer
//     than that (InvalidArgument).
//   - hits_addend 0 on a descriptor (check without counting) and
//     is_negative_hits are refused (InvalidArgument); the reference checks
//     without counting and refunds.
//   - A request of more than 64 descriptors is OVER_LIMIT (see The
//     request); the reference decides them all.
//   - Errors: an unknown domain is NotFound (see WithUnknownDomainOK); a bad
//     request InvalidArgument, where the reference answers Unknown.
//   - Statistics: Server.DescriptorStats counts each limit's hits under the
//     reference's names (total_hits, over_limit, near_limit, within_limit,
//     shadow_mode), which sluice-rls exports to Prometheus as the
//     reference's default statsd mapping names them
//     (ratelimit_service_rate_limit_total_hits{domain, key}), beside
//     sluice's own metrics; there is no statsd output.
//
// # Guarantees and figures
//
// N callers asking at once for one descriptor are admitted exactly its limit
// (TestConcurrencyBound: 64 callers, limit 20, flow and hotspot rules); two
// sluice-rls instances on one Redis in exact mode admit the limit together
// (cmd/sluice-rls TestRedisExactSharedByInstances: 40 callers, limit 30). A
// config that fails to load leaves the one in force serving
// (TestReloadWhileServing). No request that an enforced limit may limit is
// let through unlimited for having too many descriptors or a turn beyond
// Envoy's timeout (see The request),
// and no flood of client-chosen descriptors takes the statistics of a
// configured limit (see sluice rules files).
//
// A limit of the config that no request asked yet takes about 1.9 kB of
// heap on 1 CPU and 2.8 kB on 16 (10,000 exact-named limits: 28 MB;
// TestMemoryPerLimit, go test -run TestMemoryPerLimit -v .): the per-CPU
// statistics stripes of its resource and rule are made at its first
// request, about 0.8 kB a CPU more (it was 14.4 kB on 16 CPUs, 144 MB).
//
// A decision without gRPC costs about 0.65 µs and 2 allocations for a limit
// of fixed values (flow), 0.85 µs and 3 for a per-address limit over 1,000
// addresses (hotspot), in memory (go test -run XXX -bench ShouldRateLimit
// -benchmem, same VM; TestRequestPathAllocations holds the counts): the
// response is allocated whole. Over gRPC the server's gRPC stack costs ten
// times more. Measured with
//
//	cd adapters/envoy/internal/oracle && go run ./rlsbench -d 10s -c 16
//
// on a 2-core VM loaded by other work (the ratios matter, not the absolute
// figures; the servers are called in alternating rounds, the reference with
// LOG_LEVEL=error and Prometheus statistics), sluice-rls's calls per server
// CPU second against envoyproxy/ratelimit's over three runs: exact mode
// 1.92-2.10x, approximate 3.16-3.52x, memory 4.02-4.51x, every p99 below
// the reference's. rlsbench's grpc-floor, a server that answers at once on
// grpc-go, reaches 4.96-5.75x: grpc-go's own cost per call (12-13 µs here,
// against 66-74 µs for the reference's whole call) leaves approximate
// mode's 6x target out of reach whatever the decision costs. The module's
// README breaks a call's CPU down, server by server.
package sluiceenvoy
