// Package dashboard serves a live dashboard of a Guard: one self-contained
// page (no CDN, no external fonts: its script and style are embedded and
// served by the same handler) that shows every resource with its passed and
// blocked requests per second as small charts of the last minute, requests
// in flight, errors and response times; every rule with its limit, blocked
// and evaluated requests, the resources it applies to (or a flag when it
// matched no request for core.WithUnmatchedAfter) and, for breakers, their
// state and trips; and the shared
// stores' health. The page polls a JSON endpoint of the same handler every
// second and keeps the charts' history itself.
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
// GET <mount>/api/snapshot returns a Snapshot: the Guard's core.Snapshot
// with lower-camel keys, durations in milliseconds (floats), breaker states
// as words:
//
//	{"time": "2026-11-24T16:00:00Z",
//	 "resources": [{"name": "GET /hello", "inFlight": 0, "pass": 5, "block": 12,
//	                "complete": 5, "error": 0, "avgRtMs": 0.4, "minRtMs": 0.1, "peak": 2,
//	                "total": {"pass": 300, "block": 700, "complete": 300, "error": 0,
//	                          "rtMs": 120.5, "avgRtMs": 0.4, "blockedBy": {"flow": 700}}}],
//	 "rules": [{"name": "hello-rate", "kind": "flow", "resource": "GET /hello",
//	            "summary": "5 per 1s, leap-array", "blocked": 12, "blockedTotal": 700,
//	            "fallbacks": 0, "inFlight": 0, "evaluated": 1000,
//	            "resources": ["GET /hello"], "resourceCount": 1, "unmatched": false},
//	           {"name": "fail-breaker", "kind": "breaker", "resource": "GET /fail",
//	            "summary": "error-ratio >= 0.5 of >= 10 in 10s, open 5s", "blocked": 3, "blockedTotal": 40,
//	            "fallbacks": 0, "inFlight": 0, "evaluated": 52,
//	            "resources": ["GET /fail"], "resourceCount": 1, "unmatched": false,
//	            "breaker": {"state": "open", "requests": 10, "bad": 6, "trips": 1, "retryAfterMs": 4200}}],
//	 "stores": [{"name": "redis", "healthy": true, "errors": 0, "fallbacks": 0}],
//	 "droppedEvents": 0}
//
// time is the server's wall clock. resources are sorted by name (the
// overflow resource last); pass, block, complete, error, avgRtMs, minRtMs
// and peak are over the last second, total since the Guard first saw the
// resource (blockedBy by reason: a rule kind, "fallback" or "cancelled").
// rules are in rule order, with their normalized name, kind and resource,
// summary a description of the limit for people, blocked over the last
// second and blockedTotal since the rule was set; evaluated counts the
// requests it was checked against (core.RuleStats.Evaluated), resources
// lists the first MaxRuleResources of the resources it applied to and
// resourceCount counts them all; unmatched is true when it applied to no
// request for core.WithUnmatchedAfter since it was set or changed, which
// the page shows as a badge and counts in a tile; inFlight is for
// concurrency rules; breaker, for breaker rules only, has the state
// (closed, open or half-open), the requests and bad ones in the breaker's
// window, the trips so far and, while open, how long until it probes.
// stores are sorted by name. droppedEvents counts the breaker changes that
// listeners missed. The lists are empty, never null.
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
