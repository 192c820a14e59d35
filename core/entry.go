package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/sluicekit/sluice/core/internal/breaker"
	"github.com/sluicekit/sluice/core/internal/hotspot"
	"github.com/sluicekit/sluice/core/internal/window"
)

// EnterOption adjusts one call of Enter.
type EnterOption struct {
	params Params // counted for WithCount's; four words: built in the caller's slice, not copied
	count  int64
	quotas *[]Quota
}

// counted is the params of a WithCount option, marking its count as given.
type counted struct{}

func (counted) Param(string, int) (string, bool) { return "", false }

// WithCount makes Enter acquire n permits instead of one: a flow rule counts
// n requests, a concurrency rule n slots. n must be at least 1: Enter
// returns an error otherwise. Statistics count at most 2^52 permits of one
// request, and their totals saturate at math.MaxInt64 rather than wrap.
func WithCount(n int64) EnterOption { return EnterOption{params: counted{}, count: n} }

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
// goroutines at once on the same Entry, nor on two copies of it: each copy's
// first Exit releases the request's slots.
type Entry struct {
	st       *resStripe // the statistics stripe the request was counted in
	b        *binding
	start, n int64
	stripe   uint8 // st's index
	level    uint8 // the request's priority level, for the rules that shed by it
	// w is the weight of the request's response time (see rtSampling): 1
	// when timed each (binding.timed, several permits), rtSampling for a
	// sample, 0 when Exit reads no clock.
	w uint8
	// kept has the bit (exitRule.bit) of each shadow rule of b.exits that
	// admitted the request: Exit ends it for those only.
	kept uint8
	brk  breaker.Ticket // of the binding's first breaker; the others' are in few and more
	// few and more are the reservations Exit ends (see traits.holds): the
	// first in place (keeping it allocates nothing), the others in more, as
	// each in place costs every Enter's copy of the Entry. Its size stays a
	// multiple of 16 bytes (see TestEntrySize); b leads to the clock.
	few  [1]hold
	more []hold
}

// hold is a reservation an admitted request keeps for Exit (traits.holds):
// its rule and what its exit needs: a hotspot rule's record, a breaker's ticket.
type hold struct {
	rs *ruleState
	h  hotspot.Hold
	t  breaker.Ticket
}

// keep keeps for Exit the reservation of h, a rule that admitted the request.
func (e *Entry) keep(h *held) {
	if k := (hold{rs: h.rs, h: h.d.Hold(), t: h.t}); e.few[0].rs == nil {
		e.few[0] = k
	} else {
		e.more = append(e.more, k)
	}
}

// held is a reservation a rule made for a request, and its decision. For
// flow and concurrency rules only d.Decision is used.
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
	// alone is true when the rule decided the request alone (lone): its
	// block counts as evaluated too (ruleStripe.lone).
	alone bool
	keep  bool           // kept for Exit (see traits.holds)
	level uint8          // the request's priority level (asking.priority)
	t     breaker.Ticket // for a breaker rule
}

// ending is the end of an admitted request (Exit), as the rules that keep
// something for Exit are told of it (gone: see Exit).
type ending struct {
	cpu          uint32
	now, rt, n   int64
	failed, gone bool
	level        uint8 // the request's priority level (Entry.level)
	brk          breaker.Ticket
}

// quota returns the quota policy of the rule of rs after a decision that
// left remaining under the limit lim (the value's, for a hotspot rule).
func (rs *ruleState) quota(lim, remaining int64) Quota {
	r := &rs.rule
	if rs.ramps {
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

// Enter asks to pass one request of resource (a route template such as
// "GET /items/{id}" or a gRPC method). It returns an Entry to Exit when the
// request is done, or an error: a *BlockedError (errors.Is(err, ErrBlocked))
// when a rule rejects the request, ctx's error when ctx ends while the
// request waits for its turn (leaky-bucket rules), or an error describing
// bad arguments. Every rule whose resource matches applies (see "Rules" and
// "Blocked requests" in the package doc); hotspot rules read the params
// they name from WithParams (see Rule.OnMissing for a request without).
// With rules that never wait Enter does not block; ctx is only consulted
// when the request must wait, and for its priority level (WithPriority) by
// the rules that shed by level.
func (g *Guard) Enter(ctx context.Context, resource string, opts ...EnterOption) (e Entry, err error) {
	err = g.enter(ctx, &e, resource, nil, opts)
	return
}

// EnterLazy is Enter for a request whose params cost something to gather
// (an adapter lending a holder from a pool, say): it calls params, at most
// once and before it returns, only when a rule that decides the request
// reads params (a hotspot rule's Param, a Priority param), and hands Enter
// what it returns as WithParams would. Whether params are read is told by
// the same rules that then decide the request, so a request entering while
// SetRules replaces the rules is never decided by rules reading params
// without them. EnterLazy keeps no reference to params once it returns: a
// closure passed here costs no allocation. A WithParams option, if given,
// is used instead, and params is not called; a nil params is Enter.
func (g *Guard) EnterLazy(ctx context.Context, resource string, params func() Params, opts ...EnterOption) (e Entry, err error) {
	err = g.enter(ctx, &e, resource, params, opts)
	return
}

// enter is Enter writing the Entry to e, the caller's (a copy fewer than
// returning it), gathering the request's params with lazy (see EnterLazy)
// when no option gives them.
func (g *Guard) enter(ctx context.Context, e *Entry, resource string, lazy func() Params, opts []EnterOption) (err error) {
	n := int64(1)
	var params Params
	var quotas *[]Quota
	for i := range opts {
		o := &opts[i] // not a copy: it would stall on reading back the caller's writes
		if _, ok := o.params.(counted); ok {
			n = o.count
		} else if o.params != nil {
			params = o.params
		}
		if o.quotas != nil {
			quotas = o.quotas
		}
	}
	if n < 1 {
		return fmt.Errorf("sluice: Enter %s: count must be >= 1, got %d", quote(resource), n)
	}
	if ctx == nil { // else a panic once a request must wait, or a rule reads its priority
		return fmt.Errorf("sluice: Enter %s: ctx is nil", quote(resource))
	}
	res, cached := g.resources.hit(resource), true
	if res == nil {
		res, cached = g.resources.get(resource)
	}
	b := g.bindingOf(res, resource, cached)
	cpu := g.resources.picker.Pick()
	e.b, e.n = b, n
	var now int64
	if len(b.rules) > 0 {
		if params == nil && lazy != nil && b.params {
			params = lazy()
		}
		now = b.read()
		// The only rule of a binding may decide a request alone (lone), a
		// call fewer than admit; its decision is acted on as admit's: a
		// quota noted (asking.decided), an error made (Guard.blocked).
		var l lone // field by field: a composite literal is built apart and copied
		l.params, l.cpu, l.now, l.n, l.quota = params, cpu, now, n, quotas != nil
		switch rs := b.alone; {
		case rs == nil || !l.decide(rs):
			now, err = g.admit(ctx, e, resource, params, quotas, cpu, now)
		case !l.d.OK:
			err = g.blocked(b, resource, rs, &l.d.Decision, cpu, now, n)
		case quotas != nil && rs.window:
			*quotas = rs.noteQuota(*quotas, &l.d.Decision)
		}
	}
	if !cached {
		b.overflowed(cpu, n, err == nil)
	}
	if err != nil {
		g.rejected(res, err, cpu, now, n)
		if g.blockHooks != nil {
			g.callBlockHooks(ctx, err)
		}
		*e = Entry{}
		return err
	}
	st, i := res.stripes.of(cpu)
	w := int64(1) // see Entry.w
	if !b.timed && n == 1 {
		w = 0
		if st.entered.Load()%rtSampling == 0 { // the first of each rtSampling
			w = rtSampling
		}
	}
	var bk *window.Bucket
	switch {
	case len(b.rules) == 0:
		// Statistics only: a request not timed reads no clock, and counts
		// in the stripe's newest bucket (see rtSampling).
		if w == 0 {
			bk = st.stats.Latest()
		}
		if bk == nil {
			now = b.read()
		}
	case b.stored && !b.wait:
		now = b.read() // after the store's round trip (binding.stored)
	}
	if bk == nil {
		if bk = st.stats.Cached(now); bk == nil { // before the totals (see window.NewMarked)
			bk = st.stats.Current(now)
		}
	}
	// Before the atomic add, which waits for the writes before it: the
	// copy of e returned then does not stall on reading them back.
	e.st, e.start, e.stripe, e.w = st, now, i, uint8(w)
	entered := count(&st.entered, n)
	inFlight := entered - st.exited.Load()
	if entered>>peakSampling != (entered-n)>>peakSampling {
		inFlight = max(inFlight, res.inFlightSince())
	}
	bk.RaisePeak(inFlight)
	return nil
}

// rejected counts n permits of res that Enter rejected at now with err (a
// block, or the end of the context of a request waiting for its turn) in
// the resource's statistics, in the stripe of cpu.
func (g *Guard) rejected(res *resource, err error, cpu uint32, now, n int64) {
	st, _ := res.stripes.of(cpu)
	st.stats.Current(now) // before the count (see window.NewMarked)
	why := reasonCancelled
	if be, ok := err.(*BlockedError); ok {
		why = reasonOf(be)
	}
	count(&st.blockedBy[why], n)
}

// read reads the Guard's clock: on the system clock, time.Since itself, a
// call fewer than through clock.Clock.
func (b *binding) read() int64 { return int64(b.since(b.origin)) }

// Exit ends the request: it records its completion, response time and
// whether it failed (err != nil) in the resource's statistics, releases
// its concurrency slots, per-value ones included, and tells breakers the
// outcome. An err that is or wraps context.Canceled or DeadlineExceeded
// says its caller gave up: it fails, is no completion for system rules
// (StrategyBBR), adaptive rules count its response time only over their
// minimum, and breakers only as slow, once it ran longer than a slow-ratio
// breaker's MaxRT. Adapters call it from a deferred function, so it runs
// when a handler panics too. It reads the clock only for a request whose
// response time is used (Entry.w; "Time" in the package doc).
func (e *Entry) Exit(err error) {
	st := e.st
	if st == nil {
		return
	}
	e.st = nil // done: later calls do nothing
	w := int64(e.w)
	if w == 0 { // not timed: one permit, in the histogram's first bucket
		ends := len(e.b.exits) > 0 || e.few[0].rs != nil // before the add: after it, a stall of 10 ns
		count(&st.exited, 1)                             // out of the in-flight count first (see below)
		if ends {
			e.end(0, 0, err) // no rule of b reads the time (limiter.times)
		}
		if err != nil {
			st.errors.Add(1)
		}
		return
	}
	now := e.b.read()
	rt := max(now-e.start, 0)
	bk := st.stats.Current(now) // before the totals (see window.NewMarked)
	// Out of the resource's in-flight count before the slots are released,
	// so that the count never includes a request admitted into a freed slot
	// while this one is still counted: its peak never exceeds a limit.
	st.exit(e.n, rt, w)
	if len(e.b.exits) > 0 || e.few[0].rs != nil { // more only after few
		e.end(now, rt, err)
	}
	if rt != 0 {
		st.rt.Add(rt * w)
	}
	if err != nil {
		st.errors.Add(1)
	}
	bk.LowerMinRT(rt)
}

// end tells the rules that keep something for Exit that the request ended
// at now after rt, with err (see Exit).
func (e *Entry) end(now, rt int64, err error) {
	end := ending{cpu: uint32(e.stripe), now: now, rt: rt, n: e.n, failed: err != nil, level: e.level, brk: e.brk}
	end.gone = end.failed && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
	for _, x := range e.b.exits {
		if x.bit&^e.kept == 0 {
			x.rs.lim.exit(hold{}, end)
		}
	}
	for i := 0; i < len(e.few) && e.few[i].rs != nil; i++ {
		e.few[i].rs.lim.exit(e.few[i], end)
	}
	for _, h := range e.more {
		h.rs.lim.exit(h, end)
	}
}
