// Package health serves a Guard's readiness for Kubernetes probes and load
// balancers: a JSON report of the Guard's shared stores and of its rules
// file, and a status that says whether the instance should get traffic.
//
//	h, err := health.Handler(guard, health.WithWatcher(w), health.RequireStores())
//	mux.Handle("GET /readyz", h)
//
// By default the status is always 200: a Guard never stops a service from
// serving (a failed store falls back to its rules' failure policy, a bad
// rules file leaves the rules in force), so taking an instance out of
// rotation for it is a choice, made with RequireStores and RequireRules.
//
// # Report
//
// The body is a JSON object:
//
//	{"ready": false, "problems": ["store redis is down"],
//	 "stores": [{"name": "redis", "healthy": false, "errors": 3, "fallbacks": 12}],
//	 "rules": {"count": 4, "file": "/etc/sluice/rules.yaml"}}
//
// Its fields:
//
//   - ready is false when a requirement fails (RequireStores,
//     RequireRules); the status is then 503. problems says why, one line
//     per failed requirement, and is absent while ready.
//   - stores are the Guard's shared stores (core.StoreStatus): name,
//     healthy, and the errors and fallbacks counted so far; empty, never
//     null, without stores.
//   - rules: count is the number of rules in force, file the watched rules
//     file (WithWatcher; absent without one), and error the problem of the
//     file's last version, which the Guard refused and whose older rules
//     stay in force (absent while the file's rules are in force).
package health
