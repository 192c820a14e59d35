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
// The metrics are those of package github.com/sluicekit/sluice/core/otel
// as OpenTelemetry's Prometheus exporter names them (dots become
// underscores, units and _total are appended): the same names, labels and
// values whichever exporter a service uses, so the alerts and dashboard
// of the directory monitoring work with both (TestExportersAgree in
// core/otel scrapes both and compares them). Names start with the
// namespace, "sluice" unless WithNamespace gives another; WithConstLabels
// adds labels to every series. The labels are resource names (route
// templates and gRPC methods, bounded by core.WithMaxResources, beyond
// which resources count under core.OverflowResource), rule names, kinds,
// results, breaker states and store names: never a param value, so a
// flood of user IDs or client IPs adds no series.
//
// Per resource (label sluice_resource), from the first request the Guard
// saw for it:
//
//	sluice_requests_total{sluice_result}       counter   requests decided: passed, or the reason they were
//	                                                     blocked for (core.BlockReasons: flow, concurrency,
//	                                                     hotspot, breaker, adaptive, system, fallback,
//	                                                     cancelled); every result has a series, 0 or not
//	sluice_completed_requests_total            counter   admitted requests that exited
//	sluice_failed_requests_total               counter   of those, the ones that failed (by default 5xx,
//	                                                     handler errors, non-OK gRPC codes)
//	sluice_response_time_seconds_total         counter   their total response time in seconds
//	sluice_active_requests                     gauge     admitted and not yet exited
//	sluice_request_duration_seconds            histogram their response times: classic buckets (_bucket{le},
//	                                                     _sum, _count) at powers of 4 from 2^-15 s (about
//	                                                     30µs) to 32 s, and native buckets of schema 0
//	                                                     (powers of 2, zero bucket up to 2^-17 s) for
//	                                                     scrapers that ask for them
//
// Response times are measured on the monotonic clock; core.RTHistogram says
// which request counts in which bucket. Where no rule of a resource reads
// them, they are sampled (core.ResourceStats: one request in 32 timed,
// counting 32 times), so the histogram's _count and the response time
// total are estimates, within 31 requests a CPU of the completed requests
// (TestExportersAgreeOnTheSystemClockUnderAFlood in core/otel). Fallback means a rule with a store
// blocked the request by its failure policy while the store failed;
// cancelled, that its context ended while it waited for its turn in a leaky
// bucket.
//
// Per rule in force (labels sluice_rule_name, sluice_rule_kind and
// sluice_rule_resource, the rule's Resource: an exact name or a glob),
// from when the rule was first set (a rule that keeps its name, kind and
// resource across core.Guard.SetRules keeps its counts; a removed rule's
// series disappear):
//
//	sluice_rule_blocked_total                  counter   requests the rule blocked
//	sluice_rule_shadow_blocked_total           counter   requests a shadow rule (core.Rule.Shadow) would have
//	                                                     blocked, which passed (rules that are or were in
//	                                                     shadow only)
//	sluice_rule_evaluated_total                counter   requests the rule was checked against
//	sluice_rule_resources                      gauge     resources the rule applied to
//	sluice_rule_unmatched                      gauge     1 once the rule applied to no request for
//	                                                     core.WithUnmatchedAfter, else 0
//	sluice_rule_fallbacks_total                counter   decisions made by its failure policy because its
//	                                                     store failed (rules with a store only)
//	sluice_rule_active_requests                gauge     requests holding a slot (concurrency rules only)
//	sluice_rule_limit                          gauge     the limit in force (flow rules in memory,
//	                                                     concurrency and adaptive rules: core.RuleStats.Limit)
//	sluice_rule_usage                          gauge     how much of it is taken now: usage / limit is the
//	                                                     share in use
//	sluice_breaker_state{sluice_breaker_state} gauge     1 for the state the breaker is in, 0 for the other
//	                                                     two: closed, open, half-open (breaker rules only)
//	sluice_breaker_trips_total                 counter   times the breaker opened (breaker rules only)
//
// Per store given with core.WithStore (label sluice_store_name):
//
//	sluice_store_healthy                       gauge     1 while the store works; 0 from a failed call until
//	                                                     a call succeeds again
//	sluice_store_errors_total                  counter   calls to the store that failed
//	sluice_store_fallbacks_total               counter   decisions made by failure policies instead of it
//
// For the Guard:
//
//	sluice_events_dropped_total                counter   breaker changes that listeners
//	                                                     (core.WithBreakerListener) did not get
//
// With WithWatcher, of the reloads of the rules file (package rulesfile):
//
//	sluice_rules_reloads_total{sluice_result}  counter   loads of the file: success (applied, the first
//	                                                     included) or failure (refused)
//	sluice_rules_last_reload_successful        gauge     1 while the rules in force are the file's, 0 while
//	                                                     its last version is refused
//	sluice_rules_last_reload_success_timestamp_seconds   when the file was last applied (gauge, Unix time)
//	sluice_rules_last_reload_duration_seconds  gauge     how long the last load took
//
// The directory monitoring holds alerting rules (a rule blocking much of
// its traffic, a breaker open, a store down, a rule matching nothing, the
// rules file refused) with their promtool tests, and a Grafana dashboard
// whose percentile panel reads native histograms where Prometheus scrapes
// them, else the classic buckets. CI runs every dashboard query and alert
// expression with promtool on a scrape of each exporter
// (TestMonitoringMatchesBothExporters in core/otel; SLUICE_REQUIRE_PROMTOOL=1
// makes a missing promtool fail it).
//
// Label values are the names as they are, quotes, backslashes, newlines
// and any Unicode included (the exposition escapes them), except that
// invalid UTF-8, which Prometheus refuses, is replaced by U+FFFD (the
// Guard keeps names entered with invalid bytes as one resource so named,
// see core.ResourceStats): a scrape never fails on a name.
//
// Two Guards in one registry need a const label to tell their series
// apart, e.g. WithConstLabels(prometheus.Labels{"guard": "public"}); their
// collectors otherwise describe the same metrics, and the registry refuses
// the second.
package sluiceprom
