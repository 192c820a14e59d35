// Package dashboard serves a live dashboard of a Guard: one self-contained
// page (no CDN, no external fonts: its script and style are embedded and
// served by the same handler) that shows every resource with its passed and
// blocked requests per second as small charts of the last minute, requests
// in flight, errors and response times; every rule with its limit, blocked
// requests and, for breakers, their state; and the shared stores' health.
// The page polls a JSON endpoint of the same handler every second.
//
//	h, err := dashboard.New(guard)
//	mux.Handle("/debug/sluice/", http.StripPrefix("/debug/sluice", h))
//
// # JSON
//
// GET <mount>/api/snapshot returns a Snapshot: the Guard's core.Snapshot
// with lower-camel keys and durations in milliseconds:
//
//	{"time": "2026-11-24T16:00:00Z",
//	 "resources": [{"name": "GET /hello", "inFlight": 0, "pass": 5, "block": 12,
//	                "complete": 5, "error": 0, "avgRtMs": 0.4, "minRtMs": 0.1, "peak": 2,
//	                "total": {"pass": 300, "block": 700, "complete": 300, "error": 0,
//	                          "blockedBy": {"flow": 700}}}],
//	 "rules": [{"name": "hello-rate", "kind": "flow", "resource": "GET /hello",
//	            "summary": "5 per 1s, leap-array", "blocked": 12, "blockedTotal": 700,
//	            "fallbacks": 0, "inFlight": 0,
//	            "breaker": {"state": "open", "requests": 10, "bad": 6, "trips": 1, "retryAfterMs": 4200}}],
//	 "stores": [{"name": "redis", "healthy": true, "errors": 0, "fallbacks": 0}],
//	 "droppedEvents": 0}
//
// pass, block, complete and error are over the last second; total since
// the Guard first saw the resource; breaker only for breaker rules.
//
// The page sends a Content-Security-Policy that allows nothing but its own
// script, style and endpoint, and writes every name it shows as text, so a
// rule or resource name cannot inject markup. Every response is
// Cache-Control: no-store. The handler serves GET and HEAD only.
//
// Mount it where only operators reach it: it shows rule names, resources
// and traffic, which is no secret of any one user but tells a lot about a
// service.
package dashboard
