// Package throttle is client-side adaptive throttling, as in Google's SRE
// book ("Handling Overload"): a client that sees its upstream reject calls
// for overload starts rejecting calls itself, locally, so that an
// overloaded upstream is not hammered by retries, and stops as the
// upstream accepts again.
//
// For each resource (an upstream, as the adapters name it: "GET
// api.example.com", a gRPC full method), a Throttle counts over a sliding
// window (WithWindow, default 5 seconds) the calls the program attempted
// and those the upstream accepted, and rejects a share of the new calls
//
//	max(0, (requests - K·accepts) / (requests + seen))
//
// K (WithK, default 2) is how many attempts per accepted call the client
// allows before it throttles: with K = 2 it sends about twice what the
// upstream accepts. seen is the share of the window the counts cover
// (since the first call the window held nothing for), at least 1/2 and at
// most 1: Google's formula has 1, a call of doubt per window, and a
// throttle that has counted a tenth of a window does not judge as if it
// had seen a whole one. The share is not drawn at random for each call:
// each call adds its share to let through, 1 - share, to what the
// resource is owed, and goes when that reaches a whole call (error
// diffusion; a resource's first amount owed is random, so that clients
// started together do not call together). Calls that go are spread
// evenly, at the rate the share says, with no runs of luck either way.
//
// When the upstream says when to retry (an HTTP Retry-After, gRPC's
// RetryInfo or pushback), the resource is paused for that long (at most
// WithMaxPause): its calls are rejected without being counted. It is
// paused only while the upstream rejects at least 1 - 1/K of the recent
// calls (the moving average below; from a healthy start, three rejections
// in a row with K = 2): one user's 429 from an upstream with per-user
// limits, or one instance's 503 behind a load balancer, pauses no one
// else (TestOneUsersRetryAfterPausesNoOneElse: with 1 call in 100
// answered 429 Retry-After: 60, the other 99 are all sent).
//
// # Calls rejected locally, and recovery
//
// A call rejected locally counts as attempted, so that throttling goes on
// while the upstream keeps rejecting, but only in proportion to how much
// the upstream still rejects: in full while it rejects at least 1 - 1/K of
// the calls sent (half, with K = 2: as many as the throttle's balance
// lets it reject, or more), less as it accepts more, and not at all once
// it accepts every call, judged by a moving average of the calls sent
// (each weighing 1/4). Counted always, as in Google's throttle, they kept a
// recovered upstream waiting for minutes: its few accepted calls could
// not outweigh the window's local rejections. The shorter default window
// (Google's is 2 minutes) serves the same end: an upstream that rejects
// everything still gets a call about every window, which finds it once it
// recovers.
//
// Under steady traffic of 100 calls/s on the fake clock
// (TestRecoveryUnderSteadyTraffic, TestStillFailingUpstream,
// TestOneFailureAtColdStart and TestPartialOverload, go test -run
// 'Recovery|StillFailing|ColdStart|Partial' -v ./core/throttle -seeds 40),
// with the defaults:
//   - after an outage of 5 s, 1 minute or 10 minutes, starting from no
//     history or from 2 minutes of accepted calls, at least 50% of each
//     second's calls reach the recovered upstream from 6 s after it
//     recovered (median; 9 s at most in 240 runs, -seeds 40), and 95%
//     from 7 s (9 s at most): the wait is mostly for the first call that
//     finds it recovered, one per window. The test requires 30 s and 2
//     minutes; with the 2-minute window and full counting it took 9 to 17
//     minutes, with calls let through at random up to 30 s;
//   - an upstream that keeps rejecting everything gets 0.27% of the calls
//     in the first minute from a cold start (16 of 6000) and 0.21% after
//     it, one call every 4.7-4.8 s, in every one of 40 runs
//     (TestStillFailingUpstream -seeds 40, which requires at most 0.3%;
//     with calls let through at random, 0.23-0.40% in the first minute);
//   - an upstream that rejects only the first call of a cold start loses
//     at most 10 calls (TestOneFailureAtColdStart; at random, up to 637);
//   - an upstream that accepts 10 calls/s of 100 gets 2.1 calls per
//     accepted one, about K, as with Google's throttle.
//
// An upstream that keeps rejecting gets about one call per window whatever
// the traffic: at lower traffic, that is a larger share of fewer calls.
//
// The adapters use it for outbound calls (sluicehttp.WithThrottle,
// sluicegrpc.WithThrottle): it is off unless given. A rejected call
// returns an *Error, which matches core.ErrBlocked.
package throttle
