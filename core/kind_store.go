package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"

	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/hotspot"
	"github.com/sluicekit/sluice/core/ratemath"
	"github.com/sluicekit/sluice/core/store"
)

// storeKind is a flow or hotspot rule with a store.
type storeKind struct {
	perValue  bool // a hotspot rule's: it limits each value of its param
	s         store.Store
	b         *storeHealth // of the rule's mode
	lim       store.Limit
	policy    FailurePolicy
	overrides map[string]int64 // a hotspot rule's (the rule's own copy)
	// The limiters of the local failure policy, at LocalLimit: local for
	// a flow rule, localHot for a hotspot rule.
	local    flow.Limiter
	localHot *hotspot.Limiter
}

// storeFields are the fields of a flow or hotspot rule that keeps its
// counts in a store.
func storeFields() []fieldSpec {
	return []fieldSpec{
		{key: "store", doc: "The shared store (given to the Guard with WithStore) that keeps the rule's counts for every instance. Empty: the Guard's memory."},
		{key: "mode", doc: "With a store: exact (a round trip per decision) or approximate (local decisions synchronized periodically).",
			def: "exact", enum: []string{"exact", "approximate"}},
		{key: "onFailure", doc: "With a store, while it fails: local (decide on localLimit), open (admit) or closed (reject).",
			def: "local", enum: []string{"local", "open", "closed"}},
		{key: "localLimit", doc: "With a store and onFailure local: this process's limit per window while the store fails (default limit).",
			unit: "requests", min: 0},
	}
}

// flowTraits are the traits of a flow rule of algorithm alg, in memory or
// in a store.
func flowTraits(alg flow.Algorithm) traits {
	return traits{waits: alg == flow.LeakyBucket, window: true, refills: alg == flow.LeakyBucket || alg == flow.TokenBucket, ramps: true}
}

// newStoreKind makes the limiter of rule r, which has a store, carrying the
// local fallback's state over from prev; perValue for a hotspot rule.
func newStoreKind(g *Guard, r Rule, prev limiter, perValue bool) (limiter, traits, error) {
	conn := g.stores[r.Store]
	if conn == nil {
		return nil, traits{}, fmt.Errorf("store %s is not given to the Guard (core.WithStore)", quote(r.Store))
	}
	k := &storeKind{perValue: perValue, s: conn.s, policy: r.OnFailure, overrides: r.Overrides, lim: store.Limit{
		Algorithm: r.Algorithm, Limit: r.Limit, Window: r.Window, Burst: r.Burst, MaxWait: r.MaxWait, Mode: store.Mode(r.Mode)}}
	if err := k.lim.Validate(); err != nil {
		return nil, traits{}, err
	}
	k.b = &conn.exact
	if k.lim.Mode == store.Approximate {
		k.b = &conn.approx
	}
	t := flowTraits(flow.Algorithm(k.lim.Algorithm))
	t.ramps, t.shared = false, true
	if r.OnFailure != FailLocal {
		return k, t, nil
	}
	p, ok := prev.(*storeKind)
	if !ok {
		p = &storeKind{} // no local state to carry over
	}
	local := r
	local.Limit = r.LocalLimit
	if r.Limit > 0 && r.LocalLimit != r.Limit && perValue { // each value's share, as LocalLimit is Limit's
		local.Overrides = maps.Clone(r.Overrides)
		for v, o := range local.Overrides {
			if o > 0 {
				local.Overrides[v] = max(ratemath.MulDiv(o, r.LocalLimit, r.Limit), 1)
			}
		}
	}
	var err error
	if now := int64(g.clock.Now()); perValue {
		k.localHot, err = hotspot.Reload(local.hotspotConfig(), p.localHot, now)
	} else {
		k.local, err = flow.Reload(local.flowConfig(), p.local, now)
	}
	return k, t, err
}

// ask does not run after a rejection (traits.shared): a round trip per
// rejected request would let a flood that is rejected anyway load the store.
func (k *storeKind) ask(a *asking, rs *ruleState) error {
	if !k.perValue {
		h := a.slot(rs)
		h.key = rs.rule.Name
		if err := k.take(a.ctx, h, a.now, k.lim, "", a.n); err != nil {
			a.drop()
			return err
		}
		a.decided(h)
		return nil
	}
	v, ok := a.firstValue(rs)
	for i := 1; ok && a.blocked == nil; i++ {
		h := a.slot(rs)
		lim := k.lim
		if o, ok := k.overrides[v]; ok {
			lim.Limit = o
		}
		if lim.Limit == 0 {
			h.d.Decision = flow.Decision{RetryAfter: lim.Window} // blocked by an override of 0
		} else {
			h.key = valueKey(rs.rule.Name, v)
			if err := k.take(a.ctx, h, a.now, lim, v, a.n); err != nil {
				a.drop()
				return err
			}
		}
		a.decided(h)
		v, ok = a.value(rs, i)
	}
	return nil
}

// valueKey returns the store key of a hotspot rule's value: the rule's name
// and the value ("=" before it), or a SHA-256 of a long value ("#" before
// it), so that keys stay short and the same in every instance, and no short
// value a client sends names a long value's key.
func valueKey(rule, value string) string {
	if len(value) <= 64 {
		return rule + "\x00=" + value
	}
	sum := sha256.Sum256([]byte(value))
	return rule + "\x00#" + hex.EncodeToString(sum[:16])
}

// take decides n requests at now in h: under h.key in the store, or by the
// failure policy (h.fallback). For a hotspot rule, lim is the value's limit
// and value the value, which the local policy limits. It returns an error
// only when ctx ended during the store's call.
func (k *storeKind) take(ctx context.Context, h *held, now int64, lim store.Limit, value string, n int64) error {
	b := k.b
	if round, ok := b.allow(now); ok {
		var start int64 // the call's, when calls are timed
		if b.budget > 0 {
			start = int64(b.clock.Now())
		}
		d, err := k.s.Take(ctx, h.key, lim, n)
		if err == nil {
			b.succeeded(start, round)
			setFromStore(&h.d.Decision, &d)
			return nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			b.abandoned(now, round)
			return err // the caller gave up: not the store's failure
		}
		if errors.Is(err, store.ErrKeyUnavailable) {
			b.abandoned(now, round) // a key the store cannot decide yet: not its failure
		} else {
			b.failed(now, round, err)
		}
	}
	b.fallbacks.Add(1)
	h.rs.stats.fallbacks.Add(1)
	h.fallback = true
	switch {
	case k.policy == FailOpen:
		h.d.Decision = flow.Decision{OK: true, Limit: lim.Limit, Remaining: lim.Limit}
	case k.policy == FailClosed:
		h.d.Decision = flow.Decision{Limit: lim.Limit, RetryAfter: b.retryAfter(now)}
	case k.localHot != nil:
		h.d = k.localHot.Acquire(now, value, n)
	default:
		h.d.Decision = k.local.Acquire(now, n)
	}
	return nil
}

func (k *storeKind) undo(h held, _ uint32, n int64) {
	switch {
	case !h.fallback:
		// Best effort: a failure leaves the reservation counted until the
		// window moves on.
		lim := k.lim
		lim.Limit = h.d.Limit
		_ = k.s.Undo(context.Background(), h.key, lim, toStore(&h.d.Decision), n)
	case k.policy != FailLocal:
	case k.localHot != nil:
		k.localHot.Undo(h.d, n)
	default:
		k.local.Undo(h.d.Decision, n)
	}
}

// setFromStore sets f to the decision a Guard keeps of a Store's decision
// d, with d's record for Undo (toStore gives it back). Field by field, in
// place: a decision is on the path of every approximate Take.
func setFromStore(f *flow.Decision, d *store.Decision) {
	f.OK, f.Wait, f.Limit, f.Remaining, f.RetryAfter, f.Next = d.OK, d.Wait, d.Limit, d.Remaining, d.RetryAfter, d.Next
	f.SetUndoState(d.Ref, d.Mark[0], d.Mark[1])
}

// toStore returns the Store's decision that f was made of (setFromStore).
func toStore(f *flow.Decision) (d store.Decision) {
	ref, mark, frac := f.UndoState()
	d.OK, d.Wait, d.Limit, d.Remaining, d.RetryAfter, d.Next = f.OK, f.Wait, f.Limit, f.Remaining, f.RetryAfter, f.Next
	d.Ref, d.Mark = ref, [2]int64{mark, frac}
	return d
}

func (*storeKind) exit(hold, ending) {}

func (*storeKind) times() bool { return false }

func (*storeKind) stats(*RuleStats, int64) {}
