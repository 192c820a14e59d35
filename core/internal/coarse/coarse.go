package coarse

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/clock"
)

// Clock is a clock that costs one atomic load to read: a goroutine reads a
// source clock once per resolution and stores the reading. Its time lags the
// source by up to the resolution (more when the process is so busy that the
// goroutine is scheduled late), and never runs ahead of it.
//
// The goroutine runs only while the clock is read: after idleTicks
// consecutive ticks without a reading it parks, and the next Now reads the
// source directly and starts it again. Stop ends it for good; Now then reads
// the source. A Guard on the system clock times requests (statistics,
// response times) on a coarse Clock, where a millisecond is precise enough;
// its rules decide on the source: a reading that lags by a varying amount,
// by hundreds of milliseconds on a busy host, cannot keep a limit in real
// time.
type Clock struct {
	src  clock.Clock
	res  time.Duration
	now  atomic.Int64 // the last reading, in nanoseconds
	bits atomic.Int32 // coarseRunning | coarseRead | coarseStopped

	mu     sync.Mutex // serializes starting and stopping the goroutine
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the current goroutine has returned
}

const (
	coarseRunning = 1 << iota // the goroutine is running
	coarseRead                // Now was called since the last tick
	coarseStopped             // Stop was called

	// idleTicks is the number of ticks without a reading after which the
	// goroutine parks.
	idleTicks = 1000
)

// New returns a Clock reading src every resolution. It starts
// parked: the first Now starts the goroutine.
func New(src clock.Clock, resolution time.Duration) (*Clock, error) {
	if src == nil {
		return nil, fmt.Errorf("coarse.New: source clock is nil")
	}
	if resolution <= 0 {
		return nil, fmt.Errorf("coarse.New: resolution must be > 0, got %s", resolution)
	}
	c := &Clock{src: src, res: resolution}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// Now returns the last reading of the source clock, taken at most about one
// resolution ago. When the goroutine is parked or stopped it returns a fresh
// reading of the source instead (and restarts a parked goroutine).
func (c *Clock) Now() time.Duration {
	if c.bits.Load() == coarseRunning|coarseRead {
		return time.Duration(c.now.Load())
	}
	return c.slow()
}

func (c *Clock) slow() time.Duration {
	b := c.bits.Load()
	switch {
	case b&coarseStopped != 0:
		return c.src.Now()
	case b&coarseRunning != 0:
		c.bits.Or(coarseRead)
		return time.Duration(c.now.Load())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.src.Now()
	if c.bits.Load() == 0 { // parked, not stopped, and nobody restarted it meanwhile
		c.now.Store(int64(now))
		c.bits.Store(coarseRunning | coarseRead)
		c.done = make(chan struct{})
		go c.run(c.done)
	}
	return now
}

// run advances the clock every resolution until it is stopped or unread for
// idleTicks ticks.
func (c *Clock) run(done chan struct{}) {
	defer close(done)
	idle := 0
	for c.src.Sleep(c.ctx, c.res) == nil {
		c.now.Store(int64(c.src.Now()))
		if c.bits.CompareAndSwap(coarseRunning|coarseRead, coarseRunning) {
			idle = 0
			continue
		}
		if idle++; idle >= idleTicks && c.bits.CompareAndSwap(coarseRunning, 0) {
			return // parked; a reader who set coarseRead meanwhile made the swap fail
		}
	}
}

// Stop ends the goroutine and waits for it to return. Later calls of Now read
// the source clock. Stop is idempotent.
func (c *Clock) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bits.Or(coarseStopped)
	c.cancel()
	if c.done != nil {
		<-c.done
	}
}

// Running reports whether the goroutine is running (not parked or stopped).
func (c *Clock) Running() bool {
	b := c.bits.Load()
	return b&coarseRunning != 0 && b&coarseStopped == 0
}
