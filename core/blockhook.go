package core

import "context"

// WithBlockHook makes Enter call f with the request's context and its
// BlockedError each time rules block a request, before Enter returns it:
// for tracing (an event on the request's span) or auditing. f runs on the
// request's goroutine, so it must be quick; it must not keep or change b.
// Requests that pass do not call it. Hooks given more than once are all
// called, in order.
func WithBlockHook(f func(ctx context.Context, b *BlockedError)) Option {
	return option(f == nil, "WithBlockHook: hook is nil", func(cfg *config) { cfg.blockHooks = append(cfg.blockHooks, f) })
}

// callBlockHooks calls the Guard's block hooks when err is a block.
func (g *Guard) callBlockHooks(ctx context.Context, err error) {
	if b, ok := err.(*BlockedError); ok {
		for _, f := range g.blockHooks {
			f(ctx, b)
		}
	}
}
