package system

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/priority"
	"github.com/sluicekit/sluice/core/internal/window"
)

// Signal is what a system rule compares with its threshold.
type Signal string

// The signals.
const (
	QPS      Signal = "qps"      // requests admitted over the last second
	InFlight Signal = "inflight" // requests in flight
	RT       Signal = "rt"       // average response time over the last second, in milliseconds
	CPU      Signal = "cpu"      // CPU usage, a fraction in [0, 1]
	Load     Signal = "load"     // 1-minute load average
)

// Host reports whether s is read from the host (a Sampler) rather than
// from the rule's own statistics.
func (s Signal) Host() bool { return s == CPU || s == Load }

// Statistics window of a rule: one second in ten buckets, as a resource's.
const (
	windowLen = time.Second
	buckets   = 10
)

// The BBR check's memory, as BBR's: the lowest response time over
// rtpropLen, long enough that a queue, whose requests all wait, does not
// make its own minimum.
const rtpropLen = 10 * time.Second

// hold is how long a bound (the BBR check's, rt's) stays in force after
// its signal was last over the threshold (rt: or it last refused a
// request), so that a reading that dips below it for a moment (between two
// samples of the host, or while the bound keeps the response time at the
// threshold) does not let a flood in.
const hold = time.Second

// sharedGain is how much more than a bound a level has for each lower
// level that shares the rule (see under).
const sharedGain = 2

// rtRecent is the span of the average response time that the rt signal
// compares with its threshold: the current bucket and the one before, so
// that the rule reacts within a fifth of a second.
const rtRecent = 2 * windowLen / buckets

// Config configures a Limiter.
type Config struct {
	Signal    Signal
	Threshold float64
	// BBR admits requests while CPU usage is over the threshold as long as
	// the requests in flight stay under the highest recent completion rate
	// times the lowest recent response time (Signal CPU only; see bbr).
	BBR bool
}

// Limiter is the state of one system rule. Its methods may be called from
// any goroutine.
type Limiter struct {
	c Config
	s *state
}

// state is the statistics of a rule, which its later versions share:
// requests end on the state they entered by.
type state struct {
	inFlight atomic.Int64
	w        *window.LeapArray // Pass, Complete, RT and minimum RT
	rtprop   *window.LeapArray // minimum RT over rtpropLen, for the BBR check
	over     atomic.Int64      // when the host signal was last over the threshold; math.MinInt64: never
	levels   *priority.Tracker
}

// New returns a Limiter configured by c, sharing prev's statistics (if any).
func New(c Config, prev *Limiter) *Limiter {
	if prev != nil {
		return &Limiter{c, prev.s}
	}
	w, _ := window.New(buckets, windowLen) // valid constants: cannot fail
	rtprop, _ := window.New(buckets, rtpropLen)
	st := &state{w: w, rtprop: rtprop, levels: priority.New(nil)}
	st.over.Store(math.MinInt64)
	return &Limiter{c, st}
}

// Config returns the limiter's configuration.
func (l *Limiter) Config() Config { return l.c }

// Acquire decides n requests of level (see package priority) at now, host
// being the latest reading of the rule's host signal (Signal.Host), and
// takes their reservation when it admits them. ok reports the decision;
// limit is the limit it was taken against, for the rule's quota: the
// threshold, rounded down, for qps and inflight, the bound of the BBR
// check or of rt while it applies, else 0. The requests of a level below
// Critical are admitted under less (see core.Priority): a count's limit
// less what the levels above keep (priority.Tracker.Reserve, RateReserve),
// a host signal's threshold times priority.Tracker.Fraction; against a
// bound, see under.
func (l *Limiter) Acquire(now, n int64, host float64, level int) (ok bool, limit int64) {
	s, th := l.s, l.c.Threshold
	if n > flow.MaxLimit { // no bound is higher; 2^11 such in flight stay within 64 bits
		return false, 0
	}
	v := s.inFlight.Add(n)
	switch l.c.Signal {
	case InFlight:
		limit = int64(th)
		ok = v <= limit
		if ok && level < priority.Critical {
			ok = v <= limit-s.levels.Reserve(now, level, limit)
		}
	case QPS:
		// Reserve first, then check: concurrent requests never pass more
		// than the threshold.
		limit = int64(th)
		b := s.w.Add(now, window.Pass, n)
		sum := s.w.Sum(now, window.Pass)
		ok = sum <= limit
		if ok && level < priority.Critical {
			ok = sum <= limit-s.levels.RateReserve(now, level, limit)
		}
		if !ok {
			s.w.Undo(b, window.Pass, n)
		}
	case RT:
		// The bound applies while the average response time over rtRecent
		// is over threshold, or was so, or the bound refused a request,
		// within hold: requests held to the bound show a response time of
		// about the threshold, now over it, now under.
		if ok = true; s.rtHigh(now, th) {
			s.overAt(now)
		}
		if s.on(now) {
			bound := s.little(now, th)
			ok, limit = s.under(now, n, v, level, bound), int64(bound)
			if !ok {
				s.overAt(now)
			}
		}
	default: // CPU, Load
		frac := 1.0
		if level < priority.Critical {
			frac = s.levels.Fraction(now, level)
		}
		ok = host <= th*frac
		if !ok {
			s.over.Store(now)
		}
		if l.c.BBR && (!ok || s.on(now)) {
			bound := s.bbr(now)
			ok, limit = s.under(now, n, v, level, bound), int64(bound)
			if !ok {
				s.w.Add(now, window.Block, n)
			}
		}
	}
	if !ok {
		s.inFlight.Add(-n)
		return false, limit
	}
	if l.c.Signal != QPS { // counted above
		s.w.Add(now, window.Pass, n)
	}
	s.levels.Admitted(now, level, n, l.c.Signal == QPS)
	return true, limit
}

// under reports whether n requests of level, which raised the requests in
// flight to v, fit under bound, an estimate of the requests in flight the
// service sustains: whether the requests in flight of their level and
// above, theirs included, are n (none else: one always passes, or a bound
// on what ended could not grow from 0), or at most the bound times
// sharedGain for each lower level that had requests in the last second
// (see core.Priority). The levels above never wait for the room a lower
// level took, which it gives back as its requests end, refused meanwhile;
// the gain is room for the bursts of the higher level (as after a pause of
// the process), whose requests also wait behind the lower ones' in the
// service.
func (s *state) under(now, n, v int64, level int, bound float64) bool {
	own := v
	if level > 0 {
		own -= s.levels.Below(level)
	}
	for range s.levels.Sharing(now, level) {
		bound *= sharedGain
	}
	return own <= n || float64(own) <= bound
}

// rtHigh reports whether rtRecent's average response time is over threshold (ms).
func (s *state) rtHigh(now int64, threshold float64) bool {
	snap := s.w.SnapshotOver(now, rtRecent)
	return snap.Complete > 0 && float64(snap.RT) > threshold*float64(time.Millisecond)*float64(snap.Complete)
}

// on reports whether the signal was over its threshold within hold of now.
func (s *state) on(now int64) bool {
	last := s.over.Load()
	return last != math.MinInt64 && now-last < int64(hold)
}

// overAt records that the signal was over its threshold at now, once a ms at most.
func (s *state) overAt(now int64) {
	if last := s.over.Load(); last == math.MinInt64 || now-last >= int64(time.Millisecond) {
		s.over.Store(now)
	}
}

// little is the bound of the rt signal at now: the requests in flight that
// keep the response time at threshold (in milliseconds) at the rate
// requests completed over the last second, by Little's law (in flight =
// throughput x response time), plus one. Requests held to it show a
// response time of about the threshold: when they end sooner, the bound
// grows with the rate, when later, it shrinks. The one more is what lets a
// small bound grow: b requests in flight (b whole) that end in r give back
// the bound b x threshold/r, no more than b until r is half the threshold,
// so a bound brought to 1 by a stall would stay there.
func (s *state) little(now int64, threshold float64) float64 {
	done := s.w.SnapshotOver(now, windowLen).Complete
	bl := int64(s.w.BucketLen())
	// The window is its full buckets and the part of the current one past.
	span := windowLen - time.Duration(bl) + time.Duration(now%bl+1)
	return float64(done)/span.Seconds()*threshold/1000 + 1
}

// MinRT is the lowest response time the BBR check counts with: a faster
// response counts as MinRT, so that the bound never falls to 0.
const MinRT = time.Millisecond

// rateSpan is the span, in buckets, of the completions the BBR check
// takes its rate from: half a second. The busiest tenth of a second read a
// third more than the rate of 2 CPUs of 20ms, making room for 3 in flight
// on 2 CPUs, one waiting (p99 2.6x the unloaded latency where a half
// second keeps 2 in flight and 1.9-2.2x, as Sentinel's, on
// examples/overload's CPU-bound benchmark at 2x-10x).
const rateSpan = buckets / 2

// bbr is the bound of the BBR check at now (see the package doc and
// MinRT), 0 when no request completed in the last rtpropLen: the most
// requests served in rateSpan buckets of the last second, per second,
// times the lowest response time of the last rtpropLen, plus one, and at
// least 2; one more unless flooded (see floodShare). Completions, not passes: under overload more requests enter
// than end, and a bound on what entered would follow the flood. The one
// more is what lets the bound grow (b requests in flight that a service of
// more workers serves at once end b times as fast: a bound of b+1); a
// bound of twice the product keeps as many requests queued as served (p99
// 3.6-4.2x the unloaded latency measured on 2 CPUs). The 2 keep a service
// whose response times vary by half their mean from falling to one request
// at a time: there the lowest times the rate of one in flight is a half,
// a bound of 1.5 (TestBBRShedsByLevel).
func (s *state) bbr(now int64) float64 {
	bl := int64(s.w.BucketLen())
	newest := max(window.Floor(now, bl), s.w.Newest())
	var done [buckets]int64
	var maxDone, sum int64
	for i := range done {
		done[i] = s.w.Count(newest-int64(buckets-1-i)*bl, window.Complete)
		sum += done[i]
		if i >= rateSpan {
			sum -= done[i-rateSpan]
		}
		maxDone = max(maxDone, sum)
	}
	minRT := int64(math.MaxInt64)
	s.rtprop.Each(now, func(b *window.Bucket) {
		if b.Get(window.Complete) > 0 {
			minRT = min(minRT, b.MinRT())
		}
	})
	if minRT == math.MaxInt64 {
		return 0
	}
	rate := float64(maxDone) * float64(time.Second) / float64(bl*rateSpan)
	bound := max(rate*float64(max(minRT, int64(MinRT)))/float64(time.Second)+1, 2)
	if snap := s.w.SnapshotOver(now, windowLen); snap.Block*floodShare < snap.Pass {
		bound++
	}
	return bound
}

// floodShare: the BBR check is flooded while it refused at least
// 1/floodShare as many requests over the last second as the rule admitted,
// a load above about 1.2x what the service sustains. Until then it keeps
// room for one more request waiting, which a load about the capacity,
// arriving in bursts, needs so as not to be refused while the service has
// room (examples/overload's CPU-bound benchmark, 2 idle runs at 1x: 94%
// and 99% of the capacity served, 6% and 1% refused, with a p99 of 2.1x
// and 1.6x the unloaded one, where Sentinel's check served 91% and 97%);
// flooded, that request would only wait.
const floodShare = 5

// Release gives back the reservation of n requests of level admitted at
// about now that are not admitted after all.
func (l *Limiter) Release(now, n int64, level int) {
	l.s.inFlight.Add(-n)
	l.s.w.Add(now, window.Pass, -n)
	l.s.levels.Undo(now, level, n, l.c.Signal == QPS)
}

// Done ends n admitted requests of level at now, after rt. When gone
// (their caller gave up), they are no completions: abandoned in a queue,
// they end at the rate they came, not the service's.
func (l *Limiter) Done(now, rt, n int64, level int, gone bool) {
	l.s.inFlight.Add(-n)
	if !gone {
		l.s.w.AddRT(now, rt, false)
		if l.c.BBR {
			l.s.rtprop.AddRT(now, rt, false)
		}
	}
	l.s.levels.Done(level, n)
}

// Bound returns the bound on requests in flight in force at now, of the
// BBR check or of rt, and whether one is (its signal was over the
// threshold within hold); it changes nothing.
func (l *Limiter) Bound(now int64) (float64, bool) {
	switch s := l.s; {
	case l.c.Signal == RT:
		if s.on(now) || s.rtHigh(now, l.c.Threshold) {
			return s.little(now, l.c.Threshold), true
		}
	case l.c.BBR && s.on(now):
		return s.bbr(now), true
	}
	return 0, false
}

// InFlight returns the number of requests in flight.
func (l *Limiter) InFlight() int64 { return l.s.inFlight.Load() }

// Stats are the statistics of a rule over the last second.
type Stats struct {
	Pass         int64
	AvgRT, MinRT time.Duration
	Complete     int64
}

// Stats returns the rule's statistics over the last second at now.
func (l *Limiter) Stats(now int64) Stats {
	snap := l.s.w.SnapshotOver(now, windowLen)
	st := Stats{Pass: snap.Pass, Complete: snap.Complete, MinRT: time.Duration(snap.MinRT)}
	if snap.Complete > 0 {
		st.AvgRT = time.Duration(snap.RT / snap.Complete)
	}
	return st
}
