package engine

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// The slowdown run: the adaptive rule under 2x the capacity while the
// backend's service time doubles halfway.
const (
	slowdownLoad = 2
	settleWindow = 500 * time.Millisecond // the limit's samples are told by their median per window
	settleBand   = 0.1                    // settled: each window within the final range widened by this share
)

// slowed is what the slowdown run measured.
type slowed struct {
	before, after time.Duration // the run's parts, after the warmup
	windows       []int64       // the limit's median per settleWindow, from the end of the warmup
	first         int           // the window in which the backend became slower
	settle        time.Duration // how long after it the limit settled; -1: it did not
	lo, hi        int64         // the range of the limit in the last half of after
	// The requests due before the slowdown and in the last half of after.
	early, late summary
}

// measureSlowdown runs the adaptive rule at slowdownLoad times the capacity
// while the backend becomes 2x slower halfway.
func (c config) measureSlowdown(ctx context.Context) (slowed, error) {
	p, _ := c.protection("adaptive")
	capacity := c.rate()
	r := slowed{before: c.duration / 2, after: c.duration}
	slowAt := c.warmup + r.before
	t, err := c.try(ctx, p, false, []stream{{Rate: slowdownLoad * capacity}}, slowAt+r.after, func(b *backend) {
		time.AfterFunc(slowAt, func() { b.cost.Store(2 * c.cost()) })
	})
	if err != nil {
		return r, err
	}
	r.windows = medians(t.limits, c.warmup, slowAt+r.after)
	r.first = int(r.before / settleWindow)
	r.settle, r.lo, r.hi = settled(r.windows, r.first)
	r.early = summarize(t.outs[0], c.warmup, slowAt)
	r.late = summarize(t.outs[0], slowAt+r.after/2, slowAt+r.after)
	return r, nil
}

// slowdownRun runs the slowdown and prints the adaptive limit over time.
func (c config) slowdownRun(ctx context.Context, out io.Writer, unloaded time.Duration) error {
	capacity := c.rate()
	fmt.Fprintf(out, "\nslowdown: adaptive at %gx (%.0f/s); %v in, the backend becomes 2x slower (%v per request, %.0f/s)\n",
		float64(slowdownLoad), slowdownLoad*capacity, c.duration/2, 2*c.service, capacity/2)
	r, err := c.measureSlowdown(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "limit, median of each %v from %v before:\n", settleWindow, r.before)
	perLine := int(5 * time.Second / settleWindow)
	for k := 0; k < len(r.windows); k += perLine {
		var line strings.Builder
		for i := k; i < min(k+perLine, len(r.windows)); i++ {
			fmt.Fprintf(&line, " %3d", r.windows[i])
		}
		fmt.Fprintf(out, "  %+5.1fs:%s\n", (time.Duration(k-r.first) * settleWindow).Seconds(), line.String())
	}
	if r.settle < 0 {
		fmt.Fprintf(out, "the limit did not settle in %v\n", r.after)
	} else {
		fmt.Fprintf(out, "the limit settled %v after the slowdown: from then on within %d-%d (its range in the last %v) +-%.0f%%\n",
			r.settle, r.lo, r.hi, r.after/2, 100*settleBand)
	}
	fmt.Fprintf(out, "before: goodput %.0f/s (%.0f%% of %.0f/s), p99 %s (%.1fx unloaded)\n",
		r.early.goodput, 100*r.early.goodput/capacity, capacity, ms(r.early.p99), float64(r.early.p99)/float64(unloaded))
	fmt.Fprintf(out, "last %v: goodput %.0f/s (%.0f%% of %.0f/s), p99 %s (%.1fx unloaded, 2x slower)\n",
		r.after/2, r.late.goodput, 200*r.late.goodput/capacity, capacity/2, ms(r.late.p99), float64(r.late.p99)/float64(2*unloaded))
	return nil
}

// medians returns the median limit sampled in each settleWindow of [from, to).
func medians(samples []sample, from, to time.Duration) []int64 {
	var out []int64
	for w := from; w+settleWindow <= to; w += settleWindow {
		var ls []int64
		for _, s := range samples {
			if s.at >= w && s.at < w+settleWindow {
				ls = append(ls, s.limit)
			}
		}
		if len(ls) == 0 {
			continue
		}
		slices.Sort(ls)
		out = append(out, ls[len(ls)/2])
	}
	return out
}

// settled returns how long after windows[first] the limit settled: from
// when on every window's median stays within the range of the last half's
// (where the limit moves once settled, growing and falling back), widened
// by settleBand, which it returns; -1 when no window after first is.
func settled(windows []int64, first int) (time.Duration, int64, int64) {
	last := windows[first+(len(windows)-first)/2:]
	lo, hi := slices.Min(last), slices.Max(last)
	at := -1
	for i := len(windows) - 1; i >= first; i-- {
		if v := float64(windows[i]); v < float64(lo)*(1-settleBand) || v > float64(hi)*(1+settleBand) {
			break
		}
		at = i
	}
	if at < 0 {
		return -1, lo, hi
	}
	return time.Duration(at-first) * settleWindow, lo, hi
}
