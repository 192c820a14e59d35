package core

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sluicekit/sluice/core/internal/breaker"
	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/hotspot"
)

// lone is a request that the only rule of its binding decides by itself
// (lone.decide): what the rule reads, and its decision, written in place
// (see asking.few).
type lone struct {
	params Params
	cpu    uint32
	now, n int64
	quota  bool // the quota of an admission is noted (WithQuotas)
	d      hotspot.Decision
}

// noteQuota notes in ps (notePolicy) the quota policy of the rule of rs
// after its decision d admitted a request: quota's, but when d leaves no
// quota (d.Next), Reset is the time from when the request proceeds (after
// d.Wait) until the next request would be admitted, rounded up to the
// millisecond: what a rejection right after it tells.
func (rs *ruleState) noteQuota(ps []Quota, d *flow.Decision) []Quota {
	q := rs.quota(d.Limit, d.Remaining)
	if next := d.Next - d.Wait; q.Remaining == 0 && next > 0 {
		q.Reset = ceilMilli(next)
	}
	ps, _ = notePolicy(ps, q)
	return ps
}

// admit decides the request e of resource that no rule decides alone
// (Guard.enter): it asks the rules of e's binding in order (asking.ask),
// then waits for the turn they gave it. It returns when the request
// proceeds, and the error that stops it, the reservations made given back;
// it notes the quotas of the rate rules that admit it (WithQuotas) and
// the reservations Exit ends (Entry.keep). The rules after a rejecting
// one are asked too, but those kept in a store (traits.shared).
func (g *Guard) admit(ctx context.Context, e *Entry, resource string, params Params, quotas *[]Quota, cpu uint32, now int64) (int64, error) {
	n := e.n
	// Field by field: a composite literal is built apart and copied.
	var a asking
	a.g, a.b, a.ctx, a.resource, a.params = g, e.b, ctx, resource, params
	a.cpu, a.now, a.n = cpu, now, n
	if quotas != nil {
		a.policies, a.quotas = *quotas, true
	}
	rules := e.b.rules
	first := 0 // the rule that blocked the request first, once blocked
	var err error
	for i, rs := range rules {
		if a.blocked == nil {
			first = i
		} else if rs.shared {
			continue
		}
		if err = a.ask(rs); err != nil {
			undo(a.admitted(), cpu, n)
			evaluated(rules[:i+1], cpu, n)
			break
		}
	}
	if quotas != nil {
		*quotas = a.policies
	}
	switch {
	case err != nil:
		a.release()
		return now, err
	case a.blocked != nil:
		// Evaluated by every rule asked: up to the first to block, and
		// those after it not in a store.
		for i, rs := range rules {
			if i <= first || !rs.shared {
				evaluated(rules[i:i+1], cpu, n)
			}
		}
		a.release()
		return now, g.shared(e.b, a.scratch)
	}
	if a.wait > 0 {
		if err := g.clock.Sleep(ctx, a.wait); err != nil {
			undo(a.admitted(), cpu, n)
			evaluated(rules, cpu, n)
			a.release()
			return now, fmt.Errorf("sluice: %s: waiting %s for its turn: %w", resource, a.wait, err)
		}
		now += int64(a.wait)
	}
	e.brk, e.level, e.kept = a.brk, a.level, a.kept
	if e.b.keeps {
		for _, h := range a.admitted() {
			if h.keep {
				e.keep(&h)
			}
		}
	}
	a.release()
	return now, nil
}

// asking is a request that admit is asking the rules about, as the kinds'
// ask methods see it. It keeps its first reservations inline and points to
// nothing on the stack (the request's Entry, the caller's quotas): escape
// analysis does not tell its fields apart, so as its error goes to the
// heap, so would they.
type asking struct {
	g        *Guard
	b        *binding
	ctx      context.Context
	resource string
	params   Params
	cpu      uint32
	now, n   int64
	// policies are the quota policies of the rate rules that admitted the
	// request so far (WithQuotas), when quotas is true.
	policies []Quota
	quotas   bool
	// level is the request's priority level once leveled (see priority).
	level   uint8
	leveled bool
	brk     breaker.Ticket // for Entry.brk
	kept    uint8          // for Entry.kept
	wait    time.Duration  // the longest wait for a turn so far
	// blocked is the error once a rule rejected the request; from then on
	// each decision is given back at once (see slot).
	blocked *BlockedError
	scratch *blockedAlloc // of blocked, for Guard.shared
	// The reservations made so far, to give back on a later rejection: a
	// few in place (no allocation for those), the others in more.
	// Decisions are written in place (slot): a decision built and then
	// copied is slower than its size suggests, as the copy reads it back
	// before it is stored. Those past the last one made are zero.
	few  [4]held
	used int    // of few; len(few) once rejected or in more, for slot
	more []held // all of them, once they do not fit in few
	// pooled is the array of more, taken from Guard.helds and given back
	// by release: a request asking many rules allocates nothing.
	pooled *[]held
}

// release gives the array of more back to the Guard's pool, cleared so
// that the pool keeps no rule or key alive. The reservations are not used
// afterwards: the Entry keeps its own (Entry.keep).
func (a *asking) release() {
	if p := a.pooled; p != nil {
		a.clearMore()
		a.g.pools.helds.Put(p)
		a.pooled = nil
	}
}

// clearMore clears the reservations of more, once given back or copied,
// and keeps its array, grown or not, in a.pooled.
func (a *asking) clearMore() {
	if a.more != nil {
		clear(a.more)
		*a.pooled = a.more[:0]
		a.more = nil
	}
}

// admitted returns the reservations made so far.
func (a *asking) admitted() []held {
	switch {
	case a.more != nil:
		return a.more
	case a.blocked != nil:
		return a.few[:1] // see slot
	}
	return a.few[:a.used]
}

// slot returns a reservation of rs to fill in, after those made so far.
// Once the request is rejected, its decisions are given back one at a
// time: the reservations made are then only that one.
func (a *asking) slot(rs *ruleState) *held {
	var h *held
	switch {
	case a.used < len(a.few):
		h = &a.few[a.used]
		a.used++
	case a.blocked != nil:
		a.clearMore() // given back by blockedAfter
		a.few[0] = held{}
		h = &a.few[0]
	default:
		if a.more == nil {
			p, _ := a.g.pools.helds.Get().(*[]held)
			if p == nil {
				s := make([]held, 0, 2*len(a.few))
				p = &s
			}
			a.pooled = p
			a.more = append((*p)[:0], a.few[:]...)
		}
		a.more = append(a.more, held{})
		h = &a.more[len(a.more)-1]
	}
	h.rs = rs
	return h
}

// keep keeps the reservation in h, of a request the rule admitted, for
// Exit: a bit of Entry.kept for a shadow rule of b.exits, else kept by
// Entry.keep.
func (a *asking) keep(h *held) {
	for _, x := range a.b.exits {
		if x.rs == h.rs && x.bit != 0 {
			a.kept |= x.bit
			return
		}
	}
	h.keep = true
}

// drop removes the last reservation slot returned, which was not made,
// before any rejection.
func (a *asking) drop() {
	if k := len(a.more) - 1; k >= 0 {
		a.more[k] = held{}
		a.more = a.more[:k]
	} else {
		a.used--
		a.few[a.used] = held{}
	}
}

// decided acts on the decision in h, the last slot, of a rate rule (flow or
// hotspot): an admission notes the request's quota, policy and wait; any
// other decision, or one after a rejection, is settled.
func (a *asking) decided(h *held) {
	if !h.d.OK || a.blocked != nil {
		a.settle(h)
		return
	}
	rs := h.rs
	if rs.shadow {
		a.shadowQuota(h) // and no wait
		return
	}
	if a.quotas {
		a.policies = rs.noteQuota(a.policies, &h.d.Decision)
	}
	a.wait = max(a.wait, h.d.Wait)
}

// settle acts on the decision in h, the last slot, of a request that a rule
// rejected: the first rejection makes the request's error (blockedAfter);
// after it, a rejection is added to the error, and an admission noted in it
// and given back at once.
func (a *asking) settle(h *held) {
	switch {
	case h.rs.shadow && !h.d.OK:
		a.shadow(h)
	case a.blocked == nil:
		made := a.admitted()
		a.scratch = a.g.blockedAfter(a.resource, made[:len(made)-1], h, a.cpu, a.now, a.n)
		a.blocked = &a.scratch.e
		a.used = len(a.few) // see slot
	case h.d.OK:
		a.blocked.passed(h, a.n)
		h.rs.lim.undo(*h, a.cpu, a.n)
	default:
		a.g.reject(a.blocked, h, a.cpu, a.now, a.n)
	}
}

// undo gives back the reservations of the rules that admitted a request
// on the CPU cpu after a later rule rejected it, or its wait was cancelled.
func undo(admitted []held, cpu uint32, n int64) {
	for i := range admitted {
		admitted[i].rs.lim.undo(admitted[i], cpu, n)
	}
}

// blocked returns the error of n requests of resource at now on the CPU
// cpu that rs, the only rule of b, rejected alone with decision d, as
// admit's (asking.settle), and counts them in the rule's statistics,
// blocked and evaluated (ruleStripe.lone). A flood of rejections allocates
// nothing: the error is b's last one when that is the same error (an
// error is never changed once returned, and its Policies have no room to
// append in place). This pays: an error of its own per rejection (240 B)
// took a flow rule's rejection from 76 to 264 ns of process CPU time, GC
// included (BenchmarkBlockedSluiceFlow in core/internal/peerbench).
func (g *Guard) blocked(b *binding, resource string, rs *ruleState, d *flow.Decision, cpu uint32, now, n int64) *BlockedError {
	by := rejectionKey{rs: rs, limit: d.Limit, remaining: max(d.Remaining, 0)}
	if rs.ramps {
		by.limit = rs.rule.Limit // the limit advertised (see quota)
	}
	if by.never = rs.neverAt(d.Limit, n); !by.never {
		by.retry = ceilMilli(d.RetryAfter)
	}
	if last := b.rejection.Load(); last != nil && last.by.same(&by) && last.e.Resource == resource {
		rs.block(g, cpu, now, n, false, true)
		return &last.e
	}
	s := g.blockedAfter(resource, nil, &held{rs: rs, d: hotspot.Decision{Decision: *d}, alone: true}, cpu, now, n)
	s.by = by
	return g.shared(b, s)
}

// shared returns the error s holds, of a request of b: b's last one
// instead when that is the same, s then going back to the Guard's pool.
func (g *Guard) shared(b *binding, s *blockedAlloc) *BlockedError {
	e := &s.e
	if last := b.rejection.Load(); last != nil && last.e.same(e) {
		*s = blockedAlloc{}
		g.pools.blockeds.Put(s)
		return &last.e
	}
	e.Policies = slices.Clip(e.Policies)
	b.rejection.Store(s)
	return e
}

// same reports whether e and o tell the same.
func (e *BlockedError) same(o *BlockedError) bool {
	return e.Resource == o.Resource && e.Rule == o.Rule && e.Kind == o.Kind && e.Param == o.Param && e.Limit == o.Limit &&
		e.Window == o.Window && e.Remaining == o.Remaining && e.RetryAfter == o.RetryAfter && e.Fallback == o.Fallback &&
		e.Never == o.Never && slices.Equal(e.Policies, o.Policies)
}

// blockedAfter is blocked for a request that the rules of admitted admitted
// before the rule of h rejected it: it notes their quota policies in the
// error and gives their reservations back.
func (g *Guard) blockedAfter(resource string, admitted []held, h *held, cpu uint32, now, n int64) *blockedAlloc {
	a, _ := g.pools.blockeds.Get().(*blockedAlloc)
	if a == nil {
		a = new(blockedAlloc)
	}
	b := &a.e
	b.Resource = resource
	b.Policies = a.policies[:0]
	for i := range admitted {
		b.passed(&admitted[i], n)
	}
	undo(admitted, cpu, n)
	g.reject(b, h, cpu, now, n)
	if len(b.Policies) == 0 {
		b.Policies = nil
	}
	return a
}

// blockedAlloc is a BlockedError with room for its first policies: one
// allocation for both, none when the Guard's pool has one (Guard.shared).
type blockedAlloc struct {
	e        BlockedError
	policies [2]Quota
	// by is what made e when one rule rejected a request alone
	// (Guard.blocked); the zero key otherwise.
	by rejectionKey
}

// rejectionKey is what makes the error of a request that the rule rs
// rejected alone, besides the resource: the inputs of Guard.reject, as far
// as they change the quota policy it notes.
type rejectionKey struct {
	rs               *ruleState
	limit, remaining int64
	retry            time.Duration
	never            bool
}

// same reports whether k and o are equal, field by field: == compares the
// struct's memory with a call.
func (k *rejectionKey) same(o *rejectionKey) bool {
	return k.rs == o.rs && k.limit == o.limit && k.remaining == o.remaining && k.retry == o.retry && k.never == o.never
}

// passed notes in b the quota policy of a rate rule that admitted the n
// permits of a request b's rules rejected: the quota left before them, as
// their reservation is given back.
func (b *BlockedError) passed(h *held, n int64) {
	if rs := h.rs; rs.window && !rs.quiet {
		b.Policies, _ = notePolicy(b.Policies, rs.quota(h.d.Limit, h.d.Remaining+n))
	}
}

// reject adds to b the rejection of n requests at now by the rule of h,
// with h's decision, and counts it in the rule's statistics (once per
// request, however many values of a hotspot rule it rejects); the rule
// becomes the one b describes as BlockedError.Rule says. The request is
// never admitted when it lacks the param of a rule that rejects such
// requests (h.missing), or the rule's limit is below n (neverAt), which a
// failure policy's decision (h.fallback) tells nothing of. Its quota
// policy's Reset is the retry time rounded up to the millisecond (no
// adapter tells a finer one; a flood of rejections then makes the same
// error for a millisecond, see Guard.blocked), 0 when never.
func (g *Guard) reject(b *BlockedError, h *held, cpu uint32, now, n int64) {
	rs, d := h.rs, &h.d
	never := h.missing || !h.fallback && rs.neverAt(d.Limit, n)
	var retry time.Duration
	if !never {
		retry = ceilMilli(d.RetryAfter)
	}
	q := rs.quota(d.Limit, d.Remaining)
	q.Reset, q.Blocked = retry, true
	seen := false                   // a rejection by rs noted before
	if !rs.gate && rs.class.Quota { // a gate or a system rule is no quota policy
		b.Policies, seen = notePolicy(b.Policies, q)
	}
	if !seen {
		rs.block(g, cpu, now, n, false, h.alone)
	}
	if b.Kind != "" && (b.Never || !never && retry <= b.RetryAfter) {
		return
	}
	b.Rule, b.Kind, b.Param, b.class = rs.rule.Name, rs.rule.Kind, rs.rule.Param, rs.class
	b.Limit, b.Window, b.Remaining = q.Limit, q.Window, q.Remaining
	b.RetryAfter, b.Never, b.Fallback = retry, never, h.fallback
}

// ceilMilli returns d rounded up to the millisecond.
func ceilMilli(d time.Duration) time.Duration {
	if r := d % time.Millisecond; r > 0 && d <= math.MaxInt64-time.Millisecond {
		return d + time.Millisecond - r
	}
	return d
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
		if q.Blocked && (!p.Blocked || q.Reset > p.Reset) || !q.Blocked && !p.Blocked && q.Remaining < p.Remaining {
			*p = q
		}
		return ps, seen
	}
	return append(ps, q), false
}

// neverAt reports whether the rule of rs, deciding with limit lim, can
// never admit n permits: its limit for the request (the configured one for
// a flow rule in memory, whose decision may carry a warm-up ramp's; the
// decision's, a value's own, for the others), plus a token bucket's burst,
// is below n; a kind whose decisions' limits say nothing of that tells it
// (traits.over). A gate's decision tells nothing of that.
func (rs *ruleState) neverAt(lim, n int64) bool {
	if rs.gate || rs.adapts && n <= max(rs.rule.MaxLimit, 1) {
		return false
	}
	if rs.over != nil {
		return rs.over(n)
	}
	if rs.ramps {
		lim = rs.rule.Limit
	}
	return n > lim && n-lim > rs.rule.Burst
}
