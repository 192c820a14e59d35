// Command demo shows sluice protecting a real HTTP server. It starts a
// net/http server (routes GET /hello, GET /items/{id} and GET /slow) wrapped
// in the sluicehttp middleware, drives it over HTTP for a while with three
// traffic patterns at once, and prints once per second what each rule let
// through and what it blocked, then a summary that checks every rule held:
//
//	go -C examples run ./demo
//	go -C examples run ./demo -duration 30s -addr 127.0.0.1:8080
//	go -C examples run ./demo -rules my-rules.yaml
//
// The traffic patterns are:
//
//   - steady: GET /hello at 20 requests per second, below its limit;
//   - bursty: from 1.25s (once steady traffic has filled a window) every 2
//     seconds, 80 GET /hello (10 at a time) and 12 GET /slow at once, above
//     their limits;
//   - hot-user: GET /items/{id} with X-User-ID mallory at 40 per second,
//     while vip (25/s), alice and bob (5/s each) stay under their limits.
//
// The embedded default rules (rules.yaml) are a flow rule on GET /hello, a
// hotspot rule on header:X-User-ID for GET /items/{id} with an override for
// vip, and a concurrency rule on GET /slow, with limits this traffic goes
// over. -rules loads a YAML or JSON rules file instead; the traffic stays the
// same.
//
// What is counted: a request passed a rule when its answer was 2xx and the
// rule applied to it (its resource matches the request's route and, for a
// hotspot rule, the request carries the param); a request was blocked by a
// rule when its answer was 429 or 503 and named that rule (the rule member of
// the problem body, or else the RateLimit item). Any other outcome is a
// failure; the demo then exits with status 1, as it does when a rule let
// through more than its limit allows. The seconds are the clients', not
// aligned with the server's windows, so a second may show a little more than
// a limit; the summary checks each rule against the most its limit allows
// over the whole run.
//
// With -addr the server listens on that address, so it can be tried with curl
// while the demo runs; such requests count against the limits but not in the
// tables. The server also serves the Guard's live dashboard at
// /debug/sluice/ and its Prometheus metrics at /metrics:
//
//	go -C examples run ./demo -duration 2m -addr 127.0.0.1:8080 &
//	open http://127.0.0.1:8080/debug/sluice/
package main
