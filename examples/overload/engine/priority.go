package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"
	"time"

	"github.com/sluicekit/sluice/core"
)

// The priority run: two levels together at priorityLoad times the
// capacity, the higher at priorityHigh of it.
const (
	priorityLoad = 3.0
	priorityHigh = 0.5
)

// leveledRow is one level of a priority run.
type leveledRow struct {
	protection string
	level      core.Priority
	load       float64 // of the capacity
	summary
	succeeded float64 // share of the requests answered in time
}

// measureLevels runs protection name with critical requests at
// priorityHigh times the capacity and sheddable ones making up
// priorityLoad, and returns a row per level, the critical first.
func (c config) measureLevels(ctx context.Context, name string) ([]leveledRow, error) {
	p, _ := c.protection(name)
	capacity := c.rate()
	levels := []leveledRow{
		{protection: name, level: core.PriorityCritical, load: priorityHigh},
		{protection: name, level: core.PrioritySheddable, load: priorityLoad - priorityHigh},
	}
	var streams []stream
	for _, l := range levels {
		streams = append(streams, stream{Rate: l.load * capacity, Header: http.Header{PriorityHeader: {string(l.level)}}})
	}
	t, err := c.try(ctx, p, true, streams, c.warmup+c.duration, nil)
	if err != nil {
		return nil, err
	}
	for i := range levels {
		s := summarize(t.outs[i], c.warmup, c.warmup+c.duration)
		levels[i].summary = s
		if s.offered > 0 {
			levels[i].succeeded = s.goodput / s.offered
		}
	}
	return levels, nil
}

// priorityRun runs the protections that shed by level and prints a row
// per level.
func (c config) priorityRun(ctx context.Context, out io.Writer) error {
	capacity := c.rate()
	fmt.Fprintf(out, "\npriorities: %gx in all; %s at %gx (%.0f/s), %s the rest (%s header)\n",
		priorityLoad, core.PriorityCritical, priorityHigh, priorityHigh*capacity, core.PrioritySheddable, PriorityHeader)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "protection\tlevel\toffered/s\tgoodput/s\tsucceeded\tp50\tp99\trejected\ttimed out\t")
	for _, name := range c.protections {
		if p, _ := c.protection(name); !p.Leveled {
			continue
		}
		rows, err := c.measureLevels(ctx, name)
		if err != nil {
			return err
		}
		for _, r := range rows {
			fmt.Fprintf(w, "%s\t%s\t%.0f\t%.0f\t%.1f%%\t%s\t%s\t%.0f%%\t%.0f%%\t\n", r.protection, r.level, r.offered, r.goodput,
				100*r.succeeded, latency(r.p50, c.deadline), latency(r.p99, c.deadline), 100*r.rejected, 100*r.timedOut)
		}
	}
	return w.Flush()
}

// latency formats d, a latency percentile, in milliseconds, or as at
// least the deadline.
func latency(d, deadline time.Duration) string {
	if d >= deadline {
		return ">=" + deadline.String()
	}
	return ms(d)
}
