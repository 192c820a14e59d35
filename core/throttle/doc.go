// Package throttle is client-side adaptive throttling, as in Google's SRE
// book ("Handling Overload"): a client that sees its upstream reject calls
// for overload starts rejecting calls itself, locally, so that an
// overloaded upstream is not hammered by retries, and stops as the
// upstream accepts again.
//
// For each resource (an upstream, as the adapters name it: "GET
// api.example.com", a gRPC full method), a Throttle counts over a sliding
// window (WithWindow, default 5 seconds) the calls the program attempted
// and those the upstream accepted, and rejects a new call with probability
//
//	max(0, (requests - K·accepts) / (requests + 1))
//
// K (WithK, default 2) is how many attempts per accepted call the client
// allows before it throttles: with K = 2 it sends about twice what the
// upstream accepts. When the upstream says when to retry (an HTTP
// Retry-After, gRPC's RetryInfo or pushback), the resource is paused for
// that long (at most WithMaxPause): its calls are rejected without being
// counted.
//
// # Calls rejected locally, and recovery
//
// A call rejected locally counts as attempted, so that throttling goes on
// while the upstream keeps rejecting, but only in proportion to how much
// the upstream still rejects: in full while it rejects at least 1 - 1/K of
// the calls sent (half, with K = 2: as many as the throttle's balance
// lets it reject, or more), less as it accepts more, and not at all once
// it accepts every call, judged by a moving average of the last few
// calls sent. Counted always, as in Google's throttle, they kept a
// recovered upstream waiting for minutes: its few accepted calls could
// not outweigh the window's local rejections. The shorter default window
// (Google's is 2 minutes) serves the same end: an upstream that rejects
// everything still gets a call about every window, which finds it once it
// recovers.
//
// Under steady traffic of 100 calls/s on the fake clock
// (TestRecoveryUnderSteadyTraffic, TestStillFailingUpstream and
// TestPartialOverload, go test -run 'Recovery|StillFailing|Partial' -v
// ./core/throttle), with the defaults:
//   - after an outage of 5 s, 1 minute or 10 minutes, starting from no
//     history or from 2 minutes of accepted calls, at least 50% of each
//     second's calls reach the recovered upstream from 7 s after it
//     recovered (median; 29 s at most in 240 runs, -seeds 40), and 95%
//     from 7 s (30 s at most): the wait is mostly for the first calls that
//     find it recovered, about one per window. The test requires 30 s and
//     2 minutes of its 36 runs (17 and 18 s at most); with the 2-minute
//     window and full counting it took 9 to 17 minutes;
//   - an upstream that keeps rejecting everything gets 0.18-0.24% of the
//     calls after the first minute (about one every 5 s) and 0.23-0.40% in
//     the first minute, when the i-th call goes with probability about 1/i;
//   - an upstream that accepts 10 calls/s of 100 gets 2.0 calls per
//     accepted one, K, as with Google's throttle.
//
// An upstream that keeps rejecting gets about one call per window whatever
// the traffic: at lower traffic, that is a larger share of fewer calls.
//
// The adapters use it for outbound calls (sluicehttp.WithThrottle,
// sluicegrpc.WithThrottle): it is off unless given. A rejected call
// returns an *Error, which matches core.ErrBlocked.
package throttle
