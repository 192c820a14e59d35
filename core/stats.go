package core

import (
	"time"

	"github.com/sluicekit/sluice/core/window"
)

// ResourceStats are the statistics of one resource over the last second.
type ResourceStats struct {
	Resource string
	// InFlight is the number of requests entered and not yet exited.
	InFlight int64
	// Pass, Block, Complete and Error count requests (permits, with
	// WithCount) over the last second; RT is their total response time and
	// MinRT the smallest; Peak is the highest in-flight count seen.
	Pass, Block, Complete, Error int64
	RT, MinRT                    time.Duration
	Peak                         int64
}

// Stats returns the statistics of the resource called name, or false when the Guard keeps
// none for it (it was never entered, or went over the resource bound and is
// counted under OverflowResource).
func (g *Guard) Stats(name string) (ResourceStats, bool) {
	var r *resource
	if name == OverflowResource {
		r = g.resources.overflow
	} else if r = (*g.resources.read.Load())[name]; r == nil {
		g.resources.mu.Lock()
		r = g.resources.dirty[name]
		g.resources.mu.Unlock()
	}
	if r == nil {
		return ResourceStats{}, false
	}
	return r.snapshot(int64(g.clock.Now())), true
}

func (r *resource) snapshot(now int64) ResourceStats {
	var s window.Snapshot
	for _, st := range r.stripes {
		s = s.Merge(st.SnapshotOver(now, statInterval))
	}
	return ResourceStats{
		Resource: r.name,
		InFlight: r.inFlight.Load(),
		Pass:     s.Pass,
		Block:    s.Block,
		Complete: s.Complete,
		Error:    s.Error,
		RT:       time.Duration(s.RT),
		MinRT:    time.Duration(s.MinRT),
		Peak:     s.Peak,
	}
}
