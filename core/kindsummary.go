package core

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Summary describes r's limit for people, as the dashboard shows it: "100
// per 1s, token-bucket, burst 20", "10 in flight", "error-count >= 0.5 of
// >= 10 in 10s, open 5s". A rule of a kind of a Guard's own (WithKind) is
// described by the fields it sets: "limit 2, window 1m0s".
func (r Rule) Summary() string {
	var b strings.Builder
	if k := kindSet(builtinKinds()).find(r.Kind); k != nil && k.summary != nil {
		k.summary(&b, &r)
	} else {
		sep, rv := "", reflect.ValueOf(r)
		for i, key := range ruleFields() {
			if v := rv.Field(i); !slices.Contains(commonFields[:], key) && isSetValue(v) {
				fmt.Fprintf(&b, "%s%s %v", sep, key, v)
				sep = ", "
			}
		}
		return b.String()
	}
	if r.Burst > 0 {
		fmt.Fprintf(&b, ", burst %d", r.Burst)
	}
	if r.Priority != "" {
		fmt.Fprintf(&b, ", priority by %s", r.Priority)
	}
	if r.MaxWait > 0 {
		fmt.Fprintf(&b, ", wait <= %s", r.MaxWait)
	}
	if r.Store != "" {
		fmt.Fprintf(&b, ", store %s", r.Store)
		if r.Mode != "" {
			fmt.Fprintf(&b, " (%s)", r.Mode)
		}
		if r.OnFailure != "" {
			fmt.Fprintf(&b, ", on failure %s", r.OnFailure)
			if r.OnFailure == FailLocal && r.LocalLimit > 0 && r.LocalLimit != r.Limit {
				fmt.Fprintf(&b, " %d", r.LocalLimit)
			}
		}
	}
	return b.String()
}

// The summaries of the built-in kinds' own fields (kindSpec.summary):
// Summary adds those they share.

func flowSummary(b *strings.Builder, r *Rule) {
	fmt.Fprintf(b, "%d per %s, %s", r.Limit, r.Window, r.Algorithm)
	if r.Warmup > 0 {
		fmt.Fprintf(b, ", warmup %s", r.Warmup)
	}
}

func concurrencySummary(b *strings.Builder, r *Rule) {
	fmt.Fprintf(b, "%d in flight", r.Limit)
}

func hotspotSummary(b *strings.Builder, r *Rule) {
	if r.Algorithm == AlgorithmConcurrency {
		fmt.Fprintf(b, "%d in flight per %s", r.Limit, r.Param)
	} else {
		fmt.Fprintf(b, "%d per %s per %s, %s", r.Limit, r.Window, r.Param, r.Algorithm)
	}
	if n := len(r.Overrides); n == 1 {
		b.WriteString(", 1 override")
	} else if n > 1 {
		fmt.Fprintf(b, ", %d overrides", n)
	}
}

func breakerSummary(b *strings.Builder, r *Rule) {
	b.WriteString(string(r.Strategy))
	if r.MaxRT > 0 {
		fmt.Fprintf(b, " (> %s)", r.MaxRT)
	}
	fmt.Fprintf(b, " >= %v of >= %d in %s, open %s", r.Threshold, r.MinRequests, r.Window, r.OpenFor)
	if r.Probes > 1 {
		fmt.Fprintf(b, ", %d probes", r.Probes)
	}
}

func adaptiveSummary(b *strings.Builder, r *Rule) {
	fmt.Fprintf(b, "adaptive in flight, %d..%d", r.MinLimit, r.MaxLimit)
}

func systemSummary(b *strings.Builder, r *Rule) {
	fmt.Fprintf(b, "%s <= %v", r.Signal, r.Threshold)
	if r.Strategy != "" {
		fmt.Fprintf(b, ", %s", r.Strategy)
	}
}
