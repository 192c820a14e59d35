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
