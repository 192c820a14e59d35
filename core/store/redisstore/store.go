package redisstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicekit/sluice/core/ratemath"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/stripe"
)

// errStoreClosed is returned, wrapped with store.ErrUnavailable, by a
// Store's calls after Close.
var errStoreClosed = errors.New("redisstore: store is closed")

// dispatchers is the number of goroutines that send batches: while one waits
// for its round trip, another sends the decisions that arrived meanwhile.
const dispatchers = 2

// maxKeyLen is the longest key a Store uses as it is; a longer one is
// replaced by its SHA-256.
const maxKeyLen = 256

// Store is a store.Store on Redis. Exact limits are decided in Redis by
// one Lua script per decision; approximate limits are decided in the
// process and synchronized with Redis every sync period. It is safe for
// concurrent use; Close stops its goroutines.
type Store struct {
	client redis.UniversalClient
	o      options
	start  time.Time      // the origin of the store's monotonic clock
	picker *stripe.Picker // the CPU of a Take, for approximate sliding counters' leases
	gcra   *redis.Script  // newScriptGCRA for the idle expiry

	queue chan *call
	stop  chan struct{}
	// direct is set while a call runs on its caller's goroutine: with a
	// client that honours contexts, a Take that finds no other doing so
	// makes its call itself, sparing two goroutine switches.
	ctxOK  bool
	direct atomic.Bool
	closed atomic.Bool
	// lagMax is the most a timer of the Store fired late lately
	// (nanoseconds), lagAt when it was last seen: see lag.
	lagMax atomic.Int64
	lagAt  atomic.Int64
	wg     sync.WaitGroup
	calls  sync.Pool // *call

	// Approximate mode.
	offset      atomic.Int64 // Redis's clock minus the store's (start), in nanoseconds
	offsetKnown atomic.Bool
	// floor is the least time now returns: the time it returned when a
	// new measure of offset came out lower than the one before, so that
	// this view of Redis's clock never goes back (it stands still
	// instead, until it catches up).
	floor atomic.Int64
	// bestRTT is the shortest round trip a measure of offset took, and
	// offsetAt the local time of the measure in force: a measure that took
	// much longer than the best is too loose to replace a recent one.
	bestRTT  atomic.Int64
	offsetAt atomic.Int64
	entries  sync.Map // key -> *entry
	// id names the Store in Redis's records of approximate pushes, with
	// each entry's number from serial (see entry.id).
	id         string
	serial     atomic.Int64
	tracked    atomic.Int64
	gen        atomic.Int64 // sync rounds started
	syncs      atomic.Int64
	syncErrors atomic.Int64
	// okSyncStart is when the last successful sync round started (on
	// the store's clock), maxSyncGap the longest span from one's start to the next
	// one's end (Stats.MaxSyncGap).
	okSyncStart atomic.Int64
	maxSyncGap  atomic.Int64
	lastErr     atomic.Pointer[errBox]
	syncMu      sync.Mutex // one sync at a time (the loop, Close)
	retiredMu   sync.Mutex
	retired     []*entry // replaced entries whose counts the next sync pushes (again, when it failed)
	// carried, when set (by tests), runs in entry between carrying a
	// replaced entry's counts and replacing it.
	carried func()
}

type errBox struct{ err error }

// New returns a Store on client, which may be a single node, Sentinel
// (failover) or Cluster client. The Store does not close client.
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, fmt.Errorf("redisstore.New: client is nil")
	}
	o := defaultOptions()
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("redisstore.New: option is nil")
		}
		if err := opt.apply(&o); err != nil {
			return nil, err
		}
	}
	o.maxSyncAge = max(syncAgePeriods*o.syncPeriod, minSyncAge)
	s := &Store{
		client: client,
		o:      o,
		start:  time.Now(),
		queue:  make(chan *call, 4*o.batch),
		stop:   make(chan struct{}),
		ctxOK:  honoursContext(client),
		gcra:   newScriptGCRA(o.idle),
	}
	var id [8]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand)
	s.id = hex.EncodeToString(id[:])
	s.picker = stripe.NewPicker()
	s.gen.Store(1)
	s.offset.Store(time.Now().UnixNano() - int64(time.Since(s.start)))
	s.bestRTT.Store(math.MaxInt64)
	s.calls.New = func() any {
		t := time.NewTimer(time.Hour)
		t.Stop()
		return &call{done: make(chan struct{}, 1), timer: t}
	}
	if o.batch > 1 {
		for range dispatchers {
			s.wg.Go(s.dispatch)
		}
	}
	s.wg.Go(s.syncLoop)
	return s, nil
}

// Close stops the Store's goroutines, after pushing approximate mode's
// last counts to Redis (within the timeout plus WithMaxLag). Calls made
// after Close return an error wrapping store.ErrUnavailable that says the
// store is closed.
// Close is idempotent.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.syncOnce()
	close(s.stop)
	s.wg.Wait()
	return nil
}

// Take decides n requests of key under lim: in Redis for an exact limit,
// in the process for an approximate one.
func (s *Store) Take(ctx context.Context, key string, lim store.Limit, n int64) (store.Decision, error) {
	if s.closed.Load() {
		return store.Decision{}, errClosed()
	}
	if n < 1 {
		return store.Decision{}, fmt.Errorf("redisstore: n must be >= 1, got %d", n)
	}
	if lim.Mode == store.Approximate {
		t := int64(time.Since(s.start))
		if t-s.okSyncStart.Load() > int64(s.o.maxSyncAge) && s.outOfSync(t) {
			return store.Decision{}, s.syncAgeErr(t)
		}
		if e := s.lookup(key, lim); e != nil { // validated when tracked
			if d, err := s.takeTracked(ctx, e, n, t); err != nil || !e.dead() {
				return d, err
			}
		}
	}
	if err := validate(lim); err != nil {
		return store.Decision{}, err
	}
	if lim.Mode == store.Approximate {
		return s.takeApprox(ctx, key, lim, n)
	}
	return s.takeExact(ctx, key, lim, n)
}

// validate returns an error naming what of lim a Store cannot use
// (store.Limit.Validate).
func validate(lim store.Limit) error {
	if err := lim.Validate(); err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	return nil
}

// Undo gives back the n requests of an admitted decision d of Take, best
// effort: an exact sliding counter or token bucket in Redis, an approximate
// limit in the process (pushed at the next sync). A leaky bucket's slot is
// given back only in approximate mode, and only when no later request took
// a slot after it; in exact mode it is left empty.
func (s *Store) Undo(ctx context.Context, key string, lim store.Limit, d store.Decision, n int64) error {
	if s.closed.Load() {
		return errClosed()
	}
	if !d.OK || n < 1 || d.Limit <= 0 || validate(lim) != nil {
		return nil
	}
	if lim.Mode == store.Approximate {
		return s.undoApprox(ctx, key, lim, d, n)
	}
	c := s.getCall()
	switch lim.Algorithm {
	case store.SlidingCounter:
		c.set(scriptUndoSliding, s.redisKey(key, "sc:"+lim.Window.String()), n)
	case store.TokenBucket:
		c.set(scriptUndoGCRA, s.redisKey(key, "tb"), costOf(n, int64(lim.Window), d.Limit))
	default:
		s.putCall(c)
		return nil
	}
	err := s.do(ctx, c)
	if err == nil {
		s.putCall(c)
	}
	return err
}

// honoursContext reports whether client bounds its network calls by their
// context's deadline.
func honoursContext(client redis.UniversalClient) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}

func errClosed() error { return fmt.Errorf("%w: %w", store.ErrUnavailable, errStoreClosed) }

// redisKey returns PREFIX:{KEY}:suffix, KEY escaped so that it holds no
// brace (the hash tag is then exactly KEY, and every key of one limit lands
// in one Cluster slot) and hashed when long.
func (s *Store) redisKey(key, suffix string) string {
	if len(key) > maxKeyLen {
		sum := sha256.Sum256([]byte(key))
		key = "sha256:" + hex.EncodeToString(sum[:])
	}
	var b strings.Builder
	b.Grow(len(s.o.prefix) + len(key) + len(suffix) + 8)
	b.WriteString(s.o.prefix)
	b.WriteString(":{")
	if key == "" {
		b.WriteString(`\e`)
	}
	for i := 0; i < len(key); i++ {
		switch c := key[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '{':
			b.WriteString(`\[`)
		case '}':
			b.WriteString(`\]`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("}:")
	b.WriteString(suffix)
	return b.String()
}

// gcraKeys returns the keys of a bucket's TAT and of the cost of one
// request it was written at (newScriptGCRA), made in one allocation.
func (s *Store) gcraKeys(key, suffix string) (tat, cost string) {
	cost = s.redisKey(key, suffix+":cost")
	return cost[:len(cost)-len(":cost")], cost
}

// slidingKeys returns the keys of an exact sliding counter's state in
// window w and of the window its state was last written in
// (scriptSliding), made in one allocation.
func (s *Store) slidingKeys(key string, w time.Duration) (state, window string) {
	state = s.redisKey(key, "sc:"+w.String())
	return state, state[:strings.LastIndexByte(state, ':')]
}

// takeExact decides in Redis.
func (s *Store) takeExact(ctx context.Context, key string, lim store.Limit, n int64) (store.Decision, error) {
	if lim.Limit == 0 {
		return store.Decision{RetryAfter: lim.Window}, nil
	}
	start := int64(time.Since(s.start))
	if v, ok := s.entries.Load(key); ok {
		var cancel context.CancelFunc
		ctx, cancel = s.bounded(ctx, start)
		defer cancel()
		s.leaveApprox(ctx, key, v.(*entry))
	}
	c := s.getCall()
	var g gcra
	var st, win string
	switch lim.Algorithm {
	case store.SlidingCounter:
		st, win = s.slidingKeys(key, lim.Window)
		c.decide(scriptSliding, st, 4, 2, int64(lim.Window), s.o.idle.Milliseconds(), lim.Limit, n)
		c.keys = append(c.keys, win)
	default:
		g = gcraOf(lim)
		tat, cost := s.gcraKeys(key, g.suffix)
		c.decide(s.gcra, tat, 1, 1, g.cost1, g.cost(n), g.tol(n))
		c.keys = append(c.keys, cost)
	}
	if err := s.do(ctx, c); err != nil {
		return store.Decision{}, err
	}
	if lim.Algorithm == store.SlidingCounter {
		d, err := s.slidingReply(ctx, c, key, lim, n, st, win, start)
		if err == nil { // else a dispatcher may hold c still
			s.putCall(c)
		}
		return d, err
	}
	defer s.putCall(c)
	var v [1]int64
	if !intsInto(v[:], c.val) {
		return store.Decision{}, nonsense(c.val)
	}
	if v[0] < 0 { // rejected: -1 minus TAT-now
		ahead, over := -v[0]-1, int64(0)
		if tol := g.tol(n); tol >= 0 { // else it never fits: over is not used
			over = ahead + g.cost(n) - tol
		}
		return g.decision(false, ahead, over, n), nil
	}
	return g.decision(true, v[0], 0, n), nil
}

// leaveApprox forgets e, the approximate entry of key, whose rule is now
// exact: what it admitted last is pushed first (or by the next sync, when
// that fails), and a Take in approximate mode again makes a new entry,
// which reads the counts exact mode left (scriptApproxSliding). e leaves
// the map after the push: a concurrent exact decision that finds it pushes
// too (idempotent), so none decides before the push.
func (s *Store) leaveApprox(ctx context.Context, key string, e *entry) {
	e.state.Or(stDead)
	if e.hasPending() && s.exchange(ctx, e) != nil {
		s.retire(e)
	}
	if s.entries.CompareAndDelete(key, e) {
		s.tracked.Add(-1)
	}
}

// slidingReply reads the reply of c, an exact sliding counter's decision
// of n under lim (keys st and win, slidingKeys), and when its counts are
// elsewhere (approximate mode's, or another window's) moves or carries
// them, then decides again, all within the timeout of the decision's
// first trip, made at start.
func (s *Store) slidingReply(ctx context.Context, c *call, key string, lim store.Limit, n int64, st, win string, start int64) (store.Decision, error) {
	var v [4]int64
	for try := 0; ; try++ {
		if !intsInto(v[:], c.val) || v[0] > 1 && try == 2 {
			return store.Decision{}, nonsense(c.val)
		}
		if v[0] < 2 {
			return slidingDecision(lim, v[0] == 1, v[1], v[2], v[3], n), nil
		}
		if try == 0 {
			var cancel context.CancelFunc
			ctx, cancel = s.bounded(ctx, start)
			defer cancel()
		}
		c.state.Store(callWaiting) // a dispatcher took the last trip
		if v[0] == 3 {
			// The counts are approximate mode's: moved to the exact state first.
			w := int64(lim.Window)
			a := s.now() / w
			base := s.redisKey(key, "asc:"+lim.Window.String()+":")
			c.set(scriptSlidingFromApprox, st, strconv.FormatInt(a*w, 10), w, s.o.idle.Milliseconds())
			c.keys = append(c.keys, win, base+strconv.FormatInt(a, 10), base+strconv.FormatInt(a-1, 10))
			if err := s.do(ctx, c); err != nil {
				return store.Decision{}, err
			}
			c.state.Store(callWaiting)
		}
		c.set(scriptSliding, st, int64(lim.Window), s.o.idle.Milliseconds(), lim.Limit, n)
		c.keys = append(c.keys, win)
		if v[0] == 2 { // the window changed: carry the old one's counts
			c.keys = append(c.keys, s.redisKey(key, "sc:"+time.Duration(v[1]).String()))
		}
		if err := s.do(ctx, c); err != nil {
			return store.Decision{}, err
		}
	}
}

// slidingDecision is the decision of a sliding counter with p requests in
// the previous window, c in the current one (n included when ok) and e
// nanoseconds elapsed in it, as the memory store makes it: an admission
// that leaves no quota tells as Next the RetryAfter of a request of one
// right after it.
func slidingDecision(lim store.Limit, ok bool, p, c, e, n int64) store.Decision {
	e = min(max(e, 0), int64(lim.Window))
	est := ratemath.SlidingEstimate(p, c, e, int64(lim.Window))
	d := store.Decision{OK: ok, Limit: lim.Limit, Remaining: max(int64(float64(lim.Limit)-est), 0)}
	switch {
	case !ok:
		d.RetryAfter = time.Duration(ratemath.SlidingWait(p, c, e, n, lim.Limit, int64(lim.Window)))
	case d.Remaining == 0:
		d.Next = time.Duration(ratemath.SlidingWait(p, c, e, 1, lim.Limit, int64(lim.Window)))
	}
	return d
}

// gcra is the arithmetic of a token or leaky bucket limit, in nanoseconds.
type gcra struct {
	lim      store.Limit
	queue    bool
	suffix   string
	cost1    int64 // cost of one request
	capacity int64 // how far ahead of now the TAT may be for one more request
}

func gcraOf(lim store.Limit) gcra {
	w := int64(lim.Window)
	g := gcra{lim: lim, suffix: "tb"}
	if lim.Limit <= 0 {
		return g
	}
	g.cost1 = costOf(1, w, lim.Limit)
	if lim.Algorithm == store.LeakyBucket {
		g.queue, g.suffix = true, "lb"
		g.capacity = int64(lim.MaxWait) + g.cost1
	} else {
		g.capacity = w + ratemath.MulDiv(lim.Burst, w, lim.Limit)
	}
	return g
}

func (g gcra) cost(n int64) int64 { return costOf(n, int64(g.lim.Window), g.lim.Limit) }

// tol is the tolerance a request of n must fit: -1 when it never fits.
func (g gcra) tol(n int64) int64 {
	if n > g.lim.Limit+g.lim.Burst {
		return -1
	}
	if g.queue {
		return g.capacity + g.cost(n) - g.cost1
	}
	return g.capacity
}

// decision is the decision of a request of n given the TAT's distance
// ahead of now after it (before it, when rejected) and how far over the
// tolerance it was. An admission that leaves no quota tells as Next the
// RetryAfter of a request of one right after it.
func (g gcra) decision(ok bool, ahead, over, n int64) store.Decision {
	l := g.lim.Limit
	rem := int64(0)
	if ahead < g.capacity {
		rem = ratemath.MulDiv(g.capacity-ahead, l, int64(g.lim.Window))
	}
	if !ok {
		d := store.Decision{Limit: l, Remaining: rem, RetryAfter: time.Duration(max(over, 1))}
		if n > l+g.lim.Burst {
			d.RetryAfter = g.lim.Window
		}
		return d
	}
	d := store.Decision{OK: true, Limit: l, Remaining: rem}
	if g.queue {
		d.Wait = time.Duration(max(ahead-g.cost(n), 0))
	}
	if over := ahead + g.cost(1) - g.tol(1); rem == 0 && over > 0 {
		d.Next = time.Duration(over) // a request of one right after it: rejected, over
	}
	return d
}

// ints reads a reply of at least want integers.
func ints(val any, want int) ([]int64, error) {
	vs, ok := val.([]any)
	if !ok || len(vs) < want {
		return nil, nonsense(val)
	}
	out := make([]int64, len(vs))
	for i, v := range vs {
		x, ok := v.(int64)
		if !ok {
			return nil, nonsense(val)
		}
		out[i] = x
	}
	return out, nil
}

// intsInto reads a reply of exactly len(dst) integers into dst: an array,
// or an integer when len(dst) is 1. It reports whether the reply was that.
func intsInto(dst []int64, val any) bool {
	if x, ok := val.(int64); ok && len(dst) == 1 {
		dst[0] = x
		return true
	}
	vs, ok := val.([]any)
	if !ok || len(vs) != len(dst) {
		return false
	}
	for i, v := range vs {
		if dst[i], ok = v.(int64); !ok {
			return false
		}
	}
	return true
}

func nonsense(val any) error {
	s := fmt.Sprint(val)
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return fmt.Errorf("redisstore: %w: unexpected reply %s", store.ErrUnavailable, s)
}

// call is one script call, batched by a dispatcher or made directly.
type call struct {
	script *redis.Script
	keys   []string
	// head are the arguments a decision shares with the other decisions of
	// its key in one script call (width > 0: the number of values of each
	// decision's reply); args are its own.
	head  []any
	args  []any
	width int
	// nums holds the integer arguments of decide, which head and args
	// point to: a pointer in an interface does not allocate, an int64 does.
	nums [4]int64
	// sha and argv are the EVALSHA command of evalSha, kept to be reused.
	sha  string
	argv []any
	val  any
	err  error
	// state: callWaiting until a dispatcher takes it (callTaken) or the
	// caller gives up (callAbandoned); a call abandoned before it was taken
	// is never sent.
	state atomic.Int32
	// flight is the pipeline of a call a dispatcher took, set before
	// state becomes callTaken.
	flight *flight
	done   chan struct{}
	timer  *time.Timer
}

const (
	callWaiting = iota
	callTaken
	callAbandoned
)

func (c *call) set(script *redis.Script, key string, args ...any) {
	c.script = script
	c.keys = append(c.keys[:0], key)
	c.head = c.head[:0]
	c.args = append(c.args[:0], args...)
	c.width = 0
}

// evalSha runs c alone on client, as Script.EvalSha does, but with the
// command's arguments kept in c: its only allocations are the command's.
func (c *call) evalSha(ctx context.Context, client redis.UniversalClient) *redis.Cmd {
	c.sha = c.script.Hash()
	c.argv = append(c.argv[:0], "evalsha", &c.sha, len(c.keys))
	for i := range c.keys {
		c.argv = append(c.argv, &c.keys[i])
	}
	c.argv = append(c.argv, c.head...)
	c.argv = append(c.argv, c.args...)
	cmd := redis.NewCmd(ctx, c.argv...)
	if len(c.keys) > 0 {
		cmd.SetFirstKeyPos(3)
	}
	_ = client.Process(ctx, cmd)
	return cmd
}

// decide makes c a decision of a multi-decision script: the decisions of
// one key in one batch share a script call. Its arguments are integers, the
// first nhead of them the head, kept in c (see nums).
func (c *call) decide(script *redis.Script, key string, width, nhead int, vs ...int64) {
	c.script = script
	c.keys = append(c.keys[:0], key)
	c.head, c.args = c.head[:0], c.args[:0]
	for i, v := range vs {
		c.nums[i] = v
		if i < nhead {
			c.head = append(c.head, &c.nums[i])
		} else {
			c.args = append(c.args, &c.nums[i])
		}
	}
	c.width = width
}

func (s *Store) getCall() *call {
	c := s.calls.Get().(*call)
	c.state.Store(callWaiting)
	c.val, c.err = nil, nil
	c.keys, c.head, c.args, c.width = c.keys[:0], c.head[:0], c.args[:0], 0
	return c
}

// putCall recycles c, once nothing else refers to it.
func (s *Store) putCall(c *call) {
	clear(c.args)
	clear(c.head)
	clear(c.argv)
	c.val = nil
	s.calls.Put(c)
}

// do runs c within the timeout (extended while the process runs late,
// see WithMaxLag) and ctx, returning an error that wraps
// store.ErrUnavailable when Redis did not answer, or answered an error. On
// error c must not be recycled: a dispatcher may still hold it.
func (s *Store) do(ctx context.Context, c *call) error {
	start := int64(time.Since(s.start))
	if s.o.batch == 1 {
		return s.doDirect(ctx, c, start)
	}
	// On time, a lone call is made on its caller's goroutine; while the
	// process runs late, by a dispatcher, so that the caller's timer can
	// tell how late it runs and wait on.
	if s.ctxOK && s.lag(start) == 0 && !s.direct.Load() && s.direct.CompareAndSwap(false, true) {
		err := s.doDirect(ctx, c, start)
		s.direct.Store(false)
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redisstore: %w: %w", store.ErrUnavailable, err)
	}
	due := start + int64(s.o.timeout) + s.lag(start)
	t := c.timer
	t.Reset(time.Duration(due - start))
	defer t.Stop()
	giveUp := func(why error) error {
		if !c.state.CompareAndSwap(callWaiting, callAbandoned) {
			c.flight.leave() // sent already: the answer is dropped
		}
		return why
	}
	sent := false
	for {
		if !sent {
			select {
			case s.queue <- c:
				sent = true
				continue
			case <-t.C:
			case <-ctx.Done():
				return giveUp(fmt.Errorf("redisstore: %w: %w", store.ErrUnavailable, ctx.Err()))
			case <-s.stop:
				return giveUp(errClosed())
			}
		} else {
			select {
			case <-c.done:
				return c.err
			case <-t.C:
				// An answer that came while this goroutine waited to
				// run is taken.
				select {
				case <-c.done:
					return c.err
				default:
				}
			case <-ctx.Done():
				return giveUp(fmt.Errorf("redisstore: %w: %w", store.ErrUnavailable, ctx.Err()))
			case <-s.stop:
				return giveUp(errClosed())
			}
		}
		var ok bool
		if due, ok = s.waitOn(start, due); !ok {
			return giveUp(s.timeoutErr())
		}
		t.Reset(time.Duration(due - int64(time.Since(s.start))))
	}
}

// bounded returns ctx, ending when a call made at start (the time since
// s.start) times out (see do): the later round trips of one decision get
// what is left of its first one's timeout, not one each.
func (s *Store) bounded(ctx context.Context, start int64) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, s.start.Add(time.Duration(start+int64(s.o.timeout)+s.lag(start))))
}

// Lag: how late the process runs, as the Store's timers show it.
const (
	// minLag is the lateness of a timer that counts as lag: less is the
	// timers' own jitter.
	minLag = time.Millisecond
	// lagMemory is how long a lag seen is remembered.
	lagMemory = time.Second
)

// lag returns how late the Store's timers fired lately, at most the
// WithMaxLag: 0 when none fired minLag late in the last lagMemory.
func (s *Store) lag(now int64) int64 {
	l := s.lagMax.Load()
	if l == 0 || now-s.lagAt.Load() > int64(lagMemory) {
		return 0
	}
	return min(l, int64(s.o.maxLag))
}

// sawLag records that a timer due at due fired at now: the largest
// lateness is kept for lagMemory, and one at least half as large keeps it
// longer.
func (s *Store) sawLag(due, now int64) {
	late := now - due
	if late < int64(minLag) || s.o.maxLag == 0 {
		return
	}
	if cur := s.lag(now); late >= cur {
		s.lagMax.Store(late)
		s.lagAt.Store(now)
	} else if 2*late >= cur {
		s.lagAt.Store(now)
	}
}

// waitOn is called when the timer of a call started at start, due at due,
// fired without an answer. It returns the new due time and true when the
// call waits on: its timer fired late, so its answer may be waiting for a
// goroutine that runs as late; it then waits as long again, or the lag,
// if longer. Never beyond the timeout plus WithMaxLag after start.
func (s *Store) waitOn(start, due int64) (int64, bool) {
	now := int64(time.Since(s.start))
	s.sawLag(due, now)
	late := now - due
	if late < int64(minLag) {
		return 0, false
	}
	next := min(now+max(late, s.lag(now)), start+int64(s.o.timeout)+int64(s.o.maxLag))
	return next, next > now
}

func (s *Store) timeoutErr() error {
	return fmt.Errorf("redisstore: %w: no answer within %s", store.ErrUnavailable, s.o.timeout)
}

// doDirect runs c on the caller's goroutine (batching off, or a lone call
// while the process runs on time), started at start: its context ends
// after the timeout plus the lag. A call that fails because the caller ran
// late past that end shows the lag, so the next calls wait longer.
func (s *Store) doDirect(ctx context.Context, c *call, start int64) error {
	due := start + int64(s.o.timeout) + s.lag(start)
	ctx, cancel := context.WithTimeout(ctx, time.Duration(due-start))
	defer cancel()
	cmd := c.evalSha(ctx, s.client)
	if noScript(cmd.Err()) {
		cmd = c.script.Eval(ctx, s.client, c.keys, c.argv[len(c.keys)+3:]...)
	}
	c.val, c.err = cmd.Val(), wrapErr(cmd.Err())
	if c.err != nil {
		s.sawLag(due, int64(time.Since(s.start))) // late past due, if at all
	}
	return c.err
}

// noScript reports whether err is Redis's NOSCRIPT: the script is not
// loaded. A nil error is checked first: redis.HasErrorPrefix allocates.
func noScript(err error) bool {
	return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT")
}

func wrapErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("redisstore: %w: %w", store.ErrUnavailable, err)
}

// dispatch sends the calls of the queue in batches: it waits for one, takes
// whatever else is queued up to the batch size, and sends them in one
// pipeline. A lone call is sent at once.
func (s *Store) dispatch() {
	batch := make([]*call, 0, s.o.batch)
	for {
		select {
		case c := <-s.queue:
			batch = append(batch[:0], c)
		case <-s.stop:
			return
		}
	more:
		for len(batch) < s.o.batch {
			select {
			case c := <-s.queue:
				batch = append(batch, c)
			default:
				break more
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.clientTimeout())
		f := &flight{cancel: cancel}
		f.waiting.Store(int32(len(batch)))
		live := batch[:0]
		for _, c := range batch {
			c.flight = f
			if c.state.CompareAndSwap(callWaiting, callTaken) {
				live = append(live, c)
			} else {
				f.leave() // abandoned before it was sent
			}
		}
		s.run(ctx, live)
		cancel()
		for _, c := range live {
			c.done <- struct{}{}
		}
	}
}

// unit is one script call of a pipeline: one call, or the decisions of
// one key that share it.
type unit struct {
	script *redis.Script
	keys   []string
	calls  []*call
	cmd    *redis.Cmd
}

// arguments returns the script's arguments: the shared head, then each
// call's own.
func (u *unit) arguments() []any {
	c0 := u.calls[0]
	if len(u.calls) == 1 && len(c0.head) == 0 {
		return c0.args
	}
	args := make([]any, 0, len(c0.head)+len(u.calls)*len(c0.args))
	args = append(args, c0.head...)
	for _, c := range u.calls {
		args = append(args, c.args...)
	}
	return args
}

// distribute gives each call of u its part of the reply.
func (u *unit) distribute(cmd *redis.Cmd) {
	val, err := cmd.Val(), wrapErr(cmd.Err())
	w := u.calls[0].width
	if err != nil || w == 0 || len(u.calls) == 1 {
		for _, c := range u.calls {
			c.val, c.err = val, err
		}
		return
	}
	vs, ok := val.([]any)
	if !ok || len(vs) != w*len(u.calls) {
		err = nonsense(val)
	}
	for i, c := range u.calls {
		if err != nil {
			c.val, c.err = nil, err
		} else {
			c.val, c.err = vs[i*w:(i+1)*w:(i+1)*w], nil
		}
	}
}

// run sends calls in one pipeline, the decisions of one key in one script
// call, and the script calls that met NOSCRIPT (the scripts were flushed,
// or a node was replaced) again with their source.
func (s *Store) run(ctx context.Context, calls []*call) {
	if len(calls) == 0 {
		return
	}
	units := make([]unit, 0, len(calls))
	var byKey map[unitKey]int
	for _, c := range calls {
		if c.width > 0 && len(calls) > 1 {
			if byKey == nil {
				byKey = make(map[unitKey]int, len(calls))
			}
			k := unitKey{c.script, c.keys[0]}
			if i, ok := byKey[k]; ok {
				units[i].calls = append(units[i].calls, c)
				continue
			}
			byKey[k] = len(units)
		}
		units = append(units, unit{script: c.script, keys: c.keys, calls: []*call{c}})
	}
	s.pipeline(ctx, units, false)
	var retry []unit
	for _, u := range units {
		if noScript(u.cmd.Err()) {
			retry = append(retry, u)
		} else {
			u.distribute(u.cmd)
		}
	}
	if len(retry) == 0 {
		return
	}
	s.pipeline(ctx, retry, true)
	for _, u := range retry {
		u.distribute(u.cmd)
	}
}

// clientTimeout is how long the client may take over a pipeline. While the
// process runs late, callers wait longer (see waitOn), and the client is
// given all they may wait, or a reply read late would be a timeout; callers
// decide when to give up, and a dispatcher's pipeline ends when all its
// callers did (flight). On time, the timeout.
func (s *Store) clientTimeout() time.Duration {
	if s.lag(int64(time.Since(s.start))) > 0 {
		return s.o.timeout + s.o.maxLag
	}
	return s.o.timeout
}

// flight is a dispatcher's pipeline in flight: its context ends when every
// caller of its calls gave up, so that a dispatcher does not wait longer
// than anyone waits for its answers (in a dead Redis's dial retries, say).
type flight struct {
	cancel  context.CancelFunc
	waiting atomic.Int32
}

// leave records that a caller no longer waits.
func (f *flight) leave() {
	if f.waiting.Add(-1) == 0 {
		f.cancel()
	}
}

type unitKey struct {
	script *redis.Script
	key    string
}

func (s *Store) pipeline(ctx context.Context, units []unit, source bool) {
	if len(units) == 1 { // no pipeline for one command
		u := &units[0]
		if source {
			u.cmd = u.script.Eval(ctx, s.client, u.keys, u.arguments()...)
		} else {
			u.cmd = u.script.EvalSha(ctx, s.client, u.keys, u.arguments()...)
		}
		return
	}
	pipe := s.client.Pipeline()
	for i := range units {
		u := &units[i]
		if source {
			u.cmd = u.script.Eval(ctx, pipe, u.keys, u.arguments()...)
		} else {
			u.cmd = u.script.EvalSha(ctx, pipe, u.keys, u.arguments()...)
		}
	}
	_, _ = pipe.Exec(ctx) // each command keeps its own error
}
