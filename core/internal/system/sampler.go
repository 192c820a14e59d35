package system

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/clock"
)

// Source supplies the host signals: CPU usage since the previous call, a
// fraction in [0, 1], and the 1-minute load average.
type Source interface {
	CPU() (float64, error)
	Load() (float64, error)
}

// Every is how often a Sampler reads its source.
const Every = 500 * time.Millisecond

// poll is the longest the goroutine sleeps before it reads a clock that is
// not the system's again (a test's fake clock), as core's watch does.
const poll = 100 * time.Millisecond

// Sampler reads the host signals from a Source every Every, on a goroutine
// of its own that runs only while a rule needs a signal, and keeps the
// latest readings for rules to load without a call to the source. A
// reading that fails keeps the previous one.
type Sampler struct {
	src   Source
	clock clock.Clock
	cpu   atomic.Uint64 // math.Float64bits of the latest reading
	load  atomic.Uint64

	mu       sync.Mutex // guards the fields below and the calls to src
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	needCPU  bool
	needLoad bool
	closed   bool
}

// NewSampler returns a Sampler of src that times its readings on c.
func NewSampler(src Source, c clock.Clock) *Sampler {
	return &Sampler{src: src, clock: c}
}

// Check reads the signal s once and keeps the reading; it returns the
// source's error when s cannot be read.
func (p *Sampler) Check(s Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.read(s)
}

// read reads s and keeps the reading. p.mu is held.
func (p *Sampler) read(s Signal) error {
	f, dst := p.src.CPU, &p.cpu
	if s == Load {
		f, dst = p.src.Load, &p.load
	}
	v, err := f()
	if err != nil {
		return err
	}
	if math.IsNaN(v) {
		v = 0
	}
	dst.Store(math.Float64bits(v))
	return nil
}

// Value returns the latest reading of the host signal s (0 before any).
func (p *Sampler) Value(s Signal) float64 {
	if s == Load {
		return math.Float64frombits(p.load.Load())
	}
	return math.Float64frombits(p.cpu.Load())
}

// Sample reads the signals the rules need once: the goroutine's step.
func (p *Sampler) Sample() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.needCPU {
		_ = p.read(CPU) // a failure keeps the previous reading
	}
	if p.needLoad {
		_ = p.read(Load)
	}
}

// Run makes the goroutine read CPU usage (cpu) and the load average (load)
// every Every: it starts it when a signal is needed and it is not running,
// and stops it when none is. Run does nothing once the Sampler is stopped.
func (p *Sampler) Run(cpu, load bool) {
	p.mu.Lock()
	p.needCPU, p.needLoad = cpu, load
	running, want := p.cancel != nil, (cpu || load) && !p.closed
	if running == want {
		p.mu.Unlock()
		return
	}
	if !want {
		p.cancel()
		p.cancel = nil
		p.mu.Unlock()
		p.wg.Wait()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.wg.Add(1)
	next := p.clock.Now() + Every // here, not when the goroutine starts
	p.mu.Unlock()
	go p.run(ctx, next)
}

// run samples every Every from next on until ctx ends.
func (p *Sampler) run(ctx context.Context, next time.Duration) {
	defer p.wg.Done()
	for {
		d := next - p.clock.Now()
		if _, real := p.clock.(*clock.System); !real {
			d = min(d, poll)
		}
		if d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		if now := p.clock.Now(); now >= next {
			p.Sample()
			next = max(next+Every, now)
		}
	}
}

// Stop stops the goroutine for good and waits for it. It is idempotent.
func (p *Sampler) Stop() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.Run(false, false)
}
