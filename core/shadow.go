package core

// WithShadow makes every rule of the Guard a shadow rule (Rule.Shadow), as
// if each had shadow: true: limits are evaluated and counted, and never
// enforced. Guard.Rules reports them with Shadow set.
//
// A shadow rule is asked about each request as an enforced one is, and
// keeps the same state: what it admits it counts (a flow rule's permit, a
// concurrency rule's slot, held until Exit; a breaker records the outcome
// at Exit), and a request it would reject takes nothing of it (no permit,
// no slot, no outcome), as the rejected request would not have. The
// request goes on: it is not blocked, a leaky-bucket rule does not make it
// wait for its turn, and a shadow rule's rejection is in no BlockedError
// (nor its retry time). Instead the rule counts it (RuleStats.Shadowed),
// and the Guard logs it as it logs blocks, marked shadow, at most once
// every 10 seconds per rule. A shadow rule's quota policies are left out of
// WithQuotas and BlockedError.Policies (so adapters send no
// RateLimit fields for it) unless WithShadowQuotas.
func WithShadow() Option {
	return option(false, "", func(cfg *config) { cfg.shadowAll = true })
}

// WithShadowQuotas makes the quota policies of shadow rules reported as
// those of the other rules are (WithQuotas,
// BlockedError.Policies), so that adapters send their RateLimit fields: a
// request a shadow rule would have rejected passes with its policy's
// Remaining 0. A request another rule blocks lists a shadow rule's policy
// when the shadow rule admitted it.
func WithShadowQuotas() Option {
	return option(false, "", func(cfg *config) { cfg.shadowQuotas = true })
}

// shadow acts on the rejection in h, the last slot, by a shadow rule: it
// counts it, notes its quota policy (shadowQuota) and drops the slot,
// which holds nothing, so that the request goes on as the rule's admission
// would let it.
func (a *asking) shadow(h *held) {
	h.rs.block(a.g, a.cpu, a.now, a.n, true, false)
	if a.blocked == nil {
		a.shadowQuota(h)
		a.drop()
	}
}

// shadowQuota notes the quota policy of the decision in h of a shadow
// rate rule when the Guard reports them (WithShadowQuotas): none for a
// request that lacks the param of a hotspot rule, which has no quota.
func (a *asking) shadowQuota(h *held) {
	if rs := h.rs; a.quotas && rs.window && !rs.quiet && !h.missing {
		a.policies = rs.noteQuota(a.policies, &h.d.Decision)
	}
}
