package core

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/routecheck"
	"github.com/sluicekit/sluice/core/internal/worker"
)

// BreakerEvent is a change of state of a breaker rule, as listeners given
// with WithBreakerListener receive it.
type BreakerEvent struct {
	Rule     string // the breaker rule's name
	Resource string // the rule's resource (a name or a glob)
	From, To breaker.State
	At       time.Duration // the Guard's clock
	// Requests and Bad are the requests completed in the rule's window and
	// the bad ones among them when it tripped; on other changes, the probes
	// that succeeded and failed (Bad 1, or 0 for a probe that timed out).
	Requests, Bad int64
	Reason        string // why, for people: "error ratio 0.6 >= 0.5 of 10 requests in 10s", ...
}

// WithBreakerListener adds f to the functions the Guard calls with every
// state change of its breaker rules. Requests never wait for listeners: a
// change is queued (up to 1024 of them) and f is called on a goroutine of
// the Guard, one change at a time, in order; changes that find the queue
// full are dropped and counted (Snapshot.DroppedEvents). Close stops the
// goroutine; changes after Close are dropped.
func WithBreakerListener(f func(BreakerEvent)) Option {
	return option(f == nil, "WithBreakerListener: listener is nil", func(cfg *config) { cfg.listeners = append(cfg.listeners, f) })
}

// WithLogger makes the Guard log what "Statistics and logs" in the package
// doc lists to l, instead of slog.Default(), at most 10 records per second
// with bursts of 20; records over that are counted and the count is logged
// with the next one. Use slog.New(slog.DiscardHandler) for no log.
func WithLogger(l *slog.Logger) Option {
	return option(l == nil, "WithLogger: logger is nil (slog.New(slog.DiscardHandler) logs nothing)", func(cfg *config) { cfg.logger = l })
}

// Reporter bounds: queued reports, the log's rate and burst, how often at
// most it logs that a rule blocks requests, and the rules a record lists
// (of rules whose resource was normalized, or that match no route).
const (
	reportQueue      = 1024
	logRate          = 10 // records per second
	logBurst         = 20
	blockLogInterval = 10 * time.Second
	maxLoggedRules   = 20
)

// report is one thing the reporter tells, on its goroutine (deliver).
type report interface{ deliver(rp *reporter) }

// breakerReport tells a breaker's change of state.
type breakerReport struct{ e BreakerEvent }

// unmatchedReport tells that the rule at index of the rule set applied to
// no request for over since it was set.
type unmatchedReport struct {
	index          int
	rule, resource string
	over           time.Duration
}

// storeReport tells that a store failed, or works again.
type storeReport struct {
	name string
	err  error // nil: the store works again
}

// blockingReport tells that a rule blocked requests: blocked of them over
// the time since the last report, or, over 0, its first.
type blockingReport struct {
	rule, resource string
	blocked        int64
	over           time.Duration
	shadow         bool // a shadow rule: it would have blocked them
}

// reporter delivers reports to listeners and to the log on a goroutine of
// its own, so that requests never wait for them. The goroutine starts with
// the first report and runs until stop.
type reporter struct {
	clock     func() time.Duration
	log       *slog.Logger
	listeners []func(BreakerEvent)

	queue   chan report
	worker  worker.Worker
	started atomic.Bool // once the goroutine was asked for
	stopped atomic.Bool
	dropped atomic.Int64

	// Guarded by being used only by the goroutine: the log's token
	// bucket (tokens at last) and the records it suppressed.
	tokens     float64
	last       time.Duration
	suppressed int64
}

func newReporter(clock func() time.Duration, log *slog.Logger, listeners []func(BreakerEvent)) *reporter {
	return &reporter{clock: clock, log: cmp.Or(log, slog.Default()), listeners: listeners, queue: make(chan report, reportQueue), tokens: logBurst}
}

// send queues r without waiting; a full queue, or a stopped reporter, drops
// it and counts it.
func (rp *reporter) send(r report) {
	if rp.stopped.Load() {
		rp.dropped.Add(1)
		return
	}
	if !rp.started.Load() && !rp.started.Swap(true) {
		rp.worker.Go(rp.run) // none once stopped
	}
	select {
	case rp.queue <- r:
	default:
		rp.dropped.Add(1)
	}
}

// stop ends the goroutine, after the reports queued so far are delivered,
// and waits for it. It is idempotent.
func (rp *reporter) stop() {
	rp.stopped.Store(true)
	rp.worker.Close()
}

// run delivers the reports queued until ctx ends, and those queued then.
func (rp *reporter) run(ctx context.Context) {
	for {
		select {
		case r := <-rp.queue:
			r.deliver(rp)
		case <-ctx.Done():
			for len(rp.queue) > 0 { // run alone receives
				(<-rp.queue).deliver(rp)
			}
			return
		}
	}
}

func (r *breakerReport) deliver(rp *reporter) {
	e := r.e
	for _, f := range rp.listeners {
		f(e)
	}
	level := slog.LevelWarn
	if e.To != breaker.Open {
		level = slog.LevelInfo
	}
	rp.logf(level, "sluice: breaker "+string(e.To), slog.String("rule", e.Rule), slog.String("resource", e.Resource),
		slog.String("from", string(e.From)), slog.String("reason", e.Reason))
}

func (r *storeReport) deliver(rp *reporter) {
	if r.err != nil {
		rp.logf(slog.LevelWarn, "sluice: store failed; its rules apply their failure policy", slog.String("store", r.name), slog.Any("err", r.err))
	} else {
		rp.logf(slog.LevelInfo, "sluice: store works again", slog.String("store", r.name))
	}
}

func (b *blockingReport) deliver(rp *reporter) {
	started, blocked := "sluice: rule started blocking requests", "sluice: rule blocked requests"
	attrs := []slog.Attr{slog.String("rule", b.rule), slog.String("resource", b.resource)}
	if b.shadow {
		started, blocked = "sluice: shadow rule would block requests; they pass", "sluice: shadow rule would have blocked requests; they passed"
		attrs = append(attrs, slog.Bool("shadow", true))
	}
	if b.over == 0 {
		rp.logf(slog.LevelInfo, started, attrs...)
		return
	}
	rp.logf(slog.LevelInfo, blocked, append(attrs, slog.Int64("blocked", b.blocked), slog.Duration("over", b.over))...)
}

func (u *unmatchedReport) deliver(rp *reporter) {
	rp.logf(slog.LevelWarn, "sluice: rule matched no request since it was set; check its resource against the resources requests get (Guard.Snapshot)",
		slog.Int("index", u.index), slog.String("rule", u.rule), slog.String("resource", u.resource), slog.Duration("over", u.over))
}

// logf logs a record if the log's token bucket allows, else counts it.
func (rp *reporter) logf(level slog.Level, msg string, attrs ...slog.Attr) {
	now := rp.clock()
	rp.tokens = min(rp.tokens+max(now-rp.last, 0).Seconds()*logRate, logBurst)
	rp.last = now
	if rp.tokens < 1 {
		rp.suppressed++
		return
	}
	rp.tokens--
	if rp.suppressed > 0 {
		attrs = append(attrs, slog.Int64("suppressed", rp.suppressed))
		rp.suppressed = 0
	}
	rp.log.LogAttrs(context.Background(), level, msg, attrs...)
}

const defaultUnmatchedAfter = 5 * time.Minute // WithUnmatchedAfter's default

// WithUnmatchedAfter sets how long a rule may apply to no request after the
// Guard starts, or after the SetRules that added or changed it, before the
// Guard logs a warning naming it (once; again only after it changes) and
// flags it (RuleStats.Unmatched): a rule whose resource names nothing
// requests are called limits nothing. The default is 5 minutes;
// 0 turns the warning and the flag off, for a Guard whose rules cover
// routes that may go unused that long. d must not be negative.
func WithUnmatchedAfter(d time.Duration) Option {
	return option(d < 0, fmt.Sprintf("WithUnmatchedAfter: must be >= 0 (0 turns the warning off), got %s", d),
		func(cfg *config) { cfg.unmatched = d })
}

// watch is the part of a Guard that looks at its rules from outside
// requests: it warns about rules that apply to no request (see
// WithUnmatchedAfter), from a goroutine that runs only while a rule of the
// rule set in force may become due, and hands the HTTP rules in force to
// the route checker (see Guard.CheckRoutes). It holds no reference to the
// Guard, which may be collected while its goroutine sleeps.
type watch struct {
	after  time.Duration // 0: no warning
	clock  clock.Clock
	rp     *reporter
	routes *routecheck.Checker

	worker worker.Worker
}

// rulesSet is called by SetRules once set replaced prev (empty at New): it
// dates the rules added or changed, checks set against the routes, and
// restarts the goroutine on set.
func (w *watch) rulesSet(prev, set *ruleSet) {
	now := int64(w.clock.Now())
	kept := map[*ruleStats]Rule{}
	for _, rs := range prev.rules {
		kept[rs.stats] = rs.rule
	}
	routes := make([]routecheck.Rule, len(set.rules))
	for i, rs := range set.rules {
		if r, ok := kept[rs.stats]; !ok || !reflect.DeepEqual(r, rs.rule) {
			rs.stats.since.Store(now)
			rs.stats.warned.Store(false)
		}
		routes[i] = routecheck.Rule{Index: i, Name: rs.rule.Name, Resource: rs.rule.Resource, Match: rs.pattern.match}
	}
	w.routes.SetRules(routes)
	if w.after > 0 {
		w.worker.Restart(func(ctx context.Context) { w.run(ctx, set) })
	}
}

// run warns about the rules of set that become unmatched, each once, until
// none may become so, or ctx ends.
func (w *watch) run(ctx context.Context, set *ruleSet) {
	for {
		// A stop is seen before the clock is read, so that the last look,
		// once stopped, reads the time of the stop: a stop racing with the
		// deadline still gets the warning out.
		stopped := ctx.Err() != nil
		now := int64(w.clock.Now())
		next := int64(math.MaxInt64)
		for i, rs := range set.rules {
			st := rs.stats
			if st.warned.Load() || st.matched() {
				continue
			}
			since := st.since.Load()
			if due := since + min(int64(w.after), math.MaxInt64-max(since, 0)); due > now { // saturated
				next = min(next, due)
			} else if st.warned.CompareAndSwap(false, true) {
				w.rp.send(&unmatchedReport{index: i, rule: rs.rule.Name, resource: rs.rule.Resource, over: time.Duration(now - since)})
			}
		}
		if next == math.MaxInt64 || stopped {
			return
		}
		worker.Sleep(ctx, w.clock, time.Duration(next-now))
	}
}

// AddRoutes tells the Guard routes the service serves, as resource names
// ("GET /items/{id}"; a template without a method, "/static/{path...}",
// serves every method), for CheckRoutes (see "Rules that match nothing"
// in the package doc).
func (g *Guard) AddRoutes(routes ...string) { g.watch.routes.Add(routes...) }

// CheckRoutes logs at Warn, in one record, the HTTP rules in force that
// match none of the routes given to AddRoutes, and does so again after
// every SetRules from then on; each rule is logged once per rule set. Call
// it once every route was given (the adapters do at their first request):
// a rule matching only routes not given is reported. Without routes it does
// nothing. HTTP rules are those whose resource is "METHOD TEMPLATE", or a
// template that is not a gRPC full method ("/pkg.Service/Method": two
// segments, a '.' in the first); rules naming gRPC methods or custom names
// are not checked.
func (g *Guard) CheckRoutes() { g.watch.routes.Check() }
