package core

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/flow"
	"github.com/sluicekit/sluice/core/hotspot"
	"github.com/sluicekit/sluice/core/window"
)

// EnterOption adjusts one call of Enter.
type EnterOption struct {
	count    int64
	hasCount bool // WithCount was given, even WithCount(0)
	params   Params
	quotas   *[]Quota
}

// WithCount makes Enter acquire n permits instead of one: a flow rule counts
// n requests, a concurrency rule n slots. n must be at least 1: Enter
// returns an error otherwise.
func WithCount(n int64) EnterOption { return EnterOption{count: n, hasCount: true} }

// WithQuotas makes Enter append to *dst, for a request it admits, the quota
// policy of every rate rule (flow or hotspot) that admitted it, in rule
// order: what the RateLimit fields of an admitted response list (a hotspot
// rule limiting several values of the request gives the one with the least
// quota left). A rejected request's are in BlockedError.Policies instead.
func WithQuotas(dst *[]Quota) EnterOption { return EnterOption{quotas: dst} }

// Entry is the pass ticket Enter returns for an admitted request. Call Exit
// once the request is done; Exit is idempotent, and calling it on the zero
// Entry (the one Enter returns with an error) does nothing, so
//
//	e, err := guard.Enter(ctx, resource)
//	defer e.Exit(nil)
//
// is safe. An Entry is a value: it holds no pooled object, so an Entry kept
// after Exit can never end another request. Exit must not be called from two
// goroutines at once on the same Entry.
type Entry struct {
	g      *Guard
	res    *resource
	b      *binding
	start  int64
	n      int64
	stripe uint8 // the statistics stripe the request was counted in
	done   bool
	// brk is the ticket of the first breaker of the binding; those of
	// the others are in holds.
	brk   breaker.Ticket
	quota quotaOf
	// The per-value concurrency reservations of hotspot rules, which Exit
	// releases.
	holds []held
}

// held is a reservation a rule made for a request. For flow and
// concurrency rules only d.Decision is used.
type held struct {
	rs *ruleState
	d  hotspot.Decision
	// For a rule with a store: the key in the store, and whether the
	// decision was the failure policy's instead of the store's.
	key      string
	fallback bool
	// missing is true when a hotspot rule with onMissing reject rejected
	// the request for lacking its param: it never passes.
	missing bool
	t       breaker.Ticket // for a breaker rule
}

// quotaOf is the windowed rule an admitted request left the least quota
// of, and that quota.
type quotaOf struct {
	rs               *ruleState
	limit, remaining int64
}

// note makes the rule of rs the entry's quota when its decision, of limit
// and remaining, left less quota than the one noted so far.
func (q *quotaOf) note(rs *ruleState, limit, remaining int64) {
	if rs.window && (q.rs == nil || remaining < q.remaining) {
		*q = quotaOf{rs: rs, limit: limit, remaining: remaining}
	}
}

// Quota is one quota policy of a request after a decision, as the
// RateLimit header fields describe it: a rate limit (flow or hotspot rule)
// admits Limit requests per Window; a concurrency limit (Window 0) admits
// Limit requests in flight.
type Quota struct {
	Rule string // the rule's name
	// Limit is the rule's configured limit (a warm-up ramp's lower limit
	// in force is not advertised: Remaining shows it), with a token
	// bucket's burst: the most requests the rule ever admits at once.
	Limit int64
	// Window is the period of Limit: the rule's window, or, for a token
	// bucket with a burst, the time it takes to refill Limit tokens, so
	// that Limit per Window is the bucket's rate. 0 for concurrency.
	Window time.Duration
	// Remaining is the quota left after the decision (before it, for a
	// request that was rejected): at most Limit.
	Remaining int64
	// Reset is an upper bound on the time until the full quota is available
	// again if no request arrives: the window for window algorithms, the
	// time to refill the bucket for token and leaky buckets. For a rule
	// that rejected the request (Blocked) it is instead the time after
	// which it would admit it, 0 if it never will or is a concurrency
	// limit.
	Reset time.Duration
	// Blocked is true when the rule rejected the request (in
	// BlockedError.Policies only).
	Blocked bool
}

// quota returns the quota policy of the rule of rs after a decision that
// left remaining under the limit lim (the value's, for a hotspot rule).
func (rs *ruleState) quota(lim, remaining int64) Quota {
	r := &rs.rule
	if rs.flow != nil {
		lim = r.Limit // not a warm-up ramp's limit
	}
	q := Quota{Rule: r.Name, Limit: lim}
	if rs.window {
		q.Window, q.Reset = r.Window, r.Window
		if rs.refills && lim > 0 && r.Burst > 0 {
			q.Limit = min(lim, math.MaxInt64-r.Burst) + r.Burst
			q.Window = scaleUp(r.Window, q.Limit, lim)
		}
	}
	q.Remaining = min(max(remaining, 0), q.Limit)
	if rs.window && rs.refills && lim > 0 {
		// A bucket refills lim per window, continuously.
		q.Reset = scaleUp(r.Window, q.Limit-q.Remaining, lim)
	}
	return q
}

// scaleUp returns d*num/den for non-negative d and num and positive den,
// rounded up, and at most the longest Duration.
func scaleUp(d time.Duration, num, den int64) time.Duration {
	hi, lo := bits.Mul64(uint64(d), uint64(num))
	if hi >= uint64(den) {
		return math.MaxInt64
	}
	q, rem := bits.Div64(hi, lo, uint64(den))
	if rem != 0 {
		q++
	}
	return time.Duration(min(q, math.MaxInt64))
}

// Quota returns the quota of the rate rule (flow or hotspot, not
// concurrency) that the request left the least quota of, and false when no
// rate rule applied to it.
func (e *Entry) Quota() (Quota, bool) {
	rs := e.quota.rs
	if rs == nil {
		return Quota{}, false
	}
	return rs.quota(e.quota.limit, e.quota.remaining), true
}

// Resource returns the name of the resource entered, or "" for the zero
// Entry.
func (e *Entry) Resource() string {
	if e.res == nil {
		return ""
	}
	return e.res.name
}

// Enter asks to pass one request of resource (a route template such as
// "GET /items/{id}" or a gRPC method). It returns an Entry to Exit when the
// request is done, or an error: a *BlockedError (errors.Is(err, ErrBlocked))
// when a rule rejects the request, ctx's error when ctx ends while the
// request waits for its turn (leaky-bucket rules), or an error describing
// bad arguments. Every rule whose resource matches applies; the request
// passes only if all pass, and the reservations of the rules that admitted it
// are given back when a later one rejects it. The rules after a rejecting
// one are still asked, what they grant given back at once, so that the
// BlockedError tells every rule that rejects the request and the latest
// time any of them allows. Hotspot rules read the params
// they name from WithParams, once per value; a request without WithParams,
// or without the param, is what the rule's OnMissing says: not limited by
// the rule (the default), rejected, or limited with the others lacking it.
//
// Rules decide on the monotonic clock; statistics and response times are
// timed on the Guard's coarse clock (see RTResolution). With rules that
// never wait Enter does not block; ctx is only consulted when the request
// must wait.
func (g *Guard) Enter(ctx context.Context, resource string, opts ...EnterOption) (Entry, error) {
	n := int64(1)
	var params Params
	var quotas *[]Quota
	for _, o := range opts {
		if o.hasCount {
			n = o.count
		}
		if o.params != nil {
			params = o.params
		}
		if o.quotas != nil {
			quotas = o.quotas
		}
	}
	if n < 1 {
		return Entry{}, fmt.Errorf("sluice: Enter %q: count must be >= 1, got %d", resource, n)
	}
	res, cached := g.resources.get(resource)
	b := g.bindingOf(res, resource, cached)
	now := g.decisionTime(b)
	cpu := g.resources.picker.Pick()
	e := Entry{g: g, res: res, b: b, n: n}
	var err error
	switch {
	case b.single != nil:
		// One flow or concurrency rule that never waits: no reservation
		// to keep for a later rejection.
		// The flow rule's decision is used where it is returned: a
		// Decision passed through another function is copied through
		// memory, which costs more than its size suggests.
		rs := b.single
		if rs.flow != nil {
			if d := rs.flow.AcquireOn(cpu, now, n); d.OK {
				e.quota.note(rs, d.Limit, d.Remaining)
				if quotas != nil {
					*quotas = append(*quotas, rs.quota(d.Limit, d.Remaining))
				}
			} else {
				err = g.blocked(resource, &held{rs: rs, d: hotspot.Decision{Decision: d}}, cpu, now, n)
			}
		} else if !rs.conc.AcquireOn(cpu, n) {
			h := concHeld(rs)
			err = g.blocked(resource, &h, cpu, now, n)
		}
	case len(b.rules) > 0:
		now, err = g.admit(ctx, &e, resource, params, quotas, cpu, now)
	}
	if !cached {
		b.overflowed(cpu, n, err == nil)
	}
	if err != nil {
		if b.single != nil {
			evaluated(b.rules, cpu, n) // admit counts its own
		}
		g.rejected(res, err, cpu, now, n)
		if g.blockHooks != nil {
			g.callBlockHooks(ctx, err)
		}
		return Entry{}, err
	}
	st, i := res.stripe(cpu)
	entered := st.entered.Add(n)
	inFlight := entered - st.exited.Load()
	if entered>>peakSampling != (entered-n)>>peakSampling {
		inFlight = max(inFlight, res.inFlightSince())
	}
	if b.timed && !b.waits() {
		now = g.now(b) // the clock Exit reads
	}
	e.start, e.stripe = now, i
	st.stats.Add(now, window.Pass, n).RaisePeak(inFlight)
	return e, nil
}

// rejected counts n permits of res that Enter rejected at now with err (a
// block, or the end of the context of a request waiting for its turn) in
// the resource's statistics, in the stripe of cpu.
func (g *Guard) rejected(res *resource, err error, cpu uint32, now, n int64) {
	st, _ := res.stripe(cpu)
	st.stats.Add(now, window.Block, n)
	st.block.Add(n)
	reason := reasonCancelled
	if be, ok := err.(*BlockedError); ok {
		reason = reasonOf(be)
	}
	st.blockedBy[reason].Add(n)
}

// now reads the clock that times a request under the rules of b (its
// statistics and response time): the coarse clock when the Guard has one
// and no rule of b makes requests wait, else the Guard's clock. Enter and
// Exit read the same one, so that a response time is the difference of two
// readings of one clock.
func (g *Guard) now(b *binding) int64 {
	if c := g.coarse; c != nil && !b.waits() {
		return int64(c.Now())
	}
	return int64(g.clock.Now())
}

// decisionTime reads the clock the rules of b decide at: the Guard's clock
// when a rule of b keeps state in time (see binding.timed), else the clock
// of now. The coarse clock cannot serve such rules: its goroutine runs late
// when the host is busy, and a reading that lags by a varying amount makes
// a window span more real time than it should when the clock catches up
// (stamps written late expire early), and a retry hint early.
func (g *Guard) decisionTime(b *binding) int64 {
	if b.timed {
		return int64(g.clock.Now())
	}
	return g.now(b)
}

// waits reports whether a rule of b may make requests wait for their turn.
// Those rules come last.
func (b *binding) waits() bool {
	return len(b.rules) > 0 && b.rules[len(b.rules)-1].waits
}

// admit checks the rules of e's binding in order and waits for the turn the
// waiting ones gave the request. It returns the time the request proceeds,
// and the error that stops it; on error, the reservations made are given
// back. It notes e's quota, the policies of the rate rules in quotas (see
// WithQuotas) and the per-value reservations Exit releases.
// cpu is the caller's stripe index (see stripe.Picker), for the limiters
// that keep a share of their quota per CPU.
//
// Once a rule rejects the request, the rules after it are still asked,
// each permit they grant given back at once (take and undo: the limiters
// have no read-only question, and this costs only rejected requests), so
// that the error carries every rejection and the latest retry time.
func (g *Guard) admit(ctx context.Context, e *Entry, resource string, params Params, quotas *[]Quota, cpu uint32, now int64) (int64, error) {
	n := e.n
	// The reservations made so far, to give back on a later rejection. A
	// few fit on the stack: no allocation for those. Decisions are made in
	// place: a held is too large to copy around on every request.
	var stack [4]held
	admitted := stack[:0]
	var wait time.Duration
	// blocked is the error once a rule rejected the request; from then on
	// each decision is given back at once (see slot).
	var blocked *BlockedError
	first := 0 // the rule that blocked the request first, once blocked
	for i, rs := range e.b.rules {
		if blocked == nil {
			first = i
		}
		if br := rs.brk; br != nil {
			// A breaker: the first rules of the binding, so i is its
			// index among the binding's breakers.
			t, retry, ok := br.Allow(now)
			switch {
			case !ok:
				h := held{rs: rs, d: hotspot.Decision{Decision: flow.Decision{RetryAfter: retry}}}
				if blocked == nil {
					blocked = g.blockedAfter(resource, admitted, &h, cpu, now, n)
				} else {
					g.reject(blocked, &h, cpu, now, n)
				}
			case blocked != nil:
				br.Undo(t)
			default:
				var h *held
				admitted, h = push(admitted, rs)
				h.t = t
				if i == 0 {
					e.brk = t
				}
			}
			continue
		}
		if c := rs.conc; c != nil {
			// A concurrency rule: its reservation is one count, and
			// giving it back needs no decision.
			switch {
			case !c.AcquireOn(cpu, n):
				h := concHeld(rs)
				if blocked == nil {
					blocked = g.blockedAfter(resource, admitted, &h, cpu, now, n)
				} else {
					g.reject(blocked, &h, cpu, now, n)
				}
			case blocked != nil:
				c.ReleaseOn(cpu, n)
			default:
				admitted, _ = push(admitted, rs)
			}
			continue
		}
		if blocked != nil && rs.remote != nil {
			// A rule kept in a shared store is not asked after a
			// rejection: a round trip per rejected request would let a
			// flood that is rejected anyway load the store.
			continue
		}
		if rs.rule.Kind != KindHotspot {
			var h *held
			admitted, h = slot(admitted, rs, blocked != nil)
			if rs.remote != nil {
				h.key = rs.rule.Name
				if err := rs.remote.take(ctx, h, now, rs.remote.lim, "", n); err != nil {
					undo(admitted[:len(admitted)-1], cpu, n)
					evaluated(e.b.rules[:i+1], cpu, n)
					return now, err
				}
			} else {
				h.d.Decision = rs.flow.AcquireOn(cpu, now, n)
			}
			if !h.d.OK || blocked != nil {
				blocked = g.settle(blocked, admitted, h, resource, cpu, now, n)
				continue
			}
			e.quota.note(rs, h.d.Limit, h.d.Remaining)
			if quotas != nil {
				*quotas, _ = notePolicy(*quotas, rs.quota(h.d.Limit, h.d.Remaining))
			}
			wait = max(wait, h.d.Wait)
			continue
		}
		if params == nil {
			if m := rs.rule.OnMissing; m != MissingReject && m != MissingShared {
				continue
			}
			params = ParamMap(nil) // a request without params
		}
		v, ok := params.Param(rs.rule.Param, 0)
		if v != "" && v[0] == 0 {
			v = rs.escape(v)
		}
		if !ok {
			switch rs.rule.OnMissing {
			case MissingReject:
				var h *held
				admitted, h = slot(admitted, rs, blocked != nil)
				h.missing = true
				blocked = g.settle(blocked, admitted, h, resource, cpu, now, n)
				continue
			case MissingShared:
				v, ok = missingValue, true
			default:
				continue
			}
		}
		for k := 1; ok; k++ {
			if blocked != nil && rs.remote != nil {
				break // see above for a shared store's rule after a rejection
			}
			var h *held
			admitted, h = slot(admitted, rs, blocked != nil)
			if rr := rs.remote; rr != nil {
				lim := rr.limitOf(v)
				if lim.Limit == 0 {
					h.d.Decision = flow.Decision{RetryAfter: lim.Window} // blocked by an override of 0
				} else {
					h.key = valueKey(rs.rule.Name, v)
					if err := rr.take(ctx, h, now, lim, v, n); err != nil {
						undo(admitted[:len(admitted)-1], cpu, n)
						evaluated(e.b.rules[:i+1], cpu, n)
						return now, err
					}
				}
			} else {
				rs.hot.AcquireTo(&h.d, now, v, n)
			}
			if !h.d.OK || blocked != nil {
				blocked = g.settle(blocked, admitted, h, resource, cpu, now, n)
			} else {
				e.quota.note(rs, h.d.Limit, h.d.Remaining)
				if quotas != nil {
					*quotas, _ = notePolicy(*quotas, rs.quota(h.d.Limit, h.d.Remaining))
				}
				wait = max(wait, h.d.Wait)
			}
			if v, ok = params.Param(rs.rule.Param, k); v != "" && v[0] == 0 {
				v = rs.escape(v)
			}
		}
	}
	if blocked != nil {
		// The rules after the first to block were asked too, but those
		// with a store.
		for i, rs := range e.b.rules {
			if i <= first || rs.remote == nil {
				evaluated(e.b.rules[i:i+1], cpu, n)
			}
		}
		return now, blocked
	}
	if wait > 0 {
		if err := g.clock.Sleep(ctx, wait); err != nil {
			undo(admitted, cpu, n)
			evaluated(e.b.rules, cpu, n)
			return now, fmt.Errorf("sluice: %s: waiting %s for its turn: %w", resource, wait, err)
		}
		now += int64(wait)
	}
	if e.b.keeps {
		for i := range admitted {
			// Exit releases per-value slots and reports to the breakers
			// after the first.
			if rs := admitted[i].rs; rs.holds || rs.brk != nil && i > 0 {
				e.holds = append(e.holds, admitted[i])
			}
		}
	}
	return now, nil
}

// missingValue is the value of the requests without the param of a hotspot
// rule with onMissing shared. No request's own value is passed as it: such a
// rule passes a value starting with a NUL byte with one more in front (see
// ruleState.escape), so none is a lone NUL byte.
const missingValue = "\x00"

// escape returns v, a value starting with a NUL byte, as the hotspot rule
// rs limits it (see missingValue).
func (rs *ruleState) escape(v string) string {
	if rs.rule.OnMissing == MissingShared {
		return missingValue + v
	}
	return v
}

// push appends to admitted a reservation of rs, returned to be filled in.
// It is made in place: a held built and then copied is slower to write
// than its size suggests (the copy reads it back before it is stored).
// Elements past the length of admitted are zero: it only ever grows.
func push(admitted []held, rs *ruleState) ([]held, *held) {
	if len(admitted) < cap(admitted) {
		admitted = admitted[:len(admitted)+1]
	} else {
		admitted = append(admitted, held{})
	}
	h := &admitted[len(admitted)-1]
	h.rs = rs
	return admitted, h
}

// slot is push, but for a request already rejected (its reservations
// given back), whose decisions are given back one at a time: admitted then
// holds that one.
func slot(admitted []held, rs *ruleState, rejected bool) ([]held, *held) {
	if !rejected {
		return push(admitted, rs)
	}
	admitted = admitted[:1]
	admitted[0] = held{rs: rs}
	return admitted, &admitted[0]
}

// undo gives back the reservations of the rules that admitted a request
// on the CPU cpu after a later rule rejected it, or its wait was cancelled.
func undo(admitted []held, cpu uint32, n int64) {
	for i := range admitted {
		undoOne(&admitted[i], cpu, n)
	}
}

// undoOne gives back the reservation h.
func undoOne(h *held, cpu uint32, n int64) {
	switch rs := h.rs; {
	case rs.brk != nil:
		rs.brk.Undo(h.t)
	case rs.remote != nil:
		rs.remote.undo(h, n)
	case rs.hot != nil:
		rs.hot.Undo(h.d, n)
	case rs.flow != nil:
		rs.flow.Undo(h.d.Decision, n)
	default:
		rs.conc.ReleaseOn(cpu, n)
	}
}

// settle acts on the decision in h of a request that a rule rejected: the
// first rejection (blocked nil), whose h is the last of admitted, makes the
// request's error (blockedAfter); after it, a rejection is added to the
// error, and an admission noted in it and given back at once. It returns
// the error.
func (g *Guard) settle(blocked *BlockedError, admitted []held, h *held, resource string, cpu uint32, now, n int64) *BlockedError {
	switch {
	case blocked == nil:
		return g.blockedAfter(resource, admitted[:len(admitted)-1], h, cpu, now, n)
	case h.d.OK:
		blocked.passed(h, n)
		undoOne(h, cpu, n)
	default:
		g.reject(blocked, h, cpu, now, n)
	}
	return blocked
}

// concHeld returns the decision of the concurrency rule of rs that
// rejected a request.
func concHeld(rs *ruleState) held {
	lim, inFlight := rs.conc.Limit(), rs.conc.InFlight()
	return held{rs: rs, d: hotspot.Decision{Decision: flow.Decision{Limit: lim, Remaining: max(lim-inFlight, 0)}}}
}

// blocked returns the error of n requests at now on the CPU cpu that the
// rule of h rejected with h's decision, and counts them in the rule's
// statistics.
func (g *Guard) blocked(resource string, h *held, cpu uint32, now, n int64) *BlockedError {
	return g.blockedAfter(resource, nil, h, cpu, now, n)
}

// blockedAfter is blocked for a request that the rules of admitted admitted
// before the rule of h rejected it: it notes their quota policies in the
// error and gives their reservations back.
func (g *Guard) blockedAfter(resource string, admitted []held, h *held, cpu uint32, now, n int64) *BlockedError {
	a := &blockedAlloc{e: BlockedError{Resource: resource}}
	b := &a.e
	b.Policies = a.policies[:0]
	for i := range admitted {
		b.passed(&admitted[i], n)
	}
	undo(admitted, cpu, n)
	g.reject(b, h, cpu, now, n)
	if len(b.Policies) == 0 {
		b.Policies = nil
	}
	return b
}

// blockedAlloc is a BlockedError with room for its first policies: one
// allocation for both.
type blockedAlloc struct {
	e        BlockedError
	policies [2]Quota
}

// passed notes in b the quota policy of a rate rule that admitted the n
// permits of a request b's rules rejected: the quota left before them, as
// their reservation is given back.
func (b *BlockedError) passed(h *held, n int64) {
	if rs := h.rs; rs.window {
		b.note(rs.quota(h.d.Limit, h.d.Remaining+n))
	}
}

// reject adds to b the rejection of n requests at now by the rule of h,
// with h's decision, and counts it in the rule's statistics (once per
// request, however many values of a hotspot rule it rejects). The rule
// becomes the one b describes when it is the first to reject, when it
// never admits the request and none before it was found to, or when its
// retry time is later than theirs.
func (g *Guard) reject(b *BlockedError, h *held, cpu uint32, now, n int64) {
	rs, d := h.rs, &h.d
	never := rs.never(h, n)
	retry := d.RetryAfter
	if never {
		retry = 0
	}
	q := rs.quota(d.Limit, d.Remaining)
	q.Reset, q.Blocked = retry, true
	if rs.brk != nil || !b.note(q) { // a breaker is no quota policy
		rs.block(g, cpu, now, n)
	}
	if b.Kind != "" && (b.Never || !never && retry <= b.RetryAfter) {
		return
	}
	b.Rule, b.Kind, b.Param = rs.rule.Name, rs.rule.Kind, rs.rule.Param
	b.Limit, b.Window, b.Remaining = q.Limit, q.Window, q.Remaining
	b.RetryAfter, b.Never, b.Fallback = retry, never, h.fallback
}

// note adds the quota policy q to b's (notePolicy) and reports whether a
// rejection by q's rule was noted before.
func (b *BlockedError) note(q Quota) bool {
	var seen bool
	b.Policies, seen = notePolicy(b.Policies, q)
	return seen
}

// notePolicy appends the quota policy q to ps. A policy of the rule of the
// last one (another value of a hotspot rule) is merged into it instead: a
// rejection outweighs an admission, then the later retry time or the
// smaller quota left counts. notePolicy reports whether a rejection by q's
// rule was noted before.
func notePolicy(ps []Quota, q Quota) ([]Quota, bool) {
	if k := len(ps) - 1; k >= 0 && ps[k].Rule == q.Rule {
		p := &ps[k]
		seen := p.Blocked
		if q.Blocked != p.Blocked {
			if q.Blocked {
				*p = q
			}
		} else if q.Blocked && q.Reset > p.Reset || !q.Blocked && q.Remaining < p.Remaining {
			*p = q
		}
		return ps, seen
	}
	return append(ps, q), false
}

// never reports whether the rule of h can never admit the n permits of the
// request it decided with h's decision: its limit for the request (the
// configured one for a flow rule in memory, whose decision may carry a
// warm-up ramp's; the decision's, a value's own, for the others), plus a
// token bucket's burst, is below n, or the request lacks the param of a
// rule that rejects such requests (h.missing). A failure policy's decision (h.fallback)
// and a breaker's tell nothing of that.
func (rs *ruleState) never(h *held, n int64) bool {
	if h.missing {
		return true
	}
	if h.fallback || rs.brk != nil {
		return false
	}
	lim := h.d.Limit
	if rs.flow != nil {
		lim = rs.rule.Limit
	}
	return n > lim && n-lim > rs.rule.Burst
}

// Exit ends the request: it records its completion, response time and
// whether it failed (err != nil) in the resource's statistics, and releases
// its concurrency slots, per-value ones included. Calls after the first, and
// calls on the zero Entry, do nothing. Adapters call it from a deferred
// function, so it runs when a handler panics too.
func (e *Entry) Exit(err error) {
	if e.res == nil || e.done {
		return
	}
	e.done = true
	// Out of the resource's in-flight count before the slots are released,
	// so that the count never includes a request admitted into a freed slot
	// while this one is still counted: its peak never exceeds a limit.
	st := &e.res.stripes[e.stripe]
	st.exited.Add(e.n)
	for _, c := range e.b.conc {
		c.ReleaseOn(uint32(e.stripe), e.n)
	}
	for i := range e.holds {
		if h := &e.holds[i]; h.rs.hot != nil {
			h.rs.hot.Release(h.d, e.n)
		}
	}
	now := e.g.now(e.b)
	rt := max(now-e.start, 0)
	st.stats.AddRT(now, rt, err != nil)
	if rt != 0 {
		st.rt.Add(rt)
	}
	if err != nil {
		st.errors.Add(1)
	}
	if len(e.b.breakers) > 0 {
		e.b.breakers[0].brk.DoneOn(uint32(e.stripe), now, e.brk, time.Duration(rt), err != nil)
		for i := range e.holds {
			if h := &e.holds[i]; h.rs.brk != nil {
				h.rs.brk.DoneOn(uint32(e.stripe), now, h.t, time.Duration(rt), err != nil)
			}
		}
	}
}
