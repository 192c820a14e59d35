// Package rulefields is what package core and package rulesfile share about
// the fields of a rule: their names in a rules file, in the order problems
// are reported, and how problems quote values.
package rulefields

import (
	"iter"
	"slices"
	"strconv"
	"unicode/utf8"
)

// names lists the rule fields, by their names in the rules file, in the
// order problems are reported.
var names = [...]string{
	"name", "resource", "kind", "limit", "window", "algorithm", "buckets",
	"burst", "maxWait", "warmup", "coldFactor", "param", "maxKeys", "overrides",
	"onMissing",
	"store", "mode", "onFailure", "localLimit",
	"strategy", "threshold", "maxRT", "minRequests", "openFor", "probes",
	"minLimit", "maxLimit",
}

// All yields the rule fields in report order.
func All() iter.Seq[string] { return slices.Values(names[:]) }

// Known reports whether field is the name of a rule field.
func Known(field string) bool { return slices.Contains(names[:], field) }

// Rank returns the position of field in report order: 0 for a problem of
// a whole rule (empty field), then the fields in order, then other names.
func Rank(field string) int {
	if field == "" {
		return 0
	}
	if i := slices.Index(names[:], field); i >= 0 {
		return i + 1
	}
	return len(names) + 1
}

// Quote returns s quoted as a Go string, shortened to its first 64 bytes
// and "..." when longer, for problems.
func Quote[T ~string](t T) string {
	s := string(t)
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(Truncate(s, max)) + "..."
}

// Truncate returns the longest prefix of s of at most n bytes that does not
// cut a UTF-8 sequence.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
