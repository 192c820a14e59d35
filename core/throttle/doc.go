// Package throttle is client-side adaptive throttling, as in Google's SRE
// book ("Handling Overload"): a client that sees its upstream reject calls
// for overload starts rejecting calls itself, locally, so that an
// overloaded upstream is not hammered by retries, and stops as the
// upstream accepts again.
//
// For each resource (an upstream, as the adapters name it: "GET
// api.example.com", a gRPC full method), a Throttle counts over a sliding
// window (WithWindow, default 2 minutes) the calls the program attempted
// and those the upstream accepted, and rejects a new call with probability
//
//	max(0, (requests - K·accepts) / (requests + 1))
//
// K (WithK, default 2) is how many attempts per accepted call the client
// allows before it throttles: with K = 2 it sends about twice what the
// upstream accepts. A call rejected locally counts as attempted, so that
// throttling never stops while the upstream keeps rejecting. When the
// upstream says when to retry (an HTTP Retry-After, gRPC's RetryInfo or
// pushback), the resource is paused for that long (at most WithMaxPause):
// its calls are rejected without being counted.
//
// The adapters use it for outbound calls (sluicehttp.WithThrottle,
// sluicegrpc.WithThrottle): it is off unless given. A rejected call
// returns an *Error, which matches core.ErrBlocked.
package throttle
