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
package health
