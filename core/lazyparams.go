package core

import "context"

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
func (g *Guard) EnterLazy(ctx context.Context, resource string, params func() Params, opts ...EnterOption) (Entry, error) {
	return g.enter(ctx, resource, params, opts)
}
