package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sluicekit/sluice/core/internal/hotspot"
	"github.com/sluicekit/sluice/core/internal/rulefields"
	"github.com/sluicekit/sluice/core/internal/topk"
	"github.com/sluicekit/sluice/core/stripe"
)

// hotspotSpec describes the hotspot kind.
func hotspotSpec() kindSpec {
	return kindSpec{
		kind: KindHotspot, doc: "per value of a request param",
		fields: append([]fieldSpec{
			{key: "limit", doc: "Requests per window (in flight with algorithm concurrency) of each param value; 0 blocks every request.",
				unit: "requests", given: true, min: 0},
			{key: "window", doc: "The period limit applies to.", def: "1s"},
			{key: "algorithm", doc: "How each value's requests are counted.", def: string(hotspot.DefaultAlgorithm),
				enum: []string{"token-bucket", "leaky-bucket", "concurrency"}},
			{key: "burst", doc: "Token-bucket tokens above limit.", unit: "requests", min: 0},
			{key: "maxWait", doc: "Leaky-bucket: the longest a request may queue for its turn."},
			{key: "param", doc: "The request value to limit by: header:NAME, query:NAME, cookie:NAME, path:NAME, metadata:NAME, ip, method, host, peer, or a custom param.",
				required: true},
			{key: "maxKeys", doc: "The number of param values tracked.", def: "100000", min: 0, max: maxHotspotKeys},
			{key: "overrides", doc: "Param values with their own limit; 0 blocks the value."},
			{key: "onMissing", doc: "A request without the param is not limited by the rule (skip, the default), rejected as one that will never pass (reject, 403), or limited together with every other request without it (shared).",
				def: "skip", enum: []string{"skip", "reject", "shared"}},
		}, storeFields()...),
		check: func(v *validator, r *Rule) {
			for _, fe := range r.hotspotConfig().Validate() {
				if fe.Field == "maxKeys" && r.MaxKeys > maxHotspotKeys {
					continue // the tighter bound below says it
				}
				v.add(fe.Field, "%s", fe.Msg)
			}
			v.addAll(r.hotspotConfig().Bounds()) // the upper bounds Validate leaves
			if msg := rulefields.ParamProblem(r.Param); msg != "" {
				v.add("param", "%s", msg)
			}
			if r.MaxKeys > maxHotspotKeys {
				v.add("maxKeys", "must be <= %d, got %d", maxHotspotKeys, r.MaxKeys)
			}
			switch r.OnMissing {
			case "", MissingSkip, MissingReject, MissingShared:
			default:
				v.add("onMissing", "must be skip, reject or shared, got %s", quote(string(r.OnMissing)))
			}
			for _, key := range slices.Sorted(maps.Keys(r.Overrides)) {
				switch {
				case key == "":
					v.add("overrides", "keys must not be empty")
				case r.OnMissing == MissingShared && key[0] == 0:
					v.add("overrides", "key %s must not start with a NUL byte with onMissing shared (reserved for the requests without the param)", quote(key))
				case len(key) > maxOverrideKeyLen:
					v.add("overrides", "key %s must be at most %d bytes, got %d", quote(key), maxOverrideKeyLen, len(key))
				}
			}
			v.checkStore(r, AlgorithmTokenBucket, AlgorithmTokenBucket, AlgorithmLeakyBucket)
		},
		defaults: func(r Rule) Rule {
			c := r.hotspotConfig().WithDefaults()
			r.Algorithm, r.Window, r.MaxKeys = Algorithm(c.Algorithm), c.Window, c.MaxKeys
			return r
		},
		block: quotaBlock(),
		summary: func(b *strings.Builder, r *Rule) {
			if r.Algorithm == AlgorithmConcurrency {
				fmt.Fprintf(b, "%d in flight per %s", r.Limit, r.Param)
			} else {
				fmt.Fprintf(b, "%d per %s per %s, %s", r.Limit, r.Window, r.Param, r.Algorithm)
			}
			if n := len(r.Overrides); n == 1 {
				b.WriteString(", 1 override")
			} else if n > 1 {
				fmt.Fprintf(b, ", %d overrides", n)
			}
		},
		limiter: func(g *Guard, r Rule, prev limiter) (limiter, traits, error) {
			if r.Store != "" {
				return newStoreKind(g, r, prev, true)
			}
			var p *hotspot.Limiter
			var top []*topk.Sketch
			if k, ok := prev.(*hotspotKind); ok {
				p, top = k.l, k.top
			}
			l, err := hotspot.Reload(r.hotspotConfig(), p, int64(g.clock.Now()))
			if err != nil {
				return nil, traits{}, err
			}
			if top == nil && g.topBlocked > 0 {
				top = make([]*topk.Sketch, stripe.Count())
				for i := range top {
					top[i], _ = topk.New(g.topBlocked) // validated by the option
				}
			}
			alg := l.Config().Algorithm
			holds := alg == hotspot.Concurrency
			return &hotspotKind{l: l, top: top}, traits{
				waits:   alg == hotspot.LeakyBucket,
				holds:   holds, // a per-value slot until Exit
				window:  !holds,
				refills: !holds,
			}, nil
		},
	}
}

// hotspotKind is a hotspot rule kept in memory: it limits each value of a
// param of the request (see asking.firstValue).
type hotspotKind struct {
	l *hotspot.Limiter
	// top counts the values blocked most, a sketch per CPU stripe (see
	// WithTopBlockedValues); nil without.
	top []*topk.Sketch
}

func (k *hotspotKind) ask(a *asking, rs *ruleState) error {
	v, ok := a.firstValue(rs)
	for i := 1; ok; i++ {
		h := a.slot(rs)
		k.decide(&h.d, a.cpu, a.now, v, a.n, true)
		h.keep = rs.holds
		a.decided(h)
		v, ok = a.value(rs, i)
	}
	return nil
}

// alone decides a request with exactly one value of the param; any other
// goes through ask (see firstValue).
func (k *hotspotKind) alone(l *lone, rs *ruleState) bool {
	if l.params == nil {
		return false
	}
	if v, ok := l.params.Param(rs.rule.Param, 0); ok {
		if _, more := l.params.Param(rs.rule.Param, 1); !more {
			k.decide(&l.d, l.cpu, l.now, rs.escape(v), l.n, l.quota)
			return true
		}
	}
	return false
}

// decide decides n permits of the value v at now on the CPU cpu into d
// (quota: with the quota of an admission, see hotspot.Limiter.AcquireTo),
// and counts a value it rejects among those blocked most.
func (k *hotspotKind) decide(d *hotspot.Decision, cpu uint32, now int64, v string, n int64, quota bool) {
	k.l.AcquireTo(d, now, v, n, quota)
	if k.top != nil && !d.OK {
		k.top[stripe.Of(cpu, len(k.top))].Add(v, min(n, maxCounted))
	}
}

func (k *hotspotKind) undo(h held, _ uint32, n int64) { k.l.Undo(h.d, n) }

func (k *hotspotKind) exit(h hold, end ending) { k.l.Release(h.h, end.n) }

func (*hotspotKind) times() bool { return false }

func (k *hotspotKind) stats(out *RuleStats, _ int64) {
	if k.top == nil {
		return
	}
	var all []topk.Count
	for _, t := range k.top {
		all = t.Top(all)
	}
	out.TopBlocked = []BlockedValue{}
	for _, c := range topk.Merge(all, k.top[0].K()) {
		v := c.Value
		if v == missingValue {
			v = ""
		}
		out.TopBlocked = append(out.TopBlocked, BlockedValue{Value: v, Blocked: c.Count, Error: c.Err})
	}
}

// maxTopBlocked bounds the k of WithTopBlockedValues.
const maxTopBlocked = 100

// WithTopBlockedValues makes each hotspot rule kept in memory count the
// values of its param it blocks, approximately, in fixed memory: the k it
// blocked most since it was set are in its RuleStats.TopBlocked (and on
// the dashboard). A value blocked more than a 1/k share of all its blocks
// is always among them. It costs the blocked requests of hotspot rules a
// lock of a sketch of k counters per CPU stripe (Space-Saving), and
// nothing to the requests that pass. Off by default: it keeps request
// values (user IDs, addresses, API keys: values longer than 128 bytes are
// cut) in memory and shows them to whoever sees the statistics. k is 1 to
// 100.
func WithTopBlockedValues(k int) Option {
	return option(k < 1 || k > maxTopBlocked, fmt.Sprintf("WithTopBlockedValues(%d): k must be between 1 and %d", k, maxTopBlocked),
		func(cfg *config) { cfg.topBlocked = k })
}

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
// admitting, and false when there is none or i is maxParamValues or more.
func (a *asking) value(rs *ruleState, i int) (string, bool) {
	if i >= maxParamValues {
		return "", false
	}
	v, ok := a.params.Param(rs.rule.Param, i)
	return rs.escape(v), ok
}

// missingValue is the value of the requests without the param of a hotspot
// rule with onMissing shared. No request's own value is passed as it: such a
// rule passes a value starting with a NUL byte with one more in front (see
// ruleState.escape), so none is a lone NUL byte.
const missingValue = "\x00"

// escape returns v as the hotspot rule rs limits it (see missingValue).
func (rs *ruleState) escape(v string) string {
	if v != "" && v[0] == 0 && rs.rule.OnMissing == MissingShared {
		return missingValue + v
	}
	return v
}
