// Package sluiceotel exports a Guard's statistics as OpenTelemetry
// metrics, and adds an event to the request's span when a Guard blocks it.
// It is a module of its own, so that only services that use OpenTelemetry
// pay for its API; Register and BlockEvents need the API only
// (go.opentelemetry.io/otel/metric and .../trace), the service bringing its
// SDK and exporters; Producer, the response time histogram, hands the SDK
// its data (go.opentelemetry.io/otel/sdk/metric/metricdata).
//
// Register creates observable instruments on a meter of scope "github.com/sluicekit/sluice/core/otel"
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
// namespaces, UCUM units ("s", "1", and annotations such as "{request}"),
// no _total suffix, one instrument with an attribute where the sum over
// the attribute means something (sluice.requests counts every decided
// request, split by sluice.result, as ASP.NET Core's
// aspnetcore.rate_limiting.requests splits its own by result),
// sluice.active_requests after http.server.active_requests, and a state
// reported as 1 for the current state and 0 for the others, as hw.status
// does. They are the metrics of the Prometheus exporter
// (github.com/sluicekit/sluice/core/prometheus), one for one, but for
// sluice_requests_passed_total and sluice_requests_blocked_total, which
// are sluice.requests here.
//
// The attributes are resource names (bounded by core.WithMaxResources,
// beyond which resources count under core.OverflowResource), rule names,
// kinds, results, breaker states and store names: never a param value, so
// a flood of user IDs or client IPs adds no point. Strings that are not
// valid UTF-8 have each bad run replaced by U+FFFD.
//
// Per resource (attribute sluice.resource), from the first request the
// Guard saw for it:
//
//	sluice.requests             counter        {request}  requests decided, by sluice.result: passed, or
//	                                                      the reason they were blocked for (those of
//	                                                      core.Totals.BlockedBy: flow, concurrency,
//	                                                      hotspot, breaker, adaptive, system, fallback,
//	                                                      cancelled); every result has a point, 0 or not
//	sluice.requests.completed   counter        {request}  admitted requests that exited
//	sluice.requests.errors      counter        {request}  of those, the ones that failed (by default 5xx,
//	                                                      handler errors, non-OK gRPC codes)
//	sluice.response.time        counter        s          their total response time; its rate divided by
//	                                                      that of sluice.requests.completed is the average
//	sluice.active_requests      updowncounter  {request}  admitted and not yet exited
//	sluice.request.duration     histogram      s          their response times, explicit buckets at powers
//	                                                      of 4 from 2^-15 s (about 30µs) to 32 s, those of
//	                                                      the Prometheus exporter's classic buckets; from a
//	                                                      Producer given to the SDK's reader, not Register
//
// Per rule in force (attributes sluice.rule, sluice.rule.kind and
// sluice.rule.resource, the rule's Resource: an exact name or a glob),
// from when the rule was first set (a rule that keeps its name, kind and
// resource across core.Guard.SetRules keeps its counts; a removed rule's
// points go):
//
//	sluice.rule.blocked         counter        {request}  requests the rule blocked
//	sluice.rule.shadow_blocked  counter        {request}  requests a shadow rule (core.Rule.Shadow) would
//	                                                      have blocked, which passed (rules that are or
//	                                                      were in shadow only)
//	sluice.rule.evaluated       counter        {request}  requests it was checked against
//	                                                      (core.RuleStats.Evaluated)
//	sluice.rule.resources       updowncounter  {resource} resources it applied to
//	sluice.rule.unmatched       gauge          1          1 once it applied to no request for
//	                                                      core.WithUnmatchedAfter, else 0
//	sluice.rule.fallbacks       counter        {decision} decisions made by its failure policy because
//	                                                      its store failed (rules with a store only)
//	sluice.rule.active_requests updowncounter  {request}  requests holding a slot (concurrency rules
//	                                                      only; no sluice.rule.kind)
//	sluice.rule.limit           gauge          {request}  the rule's limit in force (flow rules in memory,
//	                                                      concurrency and adaptive rules:
//	                                                      core.RuleStats.Limit)
//	sluice.rule.usage           gauge          {request}  how much of it is taken now (RuleStats.Use)
//	sluice.breaker.state        updowncounter  1          1 for the state the breaker is in, 0 for the
//	                                                      others, by sluice.breaker.state: closed, open,
//	                                                      half-open (breaker rules only; no kind)
//	sluice.breaker.trips        counter        {trip}     times the breaker opened (breaker rules only;
//	                                                      no kind)
//
// Per store given with core.WithStore (attribute sluice.store):
//
//	sluice.store.healthy        gauge          1          1 while the store works; 0 from a failed call
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
//	sluice.rules.reload.successful gauge       1          1 while the rules in force are the file's, 0
//	                                                      while its last version is refused
//	sluice.rules.reload.last_success gauge     s          when the file was last applied (Unix time)
//	sluice.rules.reload.duration gauge         s          how long the last load took
//
// # Span events
//
// BlockEvents returns a hook for core.WithBlockHook. With it, each blocked
// request whose context carries a recording span (the one an
// instrumentation such as otelhttp or otelgrpc started) gets an event
// named "sluice.blocked" with the resource, the rule, its kind, the reason,
// the retry time in seconds, and, for hotspot rules, the param's name.
// When the span is not recording the hook returns after one context
// lookup, allocating nothing.
package sluiceotel
