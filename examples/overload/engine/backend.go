package engine

import (
	"crypto/sha256"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// backend is a service of fixed capacity: workers requests at a time, each
// costing cost, the others waiting their turn in a queue, which a request
// leaves when its client gives up. A request being served is served to
// its end, as a real backend's would. The cost is a sleep of that many
// nanoseconds, so that the host's CPUs stay free for the load generator,
// or, when spin, that many rounds of hashing (see work).
type backend struct {
	slots chan struct{}
	spin  bool
	cost  atomic.Int64
}

func newBackend(workers int, spin bool, cost int64) *backend {
	b := &backend{slots: make(chan struct{}, workers), spin: spin}
	b.cost.Store(cost)
	return b
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case b.slots <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	if b.spin {
		work(b.cost.Load())
	} else {
		time.Sleep(time.Duration(b.cost.Load()))
	}
	<-b.slots
	_, _ = io.WriteString(w, "ok")
}

// workBlock is what a round of work hashes.
const workBlock = 1 << 10

// work spends rounds rounds of CPU work: each hashes a block with SHA-256.
func work(rounds int64) {
	var buf [workBlock]byte
	for range rounds {
		sum := sha256.Sum256(buf[:])
		copy(buf[:], sum[:])
	}
}

// calibrate returns the rounds of work that take about d on one CPU: the
// quickest of a few timings, the one least slowed by the host's other work.
func calibrate(d time.Duration) int64 {
	best := time.Duration(1<<63 - 1)
	for range 7 {
		start := time.Now()
		work(probeRounds)
		best = min(best, time.Since(start))
	}
	return scaleRounds(d, best)
}

// probeRounds are the rounds of work calibrate times.
const probeRounds = 2000

// scaleRounds returns the rounds of work that take about d when
// probeRounds of them took probe: at least one.
func scaleRounds(d, probe time.Duration) int64 {
	return max(1, int64(float64(d)/float64(probe)*probeRounds))
}
