package breaker

import (
	"cmp"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	pub "github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/rulefields"
	"github.com/sluicekit/sluice/core/internal/window"
	"github.com/sluicekit/sluice/core/stripe"
)

// The defaults of a breaker rule's fields (core.Rule).
const (
	DefaultWindow      = 10 * time.Second
	DefaultBuckets     = 10
	DefaultMinRequests = 10
	DefaultOpenFor     = 5 * time.Second
	DefaultProbes      = 1
)

// MaxProbes bounds Config.Probes.
const MaxProbes = 1000

// Config describes a circuit breaker: its fields are core.Rule's of the
// same names (see there), the window kept in a leap array of Buckets
// buckets. Zero fields take the Default constants.
type Config struct {
	Strategy    pub.Strategy
	Threshold   float64
	MaxRT       time.Duration
	Window      time.Duration
	Buckets     int
	MinRequests int64
	OpenFor     time.Duration
	Probes      int64
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	c.Window = cmp.Or(c.Window, DefaultWindow)
	c.Buckets = cmp.Or(c.Buckets, DefaultBuckets)
	c.MinRequests = cmp.Or(c.MinRequests, DefaultMinRequests)
	c.OpenFor = cmp.Or(c.OpenFor, DefaultOpenFor)
	c.Probes = cmp.Or(c.Probes, DefaultProbes)
	return c
}

// Validate reports every problem of c (after defaults are applied), one
// rulefields.FieldError each with the field's rules-file name, or nil when c is
// valid.
func (c Config) Validate() []*rulefields.FieldError {
	c = c.WithDefaults()
	var errs []*rulefields.FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, &rulefields.FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	switch c.Strategy {
	case pub.SlowRatio, pub.ErrorRatio:
		if !(c.Threshold > 0 && c.Threshold <= 1) {
			add("threshold", "must be a ratio in (0, 1] with strategy %s, got %v", c.Strategy, c.Threshold)
		}
	case pub.ErrorCount:
		if !(c.Threshold >= 1 && c.Threshold <= math.MaxInt32 && c.Threshold == math.Trunc(c.Threshold)) {
			add("threshold", "must be a whole number of errors >= 1 with strategy %s, got %v", c.Strategy, c.Threshold)
		}
	case "":
		add("strategy", "is required (slow-ratio, error-ratio or error-count)")
	default:
		add("strategy", "must be slow-ratio, error-ratio or error-count, got %s", rulefields.Quote(c.Strategy))
	}
	switch {
	case c.Strategy == pub.SlowRatio && c.MaxRT <= 0:
		add("maxRT", "must be > 0 with strategy %s, got %s", pub.SlowRatio, c.MaxRT)
	case c.Strategy != pub.SlowRatio && c.MaxRT != 0:
		add("maxRT", "only applies to strategy %s", pub.SlowRatio)
	}
	if c.Window <= 0 {
		add("window", "must be > 0, got %s", c.Window)
	}
	switch {
	case c.Buckets < 1 || c.Buckets > window.MaxBuckets:
		add("buckets", "must be between 1 and %d, got %d", window.MaxBuckets, c.Buckets)
	case c.Window > 0 && int64(c.Window)%int64(c.Buckets) != 0:
		add("buckets", "window %s is not a whole number of nanoseconds per bucket with %d buckets: the window must be a multiple of %s", c.Window, c.Buckets, time.Duration(c.Buckets))
	}
	if c.MinRequests < 1 {
		add("minRequests", "must be >= 1, got %d", c.MinRequests)
	}
	if c.OpenFor <= 0 || c.OpenFor > flow.MaxSpan {
		add("openFor", "must be > 0 and <= %s (%d ns), got %s", flow.MaxSpan, int64(flow.MaxSpan), c.OpenFor)
	}
	if c.Probes < 1 || c.Probes > MaxProbes {
		add("probes", "must be between 1 and %d, got %d", MaxProbes, c.Probes)
	}
	return errs
}

// Transition is a change of a breaker's state, at At (ns on the clock),
// as core.BreakerEvent reports it.
type Transition struct {
	From, To      pub.State
	At            int64
	Requests, Bad int64
	Reason        string
}

// Ticket is what Allow gives an admitted request, to hand back to DoneOn or
// Undo: the epoch it was let through in (modulo 2^30: a ticket 2^30
// transitions old is never still out), whether it is a probe, and a bit
// that is set in every ticket Allow gives, so that the zero Ticket belongs to
// no request. 32 bits, as it is kept in every request's entry.
type Ticket uint32

const ticketEpochMask = 1<<30 - 1

func ticket(epoch uint64, probe bool) Ticket {
	t := Ticket(epoch&ticketEpochMask)<<2 | 1
	if probe {
		t |= 2
	}
	return t
}

// of reports whether t was given in epoch.
func (t Ticket) of(epoch uint64) bool { return uint64(t>>2) == epoch&ticketEpochMask }

// Probe reports whether the request is one of a half-open breaker's probes.
func (t Ticket) Probe() bool { return t&2 != 0 }

// The breaker's state word: the state in its low 2 bits, the probes let
// through in the current half-open period in the next 20, and above them
// the epoch, which grows by one at each transition. One word, so that a
// probe is let through by one compare-and-swap that also checks the state.
const (
	stateBits  = 2
	issuedBits = 20
	issuedOne  = 1 << stateBits
	epochShift = stateBits + issuedBits
	stateMask  = 1<<stateBits - 1
	issuedMask = (1<<issuedBits - 1) << stateBits
)

// state is a breaker's state as its state word holds it.
type state uint8

const (
	closed state = iota
	open
	halfOpen
)

// public are the states as package breaker names them.
var public = [...]pub.State{closed: pub.Closed, open: pub.Open, halfOpen: pub.HalfOpen}

func stateOf(w uint64) state            { return state(w & stateMask) }
func issuedOf(w uint64) int64           { return int64(w&issuedMask) >> stateBits }
func epochOf(w uint64) uint64           { return w >> epochShift }
func word(epoch uint64, s state) uint64 { return epoch<<epochShift | uint64(s) }

// Breaker is a circuit breaker, closed, open or half-open (see the package
// doc). Requests ask Allow before they run and report their outcome to
// DoneOn (or give their ticket back with Undo when they did not run).
//
// Allow costs one atomic load while the breaker is closed or open, DoneOn of a
// good outcome one atomic add, DoneOn of a bad one two adds and two sums over
// the buckets. Transitions take a mutex; so does DoneOn of a probe.
// A Breaker is safe for concurrent use.
type Breaker struct {
	cfg    Config
	notify func(Transition)

	w     atomic.Uint64 // state word
	until atomic.Int64  // open: the time the breaker goes half-open
	// probeBy is the probes' deadline, half-open: OpenFor after the oldest
	// probe in flight was let through, or the last succeeded. Not until: a request that
	// read the open state while a transition to half-open was under way
	// would read the deadline as the open state's and be rejected.
	probeBy atomic.Int64
	stats   atomic.Pointer[stats]

	mu     sync.Mutex   // serializes transitions
	passed atomic.Int64 // probes that succeeded in the current half-open period; written under mu
	trips  atomic.Int64
}

// New returns a closed Breaker for cfg, which must be valid (see
// Validate). notify, when not nil, is called with every transition, while
// the breaker's mutex is held, by the goroutine that made it: it must not
// block or call the breaker.
//
// When prev is not nil, the new breaker takes over its state (an open
// breaker stays open until its time) and, when the window and buckets are
// the same and so is what a bad outcome is (an error, or a response slower
// than the same MaxRT), its statistics; when cfg is prev's configuration,
// New returns prev itself.
func New(cfg Config, prev *Breaker, notify func(Transition)) (*Breaker, error) {
	cfg = cfg.WithDefaults()
	if errs := cfg.Validate(); errs != nil {
		return nil, rulefields.Join(errs)
	}
	if prev != nil && prev.cfg == cfg {
		return prev, nil
	}
	b := &Breaker{cfg: cfg, notify: notify}
	if prev != nil {
		prev.mu.Lock()
		w := prev.w.Load()
		if stateOf(w) == halfOpen {
			// Probes in flight report to prev; this one lets probes
			// through afresh, in a later epoch.
			w = word(epochOf(w)+1, halfOpen)
		}
		b.w.Store(w)
		b.until.Store(prev.until.Load())
		b.probeBy.Store(prev.probeBy.Load())
		b.trips.Store(prev.trips.Load())
		sameBad := (cfg.Strategy == pub.SlowRatio) == (prev.cfg.Strategy == pub.SlowRatio) && cfg.MaxRT == prev.cfg.MaxRT
		if old := prev.stats.Load(); sameBad && old.arrs[0].Interval() == cfg.Window && old.arrs[0].Buckets() == cfg.Buckets {
			b.stats.Store(old)
		}
		prev.mu.Unlock()
	}
	if b.stats.Load() == nil {
		b.stats.Store(b.newStats())
	}
	return b, nil
}

// stats are the completions and bad outcomes a closed breaker trips on,
// counted in one leap array per CPU stripe (see DoneOn), so that requests
// completing on different CPUs do not write one cache line.
type stats struct{ arrs []*window.LeapArray }

func (b *Breaker) newStats() *stats {
	st := &stats{arrs: make([]*window.LeapArray, stripe.Count())}
	for i := range st.arrs {
		st.arrs[i], _ = window.New(b.cfg.Buckets, b.cfg.Window) // validated: cannot fail
	}
	return st
}

// sum returns the count of ev over the window ending at now.
func (st *stats) sum(now int64, ev window.Event) int64 {
	var n int64
	for _, a := range st.arrs {
		n += a.Sum(now, ev)
	}
	return n
}

// Allow asks to let a request through at now. It returns the request's
// ticket and true, or the time until the breaker lets requests through
// again (an estimate while half-open) and false.
func (b *Breaker) Allow(now int64) (Ticket, time.Duration, bool) {
	for {
		w := b.w.Load()
		switch stateOf(w) {
		case closed:
			return ticket(epochOf(w), false), 0, true
		case open:
			until := b.until.Load()
			if now < until {
				return 0, time.Duration(until - now), false
			}
			b.transition(w, now, halfOpen, 0, 0, "open for "+b.cfg.OpenFor.String())
		case halfOpen:
			// probeBy is the deadline of the oldest probe in flight; none
			// is when the probes let through all succeeded or were given back.
			inFlight := issuedOf(w) > b.passed.Load()
			if until := b.probeBy.Load(); !inFlight || now < until {
				if issuedOf(w) >= b.cfg.Probes {
					return 0, time.Duration(until - now), false
				}
				if b.w.CompareAndSwap(w, w+issuedOne) {
					if !inFlight { // the oldest in flight: OpenFor of its own
						b.pushProbeBy(now)
					}
					return ticket(epochOf(w), true), 0, true
				}
				continue // another probe, or a transition: look again
			}
			// A probe took longer than OpenFor: it counts as failed.
			b.transition(w, now, open, -1, 0, "probe did not complete within "+b.cfg.OpenFor.String())
		}
	}
}

// Undo gives back the ticket of a request Allow let through that did not
// run (a later rule rejected it): a probe's place goes to another request.
func (b *Breaker) Undo(t Ticket) {
	if !t.Probe() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// Under mu no transition can happen; only probes let through race,
	// each retry following one.
	for {
		w := b.w.Load()
		if stateOf(w) != halfOpen || !t.of(epochOf(w)) || issuedOf(w) == 0 || b.w.CompareAndSwap(w, w-issuedOne) {
			return
		}
	}
}

// DoneOn reports the outcome of a request Allow let through with t, at now:
// its response time and whether it failed. Outcomes of requests let through
// before the breaker's last transition are ignored. cpu is the caller's
// CPU: any number, the same for the callers on one CPU (the Guard passes
// the stripe of the processor the request entered on). The outcome counts
// in that CPU's statistics, and the breaker decides on the sum of all,
// whatever cpu is.
func (b *Breaker) DoneOn(cpu uint32, now int64, t Ticket, rt time.Duration, failed bool) {
	if t&1 == 0 { // the zero Ticket, of no request
		return
	}
	bad := failed
	if b.cfg.Strategy == pub.SlowRatio {
		bad = rt > b.cfg.MaxRT
	}
	if t.Probe() {
		b.probeDone(now, t, bad)
		return
	}
	w := b.w.Load()
	if stateOf(w) != closed || !t.of(epochOf(w)) {
		return
	}
	st := b.stats.Load()
	arr := st.arrs[stripe.Of(cpu, len(st.arrs))]
	arr.Add(now, window.Complete, 1)
	if !bad {
		return // a good outcome never trips a breaker
	}
	arr.Add(now, window.Error, 1)
	total, nbad := st.sum(now, window.Complete), st.sum(now, window.Error)
	if total < b.cfg.MinRequests {
		return
	}
	var reason string
	switch b.cfg.Strategy {
	case pub.ErrorCount:
		if float64(nbad) < b.cfg.Threshold {
			return
		}
		reason = fmt.Sprintf("%d errors >= %v in %s (%d requests)", nbad, b.cfg.Threshold, b.cfg.Window, total)
	default:
		ratio := float64(nbad) / float64(total)
		if ratio < b.cfg.Threshold {
			return
		}
		what := "error"
		if b.cfg.Strategy == pub.SlowRatio {
			what = "slow (> " + b.cfg.MaxRT.String() + ")"
		}
		reason = fmt.Sprintf("%s ratio %.3g >= %v of %d requests in %s", what, ratio, b.cfg.Threshold, total, b.cfg.Window)
	}
	b.transition(w, now, open, total, nbad, reason)
}

// GoneOn reports, as DoneOn, a request whose caller gave up. A slow-ratio
// breaker counts it as slow when it ran longer than MaxRT; otherwise, as
// the other strategies always do, it does not count it (cut short, it
// tells nothing of the service), and a probe's place goes to another
// request: clients hanging up can neither open a breaker nor keep one
// closed or close it (TestClientsHangingUpFastKeepNoSlowBreakerClosed).
func (b *Breaker) GoneOn(cpu uint32, now int64, t Ticket, rt time.Duration) {
	if b.cfg.Strategy == pub.SlowRatio && rt > b.cfg.MaxRT {
		b.DoneOn(cpu, now, t, rt, true)
		return
	}
	b.Undo(t)
}

// probeDone counts the outcome of a probe of the half-open period of t.
func (b *Breaker) probeDone(now int64, t Ticket, bad bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.w.Load()
	if stateOf(w) != halfOpen || !t.of(epochOf(w)) {
		return
	}
	switch {
	case bad:
		b.transitionLocked(w, now, open, -1, 1, "probe failed")
	case b.passed.Load()+1 >= b.cfg.Probes:
		b.transitionLocked(w, now, closed, b.passed.Load()+1, 0, fmt.Sprintf("%d of %d probes succeeded", b.passed.Load()+1, b.cfg.Probes))
	default:
		// The probes still in flight are younger than this one: OpenFor
		// from now, at most Probes-1 times a half-open period.
		b.passed.Add(1)
		b.pushProbeBy(now)
	}
}

// pushProbeBy moves the probes' deadline to now+OpenFor, if later.
func (b *Breaker) pushProbeBy(now int64) {
	by := now + int64(b.cfg.OpenFor)
	for p := b.probeBy.Load(); p < by && !b.probeBy.CompareAndSwap(p, by); p = b.probeBy.Load() {
	}
}

// transition moves the breaker from its state of word from, if it is still
// in it (ignoring probes let through meanwhile), to state to at now.
// Requests -1 stands for the probes that succeeded so far.
func (b *Breaker) transition(from uint64, now int64, to state, requests, bad int64, reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.transitionLocked(from, now, to, requests, bad, reason)
}

// transitionLocked is transition with mu held.
func (b *Breaker) transitionLocked(from uint64, now int64, to state, requests, bad int64, reason string) {
	if requests < 0 {
		requests = b.passed.Load()
	}
	cur := b.w.Load()
	if stateOf(cur) != stateOf(from) || epochOf(cur) != epochOf(from) {
		return // another goroutine made a transition first
	}
	switch to {
	case open:
		b.until.Store(now + int64(b.cfg.OpenFor))
		b.trips.Add(1)
	case halfOpen:
		b.probeBy.Store(now + int64(b.cfg.OpenFor))
		b.passed.Store(0)
	case closed:
		b.stats.Store(b.newStats())
	}
	// A CAS loop only because probes may still be let through (half-open)
	// until the new word is in: each retry follows one more probe, and
	// there are at most Probes of them.
	for !b.w.CompareAndSwap(cur, word(epochOf(cur)+1, to)) {
		cur = b.w.Load()
	}
	if b.notify != nil {
		b.notify(Transition{From: public[stateOf(from)], To: public[to], At: now, Requests: requests, Bad: bad, Reason: reason})
	}
}

// Stats returns the breaker's state and statistics at now.
func (b *Breaker) Stats(now int64) pub.Stats {
	w := b.w.Load()
	st := b.stats.Load()
	s := pub.Stats{State: public[stateOf(w)], Requests: st.sum(now, window.Complete), Bad: st.sum(now, window.Error), Trips: b.trips.Load()}
	if stateOf(w) == open {
		s.RetryAfter = time.Duration(max(b.until.Load()-now, 0))
	}
	return s
}
