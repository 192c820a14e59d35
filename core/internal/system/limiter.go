package system

import (
	"math"
	"sync/atomic"
	"time"

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

// The BBR check's memory and headroom, as BBR's: the lowest response time
// over rtpropLen, long enough that a queue, whose requests all wait, does
// not make its own minimum; a bound bbrGain times the requests in flight
// that the throughput shown sustains, without which it could only shrink
// (requests held to what the throughput sustains never show more); and
// the bound kept for bbrHold after the host signal was last over the
// threshold, so that a reading that dips below it between two samples does
// not let a flood in.
const (
	rtpropLen = 10 * time.Second
	bbrGain   = 2
	bbrHold   = time.Second
)

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

// New returns a Limiter configured by c, sharing the statistics of prev
// when prev is not nil.
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
// threshold, rounded down, for qps and inflight, the BBR bound while it
// applies, else 0.
//
// The requests of a level below Critical are admitted under less: a limit
// on a count (qps, inflight, the BBR bound) less what the levels above
// keep (priority.Tracker.Reserve, RateReserve), a threshold on a signal of
// load (rt, cpu, load) times priority.Tracker.Fraction.
func (l *Limiter) Acquire(now, n int64, host float64, level int) (ok bool, limit int64) {
	s, th := l.s, l.c.Threshold
	v := s.inFlight.Add(n)
	frac := 1.0
	if level < priority.Critical && !l.c.Signal.count() {
		frac = s.levels.Fraction(now, level)
	}
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
			s.inFlight.Add(-n)
			return false, limit
		}
		s.levels.Admitted(now, level, n, true)
		return true, limit
	case RT:
		snap := s.w.SnapshotOver(now, windowLen)
		ok = snap.Complete == 0 || float64(snap.RT)/float64(snap.Complete) <= th*frac*float64(time.Millisecond)
	default: // CPU, Load
		ok = host <= th*frac
		if !ok {
			s.over.Store(now)
		}
		if over := s.over.Load(); l.c.BBR && (!ok || over != math.MinInt64 && now-over < int64(bbrHold)) {
			var bound float64
			ok, bound = s.bbr(now, v-n, v)
			limit = int64(bound)
			if ok && v > n && level < priority.Critical {
				ok = v <= limit-s.levels.Reserve(now, level, limit)
			}
		}
	}
	if !ok {
		s.inFlight.Add(-n)
		return false, limit
	}
	s.w.Add(now, window.Pass, n)
	s.levels.Admitted(now, level, n, false)
	return true, limit
}

// count reports whether s is a count that a limit applies to, rather than
// a signal of load.
func (s Signal) count() bool { return s == QPS || s == InFlight }

// MinRT is the lowest response time the BBR check counts with: the
// resolution of the clock requests are timed on.
const MinRT = time.Millisecond

// bbr is the BBR check at now of a request that raises the requests in
// flight from before to after: it passes when nothing else is in flight, or
// when after stays under bbrGain times the highest completion rate of a
// bucket of the last second, per second, times the lowest response time of
// the last rtpropLen (0 when no request completed in it, at least MinRT
// else): the requests in flight that the throughput the service showed
// sustains, as Sentinel's check and BBR's window do. Completions, not
// passes: under overload more requests enter than end, and a bound on what
// entered would follow the flood. It returns that bound too.
func (s *state) bbr(now, before, after int64) (bool, float64) {
	var maxDone int64
	minRT := int64(math.MaxInt64)
	s.w.Each(now, func(b *window.Bucket) {
		maxDone = max(maxDone, b.Get(window.Complete))
	})
	s.rtprop.Each(now, func(b *window.Bucket) {
		if b.Get(window.Complete) > 0 {
			minRT = min(minRT, b.MinRT())
		}
	})
	if minRT == math.MaxInt64 {
		minRT = 0
	} else {
		// A response faster than the clock that timed it (a millisecond,
		// core's coarse clock) reads 0: count it as one tick of that clock.
		minRT = max(minRT, int64(MinRT))
	}
	rate := float64(maxDone) * float64(time.Second) / float64(s.w.BucketLen())
	bound := bbrGain * rate * float64(minRT) / float64(time.Second)
	return before <= 0 || float64(after) <= bound, bound
}

// Release gives back the reservation of n requests of level admitted at
// about now that are not admitted after all.
func (l *Limiter) Release(now, n int64, level int) {
	l.s.inFlight.Add(-n)
	l.s.w.Add(now, window.Pass, -n)
	l.s.levels.Undo(now, level, n, l.c.Signal == QPS)
}

// Done ends n admitted requests of level at now, after rt.
func (l *Limiter) Done(now, rt, n int64, level int) {
	l.s.inFlight.Add(-n)
	l.s.w.AddRT(now, rt, false)
	if l.c.BBR {
		l.s.rtprop.AddRT(now, rt, false)
	}
	l.s.levels.Done(level, n)
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
