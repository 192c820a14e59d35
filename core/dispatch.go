package core

import "fmt"

// ask asks the rule of rs for the request a is admitting. It calls the
// kind's ask on its concrete type, not through the interface: a would
// escape to the heap, an allocation per request.
func (a *asking) ask(rs *ruleState) error {
	switch l := rs.lim.(type) {
	case *flowKind:
		return l.ask(a, rs)
	case *concKind:
		return l.ask(a, rs)
	case *hotspotKind:
		return l.ask(a, rs)
	case *breakerKind:
		return l.ask(a, rs)
	case *storeKind:
		return l.ask(a, rs)
	case *adaptiveKind:
		return l.ask(a, rs)
	case *systemKind:
		return l.ask(a, rs)
	}
	panic(fmt.Sprintf("sluice: limiter %T is missing from asking.ask", rs.lim))
}

// decide decides the request l for rs, the only rule of its binding, in
// l.d, and reports whether it did (by the alone method of the kinds
// listed; false: through ask). It takes nothing to give back, and Enter
// acts on its decision as admit on ask's (Guard.enter).
func (l *lone) decide(rs *ruleState) bool {
	switch k := rs.lim.(type) {
	case *flowKind:
		return k.alone(l, rs)
	case *concKind:
		return k.alone(l, rs)
	case *hotspotKind:
		return k.alone(l, rs)
	}
	return false
}
