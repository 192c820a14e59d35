package core

import "github.com/sluicekit/sluice/core/internal/hotspot"

// hotspotKind is a hotspot rule kept in memory: it limits each value of a
// param of the request (see asking.firstValue).
type hotspotKind struct{ l *hotspot.Limiter }

func newHotspotKind(r Rule, prev limiter) (limiter, traits, error) {
	var p *hotspot.Limiter
	if k, ok := prev.(*hotspotKind); ok {
		p = k.l
	}
	l, err := hotspot.New(r.hotspotConfig(), p)
	if err != nil {
		return nil, traits{}, err
	}
	alg := l.Config().Algorithm
	holds := alg == hotspot.Concurrency
	return &hotspotKind{l}, traits{
		waits:   alg == hotspot.LeakyBucket,
		holds:   holds, // a per-value slot until Exit
		window:  !holds,
		refills: !holds,
		timed:   !holds,
	}, nil
}

func (k *hotspotKind) ask(a *asking, rs *ruleState) error {
	v, ok := a.firstValue(rs)
	for i := 1; ok; i++ {
		h := a.slot(rs)
		k.l.AcquireTo(&h.d, a.now, v, a.n)
		h.keep = rs.holds
		a.decided(h)
		v, ok = a.value(rs, i)
	}
	return nil
}

func (k *hotspotKind) undo(h held, _ uint32, n int64) { k.l.Undo(h.d, n) }

func (k *hotspotKind) exit(h *held, end ending) { k.l.Release(h.d, end.n) }

func (*hotspotKind) stats(*RuleStats, int64) {}

// firstValue returns the first value of the param of rs, a hotspot rule, in
// the request a is admitting, and false when the rule does not limit the
// request. A request without the param is what the rule's OnMissing says:
// not limited, rejected (firstValue settles the rejection), or limited as
// missingValue.
func (a *asking) firstValue(rs *ruleState) (string, bool) {
	if a.params == nil {
		if m := rs.rule.OnMissing; m != MissingReject && m != MissingShared {
			return "", false
		}
		a.params = ParamMap(nil) // a request without params
	}
	if v, ok := a.value(rs, 0); ok {
		return v, true
	}
	switch rs.rule.OnMissing {
	case MissingReject:
		h := a.slot(rs)
		h.missing = true
		a.settle(h)
	case MissingShared:
		return missingValue, true
	}
	return "", false
}

// value returns the value of index i of the param of rs in the request a is
// admitting, and false when there is none.
func (a *asking) value(rs *ruleState, i int) (string, bool) {
	v, ok := a.params.Param(rs.rule.Param, i)
	if v != "" && v[0] == 0 {
		v = rs.escape(v)
	}
	return v, ok
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
