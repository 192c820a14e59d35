// Package sluiceprom exports a Guard's statistics to Prometheus, through
// github.com/prometheus/client_golang.
//
// NewCollector returns a prometheus.Collector to register in a registry of
// your own; Handler returns an http.Handler with a registry holding only
// that collector, for /metrics. Each scrape takes one core.Guard.Snapshot:
// it costs time in proportion to the resources and rules, never a lock that
// requests wait on.
//
// # Metrics
//
// Names start with the namespace, "sluice" unless WithNamespace gives
// another. Labels are resource names (route templates and gRPC methods,
// bounded by the Guard's resource bound), rule names, kinds, reasons,
// breaker states and store names: never a param value, so a flood of user
// IDs or client IPs adds no series.
//
//	sluice_requests_passed_total{resource}                counter  requests admitted (permits, with WithCount)
//	sluice_requests_blocked_total{resource,reason}        counter  requests blocked, by reason: flow, concurrency,
//	                                                               hotspot, breaker (the kind of the rule), fallback
//	                                                               (a failure policy while a store failed), cancelled
//	                                                               (the context ended while waiting for a turn)
//	sluice_requests_completed_total{resource}             counter  admitted requests that exited
//	sluice_requests_errors_total{resource}                counter  of those, the ones that failed (by default 5xx,
//	                                                               handler errors, non-OK gRPC codes)
//	sluice_response_time_seconds_total{resource}          counter  their total response time; rate(this) /
//	                                                               rate(completed) is the average
//	sluice_requests_in_flight{resource}                   gauge    admitted and not yet exited
//	sluice_rule_blocked_total{rule,kind,resource}         counter  requests each rule blocked (resource is the
//	                                                               rule's, a name or a glob)
//	sluice_rule_fallbacks_total{rule,kind,resource}       counter  decisions of a rule with a store made by its
//	                                                               failure policy
//	sluice_rule_in_flight{rule,resource}                  gauge    requests holding a slot of a concurrency rule
//	sluice_breaker_state{rule,resource,state}             gauge    1 for the state a breaker rule is in (closed,
//	                                                               open, half-open), 0 for the other two
//	sluice_breaker_trips_total{rule,resource}             counter  times a breaker rule opened
//	sluice_store_healthy{store}                           gauge    1 while a shared store works, else 0
//	sluice_store_errors_total{store}                      counter  failed calls to a store
//	sluice_store_fallbacks_total{store}                   counter  decisions made by failure policies instead
//	                                                               of the store
//	sluice_events_dropped_total                           counter  breaker changes listeners did not get
//
// Counters of a resource start when the Guard first sees it; those of a
// rule when it is first set, and carry over a reload that keeps its name,
// kind and resource.
package sluiceprom
