package core

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/breaker"
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
	// that succeeded and failed.
	Requests, Bad int64
	Reason        string // why, for people
}

// WithBreakerListener adds f to the functions the Guard calls with every
// state change of its breaker rules. Requests never wait for listeners: a
// change is queued (up to 1024 of them) and f is called on a goroutine of
// the Guard, one change at a time, in order; changes that find the queue
// full are dropped and counted (Snapshot.DroppedEvents). Close stops the
// goroutine; changes after Close are dropped.
func WithBreakerListener(f func(BreakerEvent)) Option {
	return optionFunc(func(cfg *config) error {
		if f == nil {
			return errors.New("WithBreakerListener: listener is nil")
		}
		cfg.listeners = append(cfg.listeners, f)
		return nil
	})
}

// WithLogger makes the Guard log breaker state changes, store failures and
// recoveries, and rules that block requests (once per BlockLogInterval per
// rule, with the count) to l, instead of slog.Default(). The log is
// rate-limited: at most 10 records per second with bursts of 20; records
// over that are counted and the count is logged with the next one. Use
// slog.New(slog.DiscardHandler) for no log.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(cfg *config) error {
		if l == nil {
			return errors.New("WithLogger: logger is nil (slog.New(slog.DiscardHandler) logs nothing)")
		}
		cfg.logger = l
		return nil
	})
}

// BlockLogInterval is how often at most a Guard logs that a rule blocks
// requests, per rule.
const BlockLogInterval = 10 * time.Second

// Reporter bounds: queued reports, and the log's rate and burst.
const (
	reportQueue = 1024
	logRate     = 10 // records per second
	logBurst    = 20
)

// report is one thing the reporter tells: exactly one field is set.
type report struct {
	breaker  *BreakerEvent
	store    *storeReport
	blocking *blockingReport
}

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
}

// reporter delivers reports to listeners and to the log on a goroutine of
// its own, so that requests never wait for them. The goroutine starts with
// the first report and runs until stop.
type reporter struct {
	clock     func() time.Duration
	log       *slog.Logger
	listeners []func(BreakerEvent)

	queue   chan report
	start   sync.Once
	done    chan struct{}
	stopped atomic.Bool
	wg      sync.WaitGroup
	dropped atomic.Int64

	// Guarded by being used only by the goroutine: the log's token
	// bucket (tokens at last) and the records it suppressed.
	tokens     float64
	last       time.Duration
	suppressed int64
}

func newReporter(clock func() time.Duration, log *slog.Logger, listeners []func(BreakerEvent)) *reporter {
	if log == nil {
		log = slog.Default()
	}
	return &reporter{clock: clock, log: log, listeners: listeners, queue: make(chan report, reportQueue), done: make(chan struct{}), tokens: logBurst}
}

// send queues r without waiting; a full queue, or a stopped reporter, drops
// it and counts it.
func (rp *reporter) send(r report) {
	if rp.stopped.Load() {
		rp.dropped.Add(1)
		return
	}
	rp.start.Do(func() {
		rp.wg.Add(1)
		go rp.run()
	})
	select {
	case rp.queue <- r:
	default:
		rp.dropped.Add(1)
	}
}

// stop ends the goroutine, after the reports queued so far are delivered,
// and waits for it. It is idempotent.
func (rp *reporter) stop() {
	if rp.stopped.Swap(true) {
		return
	}
	rp.start.Do(func() {}) // no goroutine starts after this
	close(rp.done)
	rp.wg.Wait()
}

func (rp *reporter) run() {
	defer rp.wg.Done()
	for {
		select {
		case r := <-rp.queue:
			rp.deliver(r)
		case <-rp.done:
			for {
				select {
				case r := <-rp.queue:
					rp.deliver(r)
				default:
					return
				}
			}
		}
	}
}

func (rp *reporter) deliver(r report) {
	switch {
	case r.breaker != nil:
		e := r.breaker
		for _, f := range rp.listeners {
			f(*e)
		}
		level := slog.LevelWarn
		if e.To != breaker.Open {
			level = slog.LevelInfo
		}
		rp.logf(level, "sluice: breaker "+e.To.String(), slog.String("rule", e.Rule), slog.String("resource", e.Resource),
			slog.String("from", e.From.String()), slog.String("reason", e.Reason))
	case r.store != nil:
		if r.store.err != nil {
			rp.logf(slog.LevelWarn, "sluice: store failed; its rules apply their failure policy", slog.String("store", r.store.name), slog.Any("err", r.store.err))
		} else {
			rp.logf(slog.LevelInfo, "sluice: store works again", slog.String("store", r.store.name))
		}
	case r.blocking != nil:
		b := r.blocking
		if b.over == 0 {
			rp.logf(slog.LevelInfo, "sluice: rule started blocking requests", slog.String("rule", b.rule), slog.String("resource", b.resource))
			break
		}
		rp.logf(slog.LevelInfo, "sluice: rule blocked requests", slog.String("rule", b.rule), slog.String("resource", b.resource),
			slog.Int64("blocked", b.blocked), slog.Duration("over", b.over))
	}
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
