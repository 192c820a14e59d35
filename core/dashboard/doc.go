// Package dashboard serves a live dashboard of a Guard: one self-contained
// page (no CDN, no external fonts: its script and style are embedded and
// served by the same handler) that shows every resource with its requests in
// flight, errors and response times, and charts of the last 10 minutes
// (WithHistory), a point a second, with time and value axes: its passed,
// blocked and failed requests per second, with the limit of each flow rule
// on it drawn as a dashed line, and its average response time with its 50th
// and 99th percentiles; every rule with its limit, blocked and evaluated
// requests, the resources it applies to (or a flag when it matched no
// request for core.WithUnmatchedAfter), a flag when it is in shadow mode,
// for breakers their state and trips, and charts of its evaluated and
// blocked (or, in shadow mode, would-be blocked) requests per second, with
// its limit for flow rules, and of its use against its limit in force (flow
// rules in memory: the requests in their window; concurrency and adaptive
// rules: in flight, against the limit an adaptive rule found); the values a
// hotspot rule blocked most, with core.WithTopBlockedValues; and the shared
// stores' health. The charts are full when the page opens: the Guard keeps
// their history (core.Guard.History) from the time the handler was made, and
// the page's first poll of the handler's JSON endpoint brings it; each later
// poll, every second, brings the points since.
//
//	h, err := dashboard.New(guard)
//	mux.Handle("/debug/sluice/", http.StripPrefix("/debug/sluice", h))
//
// # Paths
//
// Relative to wherever the handler is mounted, with or without
// http.StripPrefix: the page at any path ending in "/", its script and
// style at dashboard.js and dashboard.css beside it, and the JSON at
// api/snapshot. Other paths are not found; the prefix itself, stripped to
// the empty path, is redirected to the prefix with a slash.
//
// # JSON
//
// GET <mount>/api/snapshot returns the Guard's core.Snapshot and
// core.History as JSON, with lower-camel keys, durations in milliseconds
// (floats), breaker states as words. Without a query it brings the history
// of the last WithHistory seconds; with ?after=MS, the seconds that ended
// after MS, a time on the Guard's clock in milliseconds (the historyAt of
// an earlier response):
//
//	{"time": "2026-11-24T16:00:00Z",
//	 "resources": [{"name": "GET /hello", "inFlight": 0, "pass": 5, "block": 12,
//	                "complete": 5, "error": 0, "avgRtMs": 0.4, "minRtMs": 0.1, "peak": 2,
//	                "total": {"pass": 300, "block": 700, "complete": 300, "error": 0,
//	                          "rtMs": 120.5, "avgRtMs": 0.4, "blockedBy": {"flow": 700}},
//	                "history": {"pass": [5, 5, 4], "block": [10, 12, 12], "error": [0, 0, 0],
//	                            "avgRtMs": [0.4, null, 0.5], "p50RtMs": [0.35, null, 0.42],
//	                            "p99RtMs": [0.9, null, 1.2]}}],
//	 "rules": [{"name": "hello-rate", "kind": "flow", "resource": "GET /hello",
//	            "summary": "5 per 1s, leap-array", "blocked": 12, "blockedTotal": 700,
//	            "fallbacks": 0, "inFlight": 0, "evaluated": 1000,
//	            "resources": ["GET /hello"], "resourceCount": 1, "unmatched": false,
//	            "shadow": false, "shadowed": 0, "shadowedTotal": 0,
//	            "algorithm": "leap-array", "windowMs": 1000,
//	            "history": {"blocked": [10, 12, 12], "shadowed": [0, 0, 0], "evaluated": [15, 17, 16],
//	                        "limit": [5, 5, 5], "use": [5, 5, 4]}},
//	           {"name": "fail-breaker", "kind": "breaker", "resource": "GET /fail",
//	            "summary": "error-ratio >= 0.5 of >= 10 in 10s, open 5s", "blocked": 3, "blockedTotal": 40,
//	            "fallbacks": 0, "inFlight": 0, "evaluated": 52,
//	            "resources": ["GET /fail"], "resourceCount": 1, "unmatched": false,
//	            "shadow": false, "shadowed": 0, "shadowedTotal": 0, "windowMs": 10000,
//	            "breaker": {"state": "open", "requests": 10, "bad": 6, "trips": 1, "retryAfterMs": 4200},
//	            "history": {"blocked": [1, 1, 2], "shadowed": [0, 0, 0], "evaluated": [3, 2, 2],
//	                        "limit": [null, null, null], "use": [null, null, null]}}],
//	 "stores": [{"name": "redis", "healthy": true, "errors": 0, "fallbacks": 0}],
//	 "droppedEvents": 0,
//	 "historyEnd": "2026-11-24T16:00:00Z", "historyAt": 3600000}
//
// time is the server's wall clock. resources are sorted by name (the
// overflow resource last); pass, block, complete, error, avgRtMs, minRtMs
// and peak are over the last second, total since the Guard first saw the
// resource (blockedBy by reason: a rule kind, "fallback" or "cancelled").
// rules are in rule order, with their normalized name, kind and resource,
// summary a description of the limit for people, blocked over the last
// second and blockedTotal since the rule was set; evaluated counts the
// requests it was checked against (core.RuleStats.Evaluated), resources
// lists the first 10 of the resources it applied to and
// resourceCount counts them all; unmatched is true when it applied to no
// request for core.WithUnmatchedAfter since it was set or changed, which
// the page shows as a badge and counts in a tile; inFlight is for
// concurrency rules; breaker, for breaker rules only, has the state
// (closed, open or half-open), the requests and bad ones in the breaker's
// window, the trips so far and, while open, how long until it probes.
// shadow is true for a rule in shadow mode (core.Rule.Shadow), which the
// page shows as a badge and counts in a tile, with the requests it would
// have blocked over the last second (shadowed) and since it was set
// (shadowedTotal) in place of blocked ones; algorithm is a flow or hotspot
// rule's, windowMs the rule's window (0 for kinds without one).
// topBlocked, with core.WithTopBlockedValues, lists the values of a
// hotspot rule's param it blocked most: {"value", "blocked", "error"}.
// stores are sorted by name. droppedEvents counts the breaker changes that
// listeners missed. The lists are empty, never null.
//
// history holds a resource's or rule's series, a number a second, oldest
// first, null where not known (the response time of a second where no
// request completed; the use of a rule that has none): the last is the
// second ending at historyEnd (the server's wall clock), which is
// historyAt on the Guard's clock. Series are as core.ResourceHistory and
// core.RuleHistory describe them; a series is shorter than the others when
// its resource or rule came later. Resources beyond those the Guard keeps
// a history for (those rules name and 1000 others: core.Guard.History)
// have none.
//
// # Security
//
// The page sends a Content-Security-Policy that allows nothing but its own
// script, style and endpoint (no inline script or style at all), and
// writes every name it shows as text, so a rule or resource name cannot
// inject markup; the other responses' policy allows nothing. Every
// response is Cache-Control: no-store and X-Content-Type-Options: nosniff.
// The handler serves GET and HEAD only (405 with an Allow header
// otherwise).
//
// Mount it where only operators reach it: it shows rule names, resources
// and traffic, which is no secret of any one user but tells a lot about a
// service.
package dashboard
