package sluiceenvoy

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/sluicekit/sluice/core"
)

// nearLimitRatio is the share of a limit above which a hit is near the
// limit, the reference server's default (NEAR_LIMIT_RATIO).
const nearLimitRatio = 0.8

// nearHits is how many of an admitted request's cost hits fall above the
// near-limit threshold of q's limit, as the reference counts them: all of
// them when the count was past it before, else those past it after.
func nearHits(q core.Quota, cost int64) uint64 {
	threshold := int64(math.Floor(nearLimitRatio * float64(q.Limit)))
	after := q.Limit - q.Remaining
	return uint64(max(0, after-max(threshold, after-cost)))
}

// DescriptorStats are the statistics of a limit of the envoyproxy/ratelimit
// config, under the reference server's names: its hits (the sum of the costs
// of the descriptors it decided) since it was first in a config, those
// over the limit, those within it, and those within it that took the use of
// the limit above 80%; and the requests a shadow_mode limit would have
// rejected (core.RuleStats.ShadowedTotal; their hits count within the
// limit). A limit that a new config keeps
// (same domain and path) keeps its counts.
type DescriptorStats struct {
	Domain string
	// Key is the path of the limit in its domain, as the reference names
	// its statistics: "remote_address", "tenant.plan_gold".
	Key string
	// Rule is the name of the limit's rule.
	Rule                                         string
	TotalHits, OverLimit, NearLimit, WithinLimit uint64
	ShadowMode                                   uint64
}

// DescriptorStats returns the statistics of the limits of the config in
// force, ordered by domain and key.
func (s *Server) DescriptorStats() []DescriptorStats {
	st := s.st.Load()
	shadowed := map[string]int64{}
	for _, r := range s.g.Snapshot().Rules {
		if r.Rule.Shadow {
			shadowed[r.Rule.Name] = r.ShadowedTotal
		}
	}
	out := make([]DescriptorStats, 0, len(st.stats))
	for name, ls := range st.stats {
		out = append(out, DescriptorStats{Domain: ls.domain, Key: ls.key, Rule: name,
			TotalHits: ls.totalHits.Load(), OverLimit: ls.overLimit.Load(), NearLimit: ls.nearLimit.Load(),
			WithinLimit: ls.within.Load(), ShadowMode: uint64(max(shadowed[name], 0))})
	}
	slices.SortFunc(out, func(a, b DescriptorStats) int {
		return cmp.Or(strings.Compare(a.Domain, b.Domain), strings.Compare(a.Key, b.Key))
	})
	return out
}
