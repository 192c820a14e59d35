package adaptive

import (
	"cmp"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/rulefields"
)

// Defaults of Config.
const (
	DefaultMinLimit       = 2
	DefaultMaxLimit       = 1000
	DefaultInitialLimit   = 20
	DefaultInterval       = 100 * time.Millisecond
	DefaultTolerance      = 1.5
	DefaultProbeInterval  = 30 * time.Second
	DefaultMinRTIntervals = 20
	// MaxTolerance and MaxInterval bound Tolerance and Interval (and
	// ProbeInterval, MaxProbeInterval).
	MaxTolerance     = 100
	MaxInterval      = time.Minute
	MaxProbeInterval = 24 * time.Hour
	smoothing        = 0.2 // the weight of a shrinking step's target in the new limit
	minGradient      = 0.5
	// A probe lasts probeIntervals intervals after the requests in flight
	// when it started have ended (about the recent RT).
	probeIntervals = 2
	firstProbe     = 5 // intervals: the first minimum RT may have been measured under load
	// probeShare/Tolerance of the limit (or of the peak in flight) is the
	// limit of a probe after the first (see the package doc): where nothing
	// queues if the minimum RT was right, without dropping to MinLimit the
	// requests in flight a busy service needs.
	probeShare = 0.9
	// queueing is how much more than in proportion to the requests in
	// flight a probe's RT may fall and still show a queue.
	queueing = 1.2
	// Outside probes, the average RT of minSamples requests ended in an
	// interval, or of pooledSamples in intervals of fewer, may lower the
	// minimum (see the package doc).
	minSamples    = 8
	pooledSamples = 32
	// A growth is judged over judgeIntervals intervals and judgeN
	// requests ended at the new limit, at least.
	judgeIntervals = 3
	judgeN         = 16
	// Under overload, a growth must end more requests per second by
	// judgeRT/(Tolerance-1) times the share it slowed them by.
	judgeRT       = 0.25
	rateSmoothing = 0.3 // the weight of an interval's rate in the recent one
)

// Config configures a Controller; zero fields take their defaults.
type Config struct {
	MinLimit, MaxLimit int64
	// Interval is how often the limit is reconsidered: at the first
	// request ending after it passed.
	Interval time.Duration
	// Tolerance is how many times the minimum RT the recent RT may be
	// before the limit shrinks.
	Tolerance float64
	// ProbeInterval is the longest time between two periodic probes of
	// the minimum RT.
	ProbeInterval time.Duration
	// MinRTIntervals is the number of intervals in a row with the recent
	// RT above Tolerance times the minimum after which the controller
	// probes the minimum RT anew.
	MinRTIntervals int
}

// Validate returns the problems of c, by the names of their fields in a
// rules file.
func (c Config) Validate() []*rulefields.FieldError {
	var errs []*rulefields.FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, &rulefields.FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if c.MinLimit < 0 {
		add("minLimit", "must be >= 1, got %d", c.MinLimit)
	} else if c.MinLimit > flow.MaxLimit {
		add("minLimit", "must be <= %d, got %d", int64(flow.MaxLimit), c.MinLimit)
	}
	switch {
	case c.MaxLimit < 0:
		add("maxLimit", "must be >= 1, got %d", c.MaxLimit)
	case c.MaxLimit > flow.MaxLimit:
		add("maxLimit", "must be <= %d, got %d", int64(flow.MaxLimit), c.MaxLimit)
	case c.MaxLimit > 0 && c.MaxLimit < c.MinLimit:
		add("maxLimit", "must be >= minLimit (%d), got %d", c.MinLimit, c.MaxLimit)
	}
	if c.Interval < 0 || c.Interval > MaxInterval {
		add("window", "must be > 0 and <= %s (default %s), got %s", MaxInterval, DefaultInterval, c.Interval)
	}
	if c.Tolerance != 0 && !(c.Tolerance > 1 && c.Tolerance <= MaxTolerance) {
		add("tolerance", "must be > 1 and <= %d (default %v: the response time may grow by half before the limit falls), got %v",
			MaxTolerance, DefaultTolerance, c.Tolerance)
	}
	d := c.WithDefaults()
	switch {
	case c.ProbeInterval < 0 || c.ProbeInterval > MaxProbeInterval:
		add("probeInterval", "must be > 0 and <= %s (default %s), got %s", MaxProbeInterval, DefaultProbeInterval, c.ProbeInterval)
	case c.ProbeInterval > 0 && c.ProbeInterval < d.Interval:
		add("probeInterval", "must be >= the window (%s), got %s", d.Interval, c.ProbeInterval)
	}
	return errs
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.MinLimit == 0 {
		c.MinLimit = DefaultMinLimit
		if c.MaxLimit > 0 {
			c.MinLimit = min(c.MinLimit, c.MaxLimit)
		}
	}
	if c.MaxLimit == 0 {
		c.MaxLimit = max(DefaultMaxLimit, c.MinLimit)
	}
	c.Interval = cmp.Or(c.Interval, DefaultInterval)
	c.Tolerance = cmp.Or(c.Tolerance, DefaultTolerance)
	c.ProbeInterval = cmp.Or(c.ProbeInterval, DefaultProbeInterval)
	c.MinRTIntervals = cmp.Or(c.MinRTIntervals, DefaultMinRTIntervals)
	return c
}

// maxProbeEvery is the most intervals between periodic probes.
func (c Config) maxProbeEvery() int {
	return max(int(c.ProbeInterval/c.Interval), 1)
}

// Controller is the state of one adaptive rule. Its methods may be called
// from any goroutine.
type Controller struct{ s *state }

// state is a controller's state, which the controllers of a rule's later
// versions share: requests end on the controller they entered by.
type state struct {
	limit    atomic.Int64 // the limit in force
	inFlight atomic.Int64
	peak     atomic.Int64 // the most in flight since the last update
	// The requests ended since the last update: their count and total
	// response time.
	count, sum atomic.Int64
	refused    atomic.Int64 // requests refused since the last update
	next       atomic.Int64 // the time of the next update
	interval   atomic.Int64
	recentRT   atomic.Int64 // the recent RT of the last update
	minRT      atomic.Int64 // the minimum RT of the last update

	mu    sync.Mutex // for the fields below
	c     Config
	exact float64 // the limit, unrounded
	// congested counts the intervals congested (recent RT above Tolerance
	// times the minimum) in a row; sinceProbe the intervals since the last
	// probe, which comes after probeEvery, fulls those of them whose
	// requests filled the limit; probing, the intervals left of a probe,
	// whose lowest recent RT is probeRT.
	congested, sinceProbe, fulls, probeEvery, probing int
	probeRT                                           int64
	// A probe began; the last came of congestion (its RT may raise the minimum).
	probed, slower bool
	settle         bool // a probe just ended: the next interval's ran partly under it
	// A probe's limit, and the requests in flight and the recent RT before
	// it; below, when its RT fell with the requests in flight as a queue's
	// does, the limit the next probe goes under (else 0).
	probeLimit, probeFrom, probeFromRT, below int64
	// The requests ended in intervals of fewer than minSamples, not yet
	// pooledSamples: their count and total RT.
	fewN, fewSum int64
	// Growth, judged by the requests ended per ns it buys (see judge): rate
	// their recent number (smoothed), last the time of the last update;
	// grewFrom the level a growth left, at fromRate and fromRT (the recent
	// RT), and grownN ended in grownT since, taking grownSum, with
	// grownRefused refused; heldAt the level not grown from while requests
	// fill it and more are refused than served (an overload).
	last, grewFrom, grownN, grownT, grownSum, grownRefused, heldAt int64
	rate, fromRate, fromRT                                         float64
}

// New returns a controller configured by c (with defaults). It shares the
// state of prev when prev is not nil, its limit brought within the new
// bounds; else it starts at DefaultInitialLimit within them.
func New(c Config, prev *Controller) *Controller {
	c = c.WithDefaults()
	var s *state
	if prev != nil {
		s = prev.s
	} else {
		s = &state{probeEvery: firstProbe, exact: DefaultInitialLimit}
		s.next.Store(math.MinInt64)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.c = c
	s.probeEvery = min(s.probeEvery, c.maxProbeEvery())
	s.interval.Store(int64(c.Interval))
	s.exact = min(max(s.exact, float64(c.MinLimit)), float64(c.MaxLimit))
	s.limit.Store(int64(s.exact))
	return &Controller{s}
}

// Acquire takes n slots if, with them, the slots taken are at most the
// limit plus allow (a priority level's allowance, which may be negative;
// 0 without levels).
func (k *Controller) Acquire(n, allow int64) bool {
	s := k.s
	lim := s.limit.Load() + allow
	if n > lim { // checked first: a huge n would wrap the count
		s.refused.Add(1)
		return false
	}
	v := s.inFlight.Add(n)
	if v > lim {
		s.inFlight.Add(-n)
		s.refused.Add(1)
		return false
	}
	if v > s.peak.Load() {
		s.peak.Store(v) // a lost race loses a peak, not a slot
	}
	return true
}

// Release gives back n slots of a request that is not admitted after all.
func (k *Controller) Release(n int64) { k.s.inFlight.Add(-n) }

// Done ends a request of n slots that took rt, at now: its response time
// counts for the interval ending next, and the first request ending after
// it updates the limit. When gone (its caller gave up), it would have taken
// longer: its RT counts only over the minimum, showing the service at least
// that slow; sooner, it must not lower the minimum.
func (k *Controller) Done(now, rt, n int64, gone bool) {
	s := k.s
	s.inFlight.Add(-n)
	if m := s.minRT.Load(); gone && (m == 0 || rt <= m) {
		return
	}
	s.count.Add(1)
	s.sum.Add(rt)
	next := s.next.Load()
	if now < next || !s.next.CompareAndSwap(next, now+s.interval.Load()) {
		return
	}
	s.mu.Lock()
	s.update(now, next == math.MinInt64)
	s.mu.Unlock()
}

// update ends an interval; first is true for the first request ever,
// which only starts one.
func (k *state) update(now int64, first bool) {
	count, sum, refused := k.count.Swap(0), k.sum.Swap(0), k.refused.Swap(0)
	peak := k.peak.Swap(k.inFlight.Load())
	elapsed := now - k.last
	k.last = now
	if first || count == 0 {
		return
	}
	recent := max(sum/count, 1)
	k.recentRT.Store(recent)
	k.sinceProbe++
	r := float64(count) / float64(max(elapsed, 1))
	k.rate += (r - k.rate) * rateSmoothing
	if k.probing > 0 {
		k.grewFrom, k.heldAt = 0, 0
		k.probeRT = min(k.probeRT, recent)
		if k.probing--; k.probing == 0 {
			k.endProbe()
		}
		return
	}
	minRT, low := k.minRT.Load(), recent
	if count < minSamples {
		// Too few to compare alone: with those of other such intervals.
		k.fewSum, k.fewN, low = k.fewSum+sum, k.fewN+count, math.MaxInt64
		if k.fewN >= pooledSamples {
			low, k.fewSum, k.fewN = k.fewSum/k.fewN, 0, 0
		}
	}
	switch {
	case minRT == 0: // the first reading
		minRT = recent
	case low < minRT:
		minRT = low
	}
	k.minRT.Store(minRT)
	gradient := min(max(k.c.Tolerance*float64(minRT)/float64(recent), minGradient), 1)
	used := float64(peak) >= k.exact/2 // else no evidence the limit could be higher
	// A periodic probe only when the requests filled the limit in that
	// interval and in most since the last probe, as a queue does: a load
	// the service carries, which fills it in a burst now and then, is not
	// refused for a probe.
	if peak >= int64(k.exact) {
		k.fulls++
	}
	full := peak >= int64(k.exact) && 2*k.fulls > k.sinceProbe
	// The RT under which the limit grows: halfway to the tolerance; after
	// a probe, whose fewer requests in flight lowered the RT, the minimum.
	grow := (1 + k.c.Tolerance) / 2
	if k.settle {
		grow, k.settle = 1, false
	}
	if peak < int64(k.exact) || refused < count {
		k.heldAt = 0
	}
	undo := k.judge(count, sum, refused, elapsed, peak)
	judging := k.grewFrom // a growth of an earlier interval, not judged yet
	held := k.heldAt > 0 && int64(k.exact) >= k.heldAt
	switch {
	case gradient < 1:
		target := k.exact * gradient
		k.exact = k.exact*(1-smoothing) + target*smoothing
		k.congested++
	case used && float64(recent) <= grow*float64(minRT) && k.grewFrom == 0 && !held:
		// Well within the tolerance: room to grow. Beyond the halfway
		// mark the limit holds, so that it does not swing around the
		// point where requests begin to queue.
		l := k.exact
		if recent > minRT {
			l = math.Floor(l)
		}
		k.exact = l + math.Sqrt(l)
		k.grewFrom, k.fromRate, k.fromRT, k.grownN, k.grownT, k.grownSum, k.grownRefused = int64(l), k.rate, float64(recent), 0, 0, 0, 0
		fallthrough
	default:
		k.congested = 0
	}
	if undo > 0 {
		k.exact = min(k.exact, float64(undo)+0.5)
	}
	k.exact = min(max(k.exact, float64(k.c.MinLimit)), float64(k.c.MaxLimit))
	if k.congested >= k.c.MinRTIntervals || k.sinceProbe >= k.probeEvery && full {
		if judging > 0 { // a growth not judged is not kept
			k.exact = min(k.exact, float64(judging)+0.5)
		}
		k.slower = k.congested >= k.c.MinRTIntervals
		// Queueing, or a service slower or faster for good? Measure the
		// RT at a lower limit, once the requests in flight at this one
		// have ended.
		drain := int((recent + k.interval.Load() - 1) / k.interval.Load())
		k.probing, k.probeRT, k.congested, k.sinceProbe, k.fulls = drain+probeIntervals, math.MaxInt64, 0, 0, 0
		k.probeEvery = min(2*k.probeEvery, k.c.maxProbeEvery())
		k.probeFrom, k.probeFromRT, k.probeLimit = min(int64(k.exact), peak), recent, k.c.MinLimit
		if k.probed {
			from := min(k.exact, float64(peak))
			if k.below > 0 {
				from = min(from, float64(k.below))
			}
			k.probeLimit = max(k.c.MinLimit, int64(from*probeShare/k.c.Tolerance))
		}
		k.limit.Store(k.probeLimit)
		k.probed = true
		return
	}
	k.limit.Store(int64(k.exact))
}

// judge judges the last growth by the requests ended since (see the
// package doc): it returns the level to go back to, or 0.
func (k *state) judge(count, sum, refused, elapsed, peak int64) (undo int64) {
	if k.grewFrom == 0 {
		return 0
	}
	k.grownN += count
	k.grownT += elapsed
	k.grownSum += sum
	k.grownRefused += refused
	got := float64(k.grownN) / (float64(k.grownT) * k.fromRate)
	slower := float64(k.grownSum)/float64(k.grownN)/k.fromRT - 1
	want := 1 + max(slower, 0)*judgeRT/(k.c.Tolerance-1)
	switch {
	case got > want+0.5/math.Sqrt(float64(k.grownN)) || k.grownRefused < k.grownN:
	case k.grownT < judgeIntervals*k.interval.Load() || k.grownN < judgeN:
		return 0
	case got < want && peak >= int64(k.exact):
		undo, k.heldAt = k.grewFrom, k.grewFrom
	}
	k.grewFrom = 0
	return undo
}

// endProbe ends a probe: its lowest recent RT becomes the minimum, unless
// it fell with the requests in flight (within queueing of in proportion
// to them) and is higher than the minimum: then they queued at the
// probe's limit too, which is no minimum; the limit falls to at most
// Tolerance times the probe's, and the next probe, soon, goes under it,
// the minimum kept until then. A periodic probe's RT only lowers it.
func (k *state) endProbe() {
	rt, old := k.probeRT, k.minRT.Load()
	k.below = 0
	if k.probeLimit < k.probeFrom && float64(rt*k.probeFrom) <= queueing*float64(k.probeFromRT*k.probeLimit) &&
		float64(rt) > (1+k.c.Tolerance)/2*float64(old) {
		k.exact = max(min(k.exact, k.c.Tolerance*float64(k.probeLimit)), float64(k.c.MinLimit))
		if k.probeLimit > k.c.MinLimit && old > 0 {
			k.below, k.probeEvery, rt = k.probeLimit, min(firstProbe, k.c.maxProbeEvery()), old
		}
	}
	if !k.slower && old > 0 {
		rt = min(rt, old)
	}
	k.minRT.Store(rt)
	k.limit.Store(int64(k.exact))
	k.settle = true
}

// Limit returns the limit in force.
func (k *Controller) Limit() int64 { return k.s.limit.Load() }

// InFlight returns the slots taken.
func (k *Controller) InFlight() int64 { return max(k.s.inFlight.Load(), 0) }

// RT returns the recent and the minimum RT of the last update, 0 before
// the first.
func (k *Controller) RT() (recent, minimum time.Duration) {
	return time.Duration(k.s.recentRT.Load()), time.Duration(k.s.minRT.Load())
}
