// Package sluiceotel exports a Guard's statistics as OpenTelemetry
// metrics, and adds an event to the request's span when a Guard blocks it.
// It is a module of its own, so that only services that use OpenTelemetry
// pay for its API; Register and BlockEvents need the API only
// (go.opentelemetry.io/otel/metric and .../trace), the service bringing its
// SDK and exporters; Producer, the response time histogram, hands the SDK
// its data (go.opentelemetry.io/otel/sdk/metric/metricdata).
//
// Register creates observable instruments on a meter of scope
// "github.com/sluicekit/sluice/core/otel", with this module's version
// (from the global MeterProvider, or WithMeterProvider's) and one callback
// that reads all of them from one core.Guard.Snapshot per collection: the
// callback costs time in proportion to the resources and rules, never
// takes a lock that requests wait on, and keeps no state, so counters are
// exactly the Guard's (cumulative; a reader asking for delta temporality
// gets the SDK's differences):
//
//	reg, err := sluiceotel.Register(guard)
//	if err != nil {
//		return err
//	}
//	defer reg.Unregister()
//
// # Metrics
//
// No OpenTelemetry semantic convention covers flow control, so the
// instruments are named sluice.*, after the conventions' rules: dotted
// namespaces, no name that is also a namespace, UCUM units ("s", and
// annotations such as "{request}"), no _total suffix, one instrument with
// an attribute where the sum over the attribute means something
// (sluice.requests counts every decided request, split by sluice.result,
// as ASP.NET Core's aspnetcore.rate_limiting.requests splits its own),
// sluice.active_requests after http.server.active_requests, and a state
// reported as 1 for the current state and 0 for the others, counted in the
// things in that state ({breaker}, {store}), as k8s.pod.status.phase does
// ({pod}): a unit of "1" would make Prometheus exporters append _ratio.
// The meter's instrumentation scope carries this module's version.
//
// OpenTelemetry's Prometheus exporter, with its default options, turns
// them into the metrics of package github.com/sluicekit/sluice/core/prometheus,
// name for name and label for label (dots become underscores: sluice.rule.name
// is the label sluice_rule_name), so the alerts and the Grafana dashboard
// of core/prometheus/monitoring work with either; TestExportersAgree
// scrapes both for the same Guard and compares every series. The exporter
// adds otel_scope_name and otel_scope_version labels, which the alerts and
// the dashboard aggregate away, and a target_info metric.
//
// The attributes are resource names (bounded by core.WithMaxResources,
// beyond which resources count under core.OverflowResource), rule names,
// kinds, results, breaker states and store names: never a param value, so
// a flood of user IDs or client IPs adds no point. Strings that are not
// valid UTF-8 have each bad run replaced by U+FFFD (resource names
// already are, see core.ResourceStats).
//
// Per resource (attribute sluice.resource), from the first request the
// Guard saw for it (the Prometheus name after each):
//
//	sluice.requests             counter        {request}  requests decided, by sluice.result: passed, or
//	                                                      the reason they were blocked for
//	                                                      (core.BlockReasons); every result has a point
//	                                                      (sluice_requests_total)
//	sluice.completed_requests   counter        {request}  admitted requests that exited
//	                                                      (sluice_completed_requests_total)
//	sluice.failed_requests      counter        {request}  of those, the ones that failed (by default 5xx,
//	                                                      handler errors, non-OK gRPC codes)
//	                                                      (sluice_failed_requests_total)
//	sluice.response.time        counter        s          their total response time
//	                                                      (sluice_response_time_seconds_total)
//	sluice.active_requests      updowncounter  {request}  admitted and not yet exited
//	                                                      (sluice_active_requests)
//	sluice.request.duration     histogram      s          their response times, explicit buckets at powers
//	                                                      of 4 from 2^-15 s (about 30µs) to 32 s; from a
//	                                                      Producer given to the SDK's reader, not Register
//	                                                      (sluice_request_duration_seconds)
//
// Where no rule of a resource reads response times, they are sampled
// (core.ResourceStats): the histogram's count and sluice.response.time are
// estimates, within 31 requests a CPU of sluice.completed_requests.
//
// Per rule in force (attributes sluice.rule.name, sluice.rule.kind and
// sluice.rule.resource, the rule's Resource: an exact name or a glob),
// from when the rule was first set (a rule that keeps its name, kind and
// resource across core.Guard.SetRules keeps its counts; a removed rule's
// points go):
//
//	sluice.rule.blocked         counter        {request}  requests the rule blocked
//	sluice.rule.shadow_blocked  counter        {request}  requests a shadow rule (core.Rule.Shadow) would
//	                                                      have blocked, which passed
//	sluice.rule.evaluated       counter        {request}  requests it was checked against
//	sluice.rule.resources       updowncounter  {resource} resources it applied to
//	sluice.rule.unmatched       gauge          {rule}     1 once it applied to no request for
//	                                                      core.WithUnmatchedAfter, else 0
//	sluice.rule.fallbacks       counter        {decision} decisions made by its failure policy because
//	                                                      its store failed (rules with a store only)
//	sluice.rule.active_requests updowncounter  {request}  requests holding a slot (concurrency rules only)
//	sluice.rule.limit           gauge          {request}  its limit in force (core.RuleStats.Limit)
//	sluice.rule.usage           gauge          {request}  how much of it is taken now (RuleStats.Use)
//	sluice.breaker.state        updowncounter  {breaker}  1 for the state the breaker is in, 0 for the
//	                                                      others, by sluice.breaker.state: closed, open,
//	                                                      half-open (breaker rules only)
//	sluice.breaker.trips        counter        {trip}     times the breaker opened (breaker rules only)
//
// Per store given with core.WithStore (attribute sluice.store.name):
//
//	sluice.store.healthy        gauge          {store}    1 while the store works; 0 from a failed call
//	                                                      until a call succeeds again
//	sluice.store.errors         counter        {error}    calls to the store that failed
//	sluice.store.fallbacks      counter        {decision} decisions made by failure policies instead of
//	                                                      the store
//
// For the Guard:
//
//	sluice.events.dropped       counter        {event}    breaker changes that listeners
//	                                                      (core.WithBreakerListener) did not get
//
// With WithWatcher, of the reloads of the rules file (package rulesfile):
//
//	sluice.rules.reloads        counter        {reload}   loads of the file, by sluice.result: success
//	                                                      (applied, the first included) or failure
//	sluice.rules.last_reload.successful gauge  {file}     1 while the rules in force are the file's, 0
//	                                                      while its last version is refused
//	sluice.rules.last_reload.success_timestamp gauge s    when the file was last applied (Unix time)
//	sluice.rules.last_reload.duration gauge    s          how long the last load took
//
// # Span events
//
// BlockEvents returns a hook for core.WithBlockHook. With it, each blocked
// request whose context carries a recording span (the one an
// instrumentation such as otelhttp or otelgrpc started) gets an event
// named "sluice.blocked" with the resource, the rule (sluice.rule.name), its kind, the reason,
// the retry time in seconds, and, for hotspot rules, the param's name.
// When the span is not recording the hook returns after one context
// lookup, allocating nothing.
package sluiceotel
