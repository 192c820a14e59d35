package core

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicekit/sluice/core/flow"
	"github.com/sluicekit/sluice/core/hotspot"
	"github.com/sluicekit/sluice/core/window"
)

// EnterOption adjusts one call of Enter.
type EnterOption struct {
	count  int64
	params Params
}

// WithCount makes Enter acquire n permits instead of one: a flow rule counts
// n requests, a concurrency rule n slots.
func WithCount(n int64) EnterOption { return EnterOption{count: n} }

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
	// The per-value concurrency reservations of hotspot rules, which Exit
	// releases: the first one inline, more (several rules or values) in
	// extra.
	hot   held
	extra []held
}

// held is a reservation a rule made for a request. For flow and
// concurrency rules only d.Decision is used.
type held struct {
	rs *ruleState
	d  hotspot.Decision
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
// are given back when a later one rejects it. Hotspot rules read the params
// they name from WithParams, once per value; without WithParams, or when the
// request lacks the param, they do not limit it.
//
// Enter reads the clock once. With rules that never wait it does not block;
// ctx is only consulted when the request must wait.
func (g *Guard) Enter(ctx context.Context, resource string, opts ...EnterOption) (Entry, error) {
	n := int64(1)
	var params Params
	for _, o := range opts {
		if o.count != 0 {
			n = o.count
		}
		if o.params != nil {
			params = o.params
		}
	}
	if n < 1 {
		return Entry{}, fmt.Errorf("sluice: Enter %q: count must be >= 1, got %d", resource, n)
	}
	res, cached := g.resources.get(resource)
	stats, stripe := res.stripe()
	b := g.bindingOf(res, resource, cached)
	now := int64(g.clock.Now())

	// The reservations made so far, to give back on a later rejection. A
	// few fit on the stack: no allocation for those.
	var stack [4]held
	admitted := stack[:0]
	var wait time.Duration
	reject := func(rs *ruleState, d flow.Decision) (Entry, error) {
		undo(admitted, n)
		stats.Add(now, window.Block, n)
		return Entry{}, blocked(resource, rs, d)
	}
	for _, rs := range b.rules {
		var d hotspot.Decision
		switch {
		case rs.hot != nil:
			if params == nil {
				continue
			}
			for i := 0; ; i++ {
				v, ok := params.Param(rs.rule.Param, i)
				if !ok {
					break
				}
				if d = rs.hot.Acquire(now, v, n); !d.OK {
					return reject(rs, d.Decision)
				}
				admitted = append(admitted, held{rs: rs, d: d})
				wait = max(wait, d.Wait)
			}
			continue
		case rs.flow != nil:
			d.Decision = rs.flow.Acquire(now, n)
		default:
			ok, inFlight := rs.conc.Acquire(n)
			d.Decision = flow.Decision{OK: ok, Limit: rs.conc.Limit(), Remaining: max(rs.conc.Limit()-inFlight, 0)}
		}
		if !d.OK {
			return reject(rs, d.Decision)
		}
		admitted = append(admitted, held{rs: rs, d: d})
		wait = max(wait, d.Wait)
	}
	if wait > 0 {
		if err := g.clock.Sleep(ctx, wait); err != nil {
			undo(admitted, n)
			stats.Add(now, window.Block, n)
			return Entry{}, fmt.Errorf("sluice: %s: waiting %s for its turn: %w", resource, wait, err)
		}
		now += int64(wait)
	}
	bucket := stats.Add(now, window.Pass, n)
	bucket.RaisePeak(res.inFlight.Add(n))
	e := Entry{g: g, res: res, b: b, start: now, n: n, stripe: stripe}
	for _, h := range admitted {
		switch {
		case !h.rs.holds:
		case e.hot.rs == nil:
			e.hot = h
		default:
			e.extra = append(e.extra, h)
		}
	}
	return e, nil
}

// undo gives back the reservations of the rules that admitted a request
// after a later rule rejected it, or its wait was cancelled.
func undo(admitted []held, n int64) {
	for _, h := range admitted {
		switch rs := h.rs; {
		case rs.hot != nil:
			rs.hot.Undo(h.d, n)
		case rs.flow != nil:
			rs.flow.Undo(h.d.Decision, n)
		default:
			rs.conc.Release(n)
		}
	}
}

func blocked(resource string, rs *ruleState, d flow.Decision) *BlockedError {
	e := &BlockedError{
		Resource:   resource,
		Rule:       rs.rule.Name,
		Kind:       rs.rule.Kind,
		Param:      rs.rule.Param,
		Limit:      d.Limit,
		Remaining:  d.Remaining,
		RetryAfter: d.RetryAfter,
	}
	if rs.rule.Kind != KindConcurrency && rs.rule.Algorithm != string(hotspot.Concurrency) {
		e.Window = rs.rule.Window
	}
	return e
}

// Exit ends the request: it records its completion, response time and
// whether it failed (err != nil) in the resource's statistics, and releases
// its concurrency slots, per-value ones included. Calls after the first, and
// calls on the zero Entry, do nothing. Adapters call it from a deferred
// function, so it runs when a handler panics too.
func (e *Entry) Exit(err error) {
	if e.g == nil || e.done {
		return
	}
	e.done = true
	// Out of the resource's in-flight count before the slots are released,
	// so that the count never includes a request admitted into a freed slot
	// while this one is still counted: its peak never exceeds a limit.
	e.res.inFlight.Add(-e.n)
	for _, c := range e.b.conc {
		c.Release(e.n)
	}
	if e.hot.rs != nil {
		e.hot.rs.hot.Release(e.hot.d, e.n)
		for _, h := range e.extra {
			h.rs.hot.Release(h.d, e.n)
		}
	}
	now := int64(e.g.clock.Now())
	e.res.stripes[e.stripe].AddRT(now, max(now-e.start, 0), err != nil)
}
