package core

// limiter is the state of one rule, of a type of its kind's (see kindSpec).
type limiter interface {
	// ask decides the request a is admitting for the rule rs: it takes a
	// reservation (a.slot), fills in its decision and acts on it
	// (a.decided for a rate rule, a.settle for a rejection or after one).
	// It returns an error only when the request cannot be decided (its
	// context ended). It is called through asking.ask, not the interface.
	ask(a *asking, rs *ruleState) error
	// undo gives back the reservation h of n permits, taken on the CPU
	// cpu, of a request that is not admitted after all. h is a copy: a
	// pointer passed to a method of an interface escapes to the heap.
	undo(h held, cpu uint32, n int64)
	// exit ends an admitted request for the rules that keep something for
	// Exit (traits.exits and traits.holds): h is the reservation the
	// request kept (Entry.keep), the zero hold for the rules of
	// binding.exits.
	exit(h hold, end ending)
	// times reports whether exit reads when a request ended (ending.now,
	// ending.rt): Exit then reads the clock for every request the rule
	// applies to, instead of for a sample (see Entry.Exit).
	times() bool
	// stats adds the kind's own state to a rule's statistics at now.
	stats(out *RuleStats, now int64)
}

// traits is what the engine needs to know of a rule's kind besides its
// limiter. A kind's constructor sets them.
type traits struct {
	waits     bool // admitted requests may wait for their turn (leaky bucket): asked last
	holds     bool // an admitted request may keep its reservation for Exit (Entry.keep)
	exits     bool // Exit ends each admitted request for the rule once (binding.exits)
	window    bool // a rate limit per window (not a concurrency limit): it has a Quota
	refills   bool // a token or leaky bucket
	ramps     bool // a decision may carry a warm-up ramp's limit instead of the rule's
	gate      bool // a breaker: asked first, it is no quota policy and limits no count
	shared    bool // kept in a store: not asked after a rejection (see storeKind.ask)
	adapts    bool // its limit moves: a request above it now may pass later
	cpu, load bool // it reads the host's CPU usage, load average: sampled while it is in force
	// over, when set, reports whether n permits are more than the rule
	// ever admits at once, whatever its decisions' limits (see neverAt).
	over  func(n int64) bool
	class *BlockClass // how the kind's blocks are answered (kindSpec.block)
}
