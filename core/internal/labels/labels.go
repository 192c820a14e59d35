package labels

import (
	"maps"
	"strings"

	"github.com/sluicekit/sluice/core"
)

// Resources returns rs named in valid UTF-8, the resources that come to
// one name added up (InFlight and Totals) into the first. The slice is new.
func Resources(rs []core.ResourceStats) []core.ResourceStats {
	out, at := make([]core.ResourceStats, 0, len(rs)), make(map[string]int, len(rs))
	for _, r := range rs {
		r.Resource = strings.ToValidUTF8(r.Resource, "\uFFFD")
		i, seen := at[r.Resource]
		if !seen {
			at[r.Resource] = len(out)
			out = append(out, r)
			continue
		}
		m, t := &out[i], &out[i].Total
		m.InFlight += r.InFlight
		t.Pass, t.Block, t.Complete, t.Error, t.RT = t.Pass+r.Total.Pass, t.Block+r.Total.Block, t.Complete+r.Total.Complete, t.Error+r.Total.Error, t.RT+r.Total.RT
		for k, n := range r.Total.RTHistogram {
			t.RTHistogram[k] += n
		}
		if t.BlockedBy = maps.Clone(t.BlockedBy); t.BlockedBy == nil {
			t.BlockedBy = map[string]int64{}
		}
		for why, n := range r.Total.BlockedBy {
			t.BlockedBy[why] += n
		}
	}
	return out
}
