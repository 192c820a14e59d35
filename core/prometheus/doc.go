// Package sluiceprom exports a Guard's statistics to Prometheus, through
// github.com/prometheus/client_golang.
//
// NewCollector returns a prometheus.Collector to register in a registry of
// your own; Handler returns an http.Handler with a registry holding only
// that collector, for a service without one, to mount at /metrics:
//
//	h, err := sluiceprom.Handler(guard)
//	if err != nil {
//		return err
//	}
//	http.Handle("/metrics", h)
//
// Each scrape takes one core.Guard.Snapshot and turns it into const
// metrics: it costs time in proportion to the resources and rules (a
// dozen series per resource, roughly a microsecond and 11 allocations
// each, most of them client_golang's, and a response time histogram of 14
// classic series, about 5µs and 40 allocations), and never takes a lock
// that requests wait on. The collector keeps no state between scrapes, so
// counters are exactly the Guard's.
//
// # Metrics
//
// Names start with the namespace, "sluice" unless WithNamespace gives
// another; WithConstLabels adds labels to every series. The labels are
// resource names (route templates and gRPC methods, bounded by the Guard's
// resource bound, core.WithMaxResources, beyond which resources are counted
// under core.OverflowResource), rule names, kinds, block reasons, breaker
// states and store names: never a param value, so a flood of user IDs or
// client IPs adds no series.
//
// Per resource, from the first request the Guard saw for it:
//
//	sluice_requests_passed_total{resource}              counter  requests admitted (permits, with core.WithCount)
//	sluice_requests_blocked_total{resource,reason}      counter  requests blocked, by reason (see below); every
//	                                                             reason has a series, at 0 until it blocks one
//	sluice_requests_completed_total{resource}           counter  admitted requests that exited
//	sluice_requests_errors_total{resource}              counter  of those, the ones that failed (by default 5xx,
//	                                                             handler errors, non-OK gRPC codes)
//	sluice_response_time_seconds_total{resource}        counter  their total response time in seconds;
//	                                                             rate(this) / rate(completed) is the average
//	sluice_requests_in_flight{resource}                 gauge    admitted and not yet exited
//	sluice_request_duration_seconds{resource}           histogram their response times: classic buckets
//	                                                             (_bucket{le}, _sum, _count) at powers of 4 from
//	                                                             2^-15 s (about 30µs) to 32 s, and native buckets
//	                                                             of schema 0 (powers of 2, zero bucket up to
//	                                                             2^-17 s) for scrapers that ask for them
//
// Response times are measured on the monotonic clock; core.RTHistogram says
// which request counts in which bucket.
//
// The reasons are those core.Totals.BlockedBy counts by: flow,
// concurrency, hotspot, breaker, adaptive and system (the kind of the rule
// that blocked the request), fallback (a rule with a store blocked it by
// its failure policy while the store failed) and cancelled (its context
// ended while it waited for its turn in a leaky bucket).
//
// Per rule in force, from when the rule was first set (a rule that keeps
// its name, kind and resource across core.Guard.SetRules keeps its counts;
// a removed rule's series disappear). The resource label of a rule is the
// rule's Resource, an exact name or a glob:
//
//	sluice_rule_blocked_total{rule,kind,resource}       counter  requests the rule blocked
//	sluice_rule_shadow_blocked_total{rule,kind,resource} counter requests a shadow rule (core.Rule.Shadow)
//	                                                             would have blocked, which passed (rules that
//	                                                             are or were in shadow only)
//	sluice_rule_evaluated_total{rule,kind,resource}     counter  requests the rule was checked against
//	                                                             (core.RuleStats.Evaluated)
//	sluice_rule_resources{rule,kind,resource}           gauge    resources the rule applied to; 0 while it
//	                                                             matches no request
//	sluice_rule_unmatched{rule,kind,resource}           gauge    1 once the rule applied to no request for
//	                                                             core.WithUnmatchedAfter, else 0
//	sluice_rule_fallbacks_total{rule,kind,resource}     counter  decisions the rule made by its failure policy
//	                                                             because its store failed (rules with a store only)
//	sluice_rule_in_flight{rule,resource}                gauge    requests holding a slot (concurrency rules only)
//	sluice_rule_limit{rule,kind,resource}               gauge    the rule's limit in force (flow rules in memory,
//	                                                             concurrency and adaptive rules: core.RuleStats.Limit)
//	sluice_rule_usage{rule,kind,resource}               gauge    how much of it is taken now (RuleStats.Use):
//	                                                             usage / limit is the share in use
//	sluice_breaker_state{rule,resource,state}           gauge    1 for the state the breaker is in, 0 for the
//	                                                             other two; state is closed, open or half-open,
//	                                                             all three always there (breaker rules only)
//	sluice_breaker_trips_total{rule,resource}           counter  times the breaker opened (breaker rules only)
//
// Per store given with core.WithStore:
//
//	sluice_store_healthy{store}                         gauge    1 while the store works; 0 from a failed call
//	                                                             until a call succeeds again
//	sluice_store_errors_total{store}                    counter  calls to the store that failed
//	sluice_store_fallbacks_total{store}                 counter  decisions made by rules' failure policies
//	                                                             instead of the store
//
// For the Guard:
//
//	sluice_events_dropped_total                         counter  breaker changes that listeners
//	                                                             (core.WithBreakerListener) did not get because
//	                                                             their queue was full
//
// With WithWatcher, of the reloads of the rules file (package rulesfile):
//
//	sluice_rules_reloads_total{result}                  counter  loads of the file: success (applied, the
//	                                                             first included) or failure (refused)
//	sluice_rules_last_reload_successful                 gauge    1 while the rules in force are the file's, 0
//	                                                             while its last version is refused
//	sluice_rules_last_reload_success_timestamp_seconds  gauge    when the file was last applied (Unix time)
//	sluice_rules_last_reload_duration_seconds           gauge    how long the last load took
//
// The directory monitoring holds alerting rules (a rule blocking much of
// its traffic, a breaker open, a store down, a rule matching nothing, the
// rules file refused) with their promtool tests, and a Grafana dashboard.
//
// Label values are the names as they are, quotes, backslashes, newlines
// and any Unicode included (the exposition escapes them), except that
// invalid UTF-8, which Prometheus refuses, is replaced by U+FFFD: a scrape
// never fails on a name.
//
// Two Guards in one registry need a const label to tell their series
// apart, e.g. WithConstLabels(prometheus.Labels{"guard": "public"}); their
// collectors otherwise describe the same metrics, and the registry refuses
// the second.
package sluiceprom
