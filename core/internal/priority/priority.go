package priority

import (
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/internal/window"
)

// The levels, lowest first.
const (
	Sheddable = iota
	Default
	Critical
	Levels // the number of levels
)

// Parse returns the level named s: "critical" or "sheddable" in any case;
// anything else is Default.
func Parse(s string) int {
	switch {
	case strings.EqualFold(s, "critical"):
		return Critical
	case strings.EqualFold(s, "sheddable"):
		return Sheddable
	}
	return Default
}

// Headroom is the share of a limit that each level above a request's
// keeps for its own bursts, while it had requests in the last second.
const Headroom = 0.1

// span is how far back a Tracker looks: the last second for a level's
// peak in flight and pass count, and the second before for its rate.
const (
	span    = time.Second
	buckets = 20 // over two spans
)

// Tracker counts a rule's requests by level. Its methods may be called
// from any goroutine.
type Tracker struct{ s *state }

type state struct {
	inFlight [Levels]atomic.Int64
	w        [Levels]*window.LeapArray // the peak in flight, and Pass (rate)
	// seen is the time of a level's last admission, written at most once
	// a bucket: the levels not seen for a while cost a reckoning nothing.
	seen [Levels]atomic.Int64
}

// New returns a Tracker sharing the counts of prev when prev is not nil.
func New(prev *Tracker) *Tracker {
	if prev != nil {
		return prev
	}
	s := &state{}
	for i := range s.w {
		s.w[i], _ = window.New(buckets, 2*span) // valid constants: cannot fail
		s.seen[i].Store(math.MinInt64 / 2)
	}
	return &Tracker{s}
}

// Admitted counts n requests of level admitted at now, in the level's
// pass count too when rate is true (for RateReserve).
func (t *Tracker) Admitted(now int64, level int, n int64, rate bool) {
	v := t.s.inFlight[level].Add(n)
	w := t.s.w[level]
	var b *window.Bucket
	if rate {
		b = w.Add(now, window.Pass, n)
	} else {
		b = w.Current(now)
	}
	b.RaisePeak(v)
	if s := &t.s.seen[level]; now-s.Load() >= int64(w.BucketLen()) {
		s.Store(now)
	}
}

// Undo takes back n requests of level admitted at about now, with rate as
// they were, that are not admitted after all.
func (t *Tracker) Undo(now int64, level int, n int64, rate bool) {
	t.s.inFlight[level].Add(-n)
	if rate {
		t.s.w[level].Add(now, window.Pass, -n)
	}
}

// quiet reports whether level had no request in flight at now, and none
// admitted in the last second.
func (s *state) quiet(now int64, level int) bool {
	return s.inFlight[level].Load() <= 0 && now-s.seen[level].Load() > int64(span)
}

// Done ends n requests of level.
func (t *Tracker) Done(level int, n int64) { t.s.inFlight[level].Add(-n) }

// headroom is Headroom of limit, at least 1.
func headroom(limit int64) int64 {
	return max(int64(math.Ceil(Headroom*float64(limit))), 1)
}

// Reserve returns how much of a limit on requests in flight the requests
// of level must leave free at now: for each level above it that had
// requests in the last second, what its peak in flight over that second
// (or its requests in flight now, when more) exceeds its requests in
// flight now, plus its headroom (Headroom of
// limit, at least 1). Requests of Critical leave nothing.
func (t *Tracker) Reserve(now int64, level int, limit int64) int64 {
	var r int64
	for m := level + 1; m < Levels; m++ {
		if t.s.quiet(now, m) {
			continue
		}
		cur := t.s.inFlight[m].Load()
		peak := max(t.s.w[m].SnapshotOver(now, span).Peak, cur)
		if peak <= 0 {
			continue
		}
		r += peak - cur + headroom(limit)
	}
	return r
}

// Allowance returns how far beyond a limit on requests in flight, counted
// over all levels, a request of level may go at now: twice Headroom of the
// limit (at least 2) for each level below that had requests in the last
// second, less Headroom (at least 1) for each level above that had. A
// lower level thus takes all the room the levels above leave but a
// little, and those find room for their bursts beyond the limit, taking
// it from the lower ones (refused until the requests in flight are back
// under their bound), instead of room kept idle for them. A level loses
// at most a fifth of the limit: at a limit of 2 to 4 (an adaptive rule
// before 2 workers) the lowest keeps all of it, and the levels above go
// beyond it.
func (t *Tracker) Allowance(now int64, level int, limit int64) int64 {
	var a int64
	for m := range Levels {
		switch {
		case m == level || t.s.quiet(now, m):
		case m < level:
			a += 2 * headroom(limit)
		default:
			a -= headroom(limit)
		}
	}
	return max(a, -limit/5)
}

// RateReserve is Reserve for a limit on requests per second: a level above
// keeps what it passed in the second before the last beyond what it passed
// in the last, plus its headroom.
func (t *Tracker) RateReserve(now int64, level int, limit int64) int64 {
	var r int64
	for m := level + 1; m < Levels; m++ {
		if now-t.s.seen[m].Load() > int64(2*span) {
			continue
		}
		w := t.s.w[m]
		last := w.SumOver(now, span, window.Pass)
		ws := now - now%int64(w.BucketLen())
		before := w.SumBetween(ws-2*int64(span), ws-int64(span)+1, window.Pass)
		if last <= 0 && before <= 0 {
			continue
		}
		r += max(before-last, 0) + headroom(limit)
	}
	return r
}

// Fraction returns the share of a threshold on a signal of load (CPU,
// load average, response time) under which requests of level are admitted
// at now: 1 less Headroom for each level above it that had requests in the
// last second.
func (t *Tracker) Fraction(now int64, level int) float64 {
	f := 1.0
	for m := level + 1; m < Levels; m++ {
		if !t.s.quiet(now, m) && (t.s.inFlight[m].Load() > 0 || t.s.w[m].SnapshotOver(now, span).Peak > 0) {
			f -= Headroom
		}
	}
	return f
}

// Below returns the requests in flight of the levels below level: those a
// bound that sheds by level need not count against a request of level,
// since the requests of their levels are shed before its own.
func (t *Tracker) Below(level int) int64 {
	var n int64
	for m := range level {
		n += t.s.inFlight[m].Load()
	}
	return n
}

// Sharing returns how many levels below level had requests in flight at
// now or in the last second: the lower levels level shares the rule with.
func (t *Tracker) Sharing(now int64, level int) int {
	n := 0
	for m := range level {
		if !t.s.quiet(now, m) {
			n++
		}
	}
	return n
}
