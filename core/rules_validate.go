package core

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/hotspot"
	"github.com/sluicekit/sluice/core/internal/resname"
	"github.com/sluicekit/sluice/core/internal/rulefields"
	"github.com/sluicekit/sluice/core/store"
)

// Defaults of rule fields: a hotspot rule's MaxKeys, and the Algorithm of a
// flow rule with a store (a hotspot rule keeps its own, token-bucket).
const (
	defaultMaxKeys        = hotspot.DefaultMaxKeys
	defaultStoreAlgorithm = AlgorithmSlidingCounter
)

// Bounds that NormalizeRules enforces.
const (
	maxNameLen        = 200
	maxResourceLen    = 1024
	maxOverrideKeyLen = 1024
	maxHotspotKeys    = 10_000_000
)

// Problem is one problem of a rule set. Index is the position of the rule
// in the set, or -1 for a problem of a rules file that belongs to no rule;
// Name is the rule's explicit name, if any; Field is the field's name in
// the rules file, empty for a problem of the whole rule; Line is the line
// of a rules file the problem is on, 0 when unknown.
type Problem struct {
	Index int
	Name  string
	Field string
	Line  int
	Msg   string
}

// Error formats p as in `rules[2] (per-user): limit must be >= 0, got -5`:
// the rule's index, its name in parentheses when it has one, the line when
// known, the field and the message.
func (p Problem) Error() string {
	var b strings.Builder
	if p.Index >= 0 {
		fmt.Fprintf(&b, "rules[%d]", p.Index)
		switch {
		case len(p.Name) > maxNameLen || !isName(p.Name): // quoted (and shortened): the problem stays on one line
			fmt.Fprintf(&b, " (%s)", quote(p.Name))
		case p.Name != "":
			fmt.Fprintf(&b, " (%s)", p.Name)
		}
		b.WriteString(": ")
	}
	if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Field != "" {
		b.WriteString(p.Field + " ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// RulesError lists the problems of a rule set or rules file: every one, up
// to 1000; past that the first 1000, then a problem of Index -1 saying
// there are more (so that a hostile rule set cannot make it unbounded).
type RulesError struct {
	Problems []Problem
}

// Error returns the problems, one per line.
func (e *RulesError) Error() string {
	return strings.Join(mapped(e.Problems, Problem.Error), "\n")
}

// checkRules returns nil when every rule of rules is valid, or a
// *RulesError of their problems, in NormalizeRules's order (those of one
// field in the order found).
func (ks kindSet) checkRules(rules []Rule) error {
	v := validator{kinds: ks, fields: ruleFields(), firstUse: map[string]int{}}
	for i := range rules {
		r := &rules[i]
		v.index, v.name = i, r.Name
		v.checkName(r.Name)
		v.checkResource(r.Resource)
		v.checkKind(r)
	}
	slices.SortStableFunc(v.problems, func(a, b Problem) int {
		return cmp.Or(a.Index-b.Index, rulefields.Rank(v.fields, a.Field)-rulefields.Rank(v.fields, b.Field))
	})
	if v.more {
		v.problems = append(v.problems, Problem{Index: -1, Msg: rulefields.MoreProblems()})
	}
	if len(v.problems) == 0 {
		return nil
	}
	return &RulesError{Problems: v.problems}
}

// validator collects the problems of a rule set.
type validator struct {
	kinds    kindSet        // the kinds known
	fields   []string       // Rule's (ruleFields)
	firstUse map[string]int // explicit name -> index of its first rule
	problems []Problem
	more     bool   // problems were left out (see add)
	index    int    // rule being checked
	name     string // its explicit name
}

// add records a problem of field of the rule being checked.
// Past rulefields.MaxProblems it records that there are more instead.
func (v *validator) add(field, format string, args ...any) {
	if len(v.problems) >= rulefields.MaxProblems {
		v.more = true
		return
	}
	v.problems = append(v.problems, Problem{Index: v.index, Name: v.name, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// addAll records the problems of a limiter's configuration.
func (v *validator) addAll(fes []*rulefields.FieldError) {
	for _, fe := range fes {
		v.add(fe.Field, "%s", fe.Msg)
	}
}

// nameChars are the characters of rule names besides ASCII letters and digits.
const nameChars = "-_.:/{}*$#()"

// checkName checks an explicit name: bounded, of the name charset, and unique.
func (v *validator) checkName(name string) {
	if name == "" {
		return
	}
	if len(name) > maxNameLen {
		v.add("name", "must be at most %d bytes, got %d", maxNameLen, len(name))
	}
	if !isName(name) {
		v.add("name", "must contain only ASCII letters, digits and %s (it is written as is in RateLimit fields, problem bodies, metrics and logs), got %s", nameChars, quote(name))
	}
	if first, ok := v.firstUse[name]; ok {
		v.add("name", "%s is already used by rules[%d]", quote(name), first)
		return
	}
	v.firstUse[name] = v.index
}

// checkResource checks that a resource name or glob is present, bounded,
// printable (no control characters, no invisible format characters such as
// U+202E, which make a rule look like another) and has a canonical form
// (resname.Canonical).
func (v *validator) checkResource(res string) {
	switch {
	case res == "":
		v.add("resource", "is required")
	case len(res) > maxResourceLen:
		v.add("resource", "must be at most %d bytes, got %d", maxResourceLen, len(res))
	case strings.ContainsFunc(res, func(c rune) bool { return unicode.IsControl(c) || unicode.Is(unicode.Cf, c) }):
		v.add("resource", "must not contain control or format characters, got %s", quote(res))
	default:
		if _, err := resname.Canonical(res); err != nil {
			v.add("resource", "%s", err)
		}
	}
}

// checkStore checks the store fields of a flow or hotspot rule, whose kind
// takes the algorithms algs with a store, def when it gives none.
func (v *validator) checkStore(r *Rule, def Algorithm, algs ...Algorithm) {
	if r.Store == "" {
		const msg = "only applies to rules with a store"
		v.zero("mode", r.Mode != "", msg)
		v.zero("onFailure", r.OnFailure != "", msg)
		v.zero("localLimit", r.LocalLimit != 0, msg)
		return
	}
	if !rulefields.IsIdentifier(r.Store) {
		v.add("store", "must be a store name of letters, digits, '_', '.' and '-', got %s", quote(r.Store))
	}
	if r.Algorithm != "" && !slices.Contains(algs, r.Algorithm) {
		names := mapped(algs, func(a Algorithm) string { return string(a) })
		v.add("algorithm", "must be %s with a store, got %s", joinWords(names, "or"), quote(r.Algorithm))
	}
	const msg = "does not apply to rules with a store"
	v.zero("buckets", r.Buckets != 0, msg)
	v.zero("warmup", r.Warmup != 0, msg)
	if m := r.Mode; m != "" && m != store.Exact && m != store.Approximate {
		v.add("mode", "must be exact or approximate, got %s", quote(r.Mode))
	}
	if f := r.OnFailure; f != "" && f != FailLocal && f != FailOpen && f != FailClosed {
		v.add("onFailure", "must be local, open or closed, got %s", quote(f))
	}
	if r.LocalLimit < 0 {
		v.add("localLimit", "must be >= 0, got %d", r.LocalLimit)
	} else if r.LocalLimit > 0 && cmp.Or(r.OnFailure, FailLocal) == FailLocal {
		local := *r // the local limiter: the rule's algorithm at localLimit
		local.Limit, local.Algorithm = r.LocalLimit, cmp.Or(r.Algorithm, def)
		for _, fe := range local.flowConfig().Validate() {
			if fe.Field == "limit" {
				v.add("localLimit", "%s", fe.Msg)
			}
		}
	}
	if r.Window > flow.MaxStoreWindow {
		v.add("window", "must be <= %s with a store, got %s", flow.MaxStoreWindow, r.Window)
	}
	if r.MaxWait > flow.MaxStoreWindow {
		v.add("maxWait", "must be <= %s with a store, got %s", flow.MaxStoreWindow, r.MaxWait)
	}
	if alg := cmp.Or(r.Algorithm, def); alg == AlgorithmTokenBucket || alg == AlgorithmLeakyBucket {
		w := cmp.Or(r.Window, time.Second)
		cost := func(field, what string, limit int64) { // a bucket limit the store can keep (see flow.BucketLimitOK)
			if largest, ok := flow.BucketLimitOK(limit, w); !ok {
				v.add(field, "%s%s", what, flow.BucketLimitProblem(largest, limit, w))
			}
		}
		cost("limit", "", r.Limit)
		for _, k := range slices.Sorted(maps.Keys(r.Overrides)) {
			cost("overrides", fmt.Sprintf("value %s: ", quote(k)), r.Overrides[k])
		}
	}
}

// ruleFlowConfig returns the flow.Config of flow rule r, without a
// coldFactor equal to its default when there is no warmup: such a value
// changes nothing, and the RULES.md example spells it out.
func ruleFlowConfig(r *Rule) flow.Config {
	c := r.flowConfig()
	if c.Warmup == 0 && c.ColdFactor == flow.DefaultColdFactor {
		c.ColdFactor = 0
	}
	return c
}

// zero reports field with msg when set, the field having to be left zero.
func (v *validator) zero(field string, set bool, msg string) {
	if set {
		v.add(field, "%s", msg)
	}
}

// checkPriority checks the priority param of a rule that sheds by priority.
func (v *validator) checkPriority(r *Rule) {
	if msg := rulefields.ParamProblem(r.Priority); r.Priority != "" && msg != "" {
		v.add("priority", "%s", msg)
	}
}

// quote is rulefields.Quote.
func quote[T ~string](t T) string { return rulefields.Quote(t) }

// Quote returns s quoted for an error message: as a Go string, shortened to
// its first 64 bytes and "..." when longer.
func Quote(s string) string { return rulefields.Quote(s) }

// isName reports whether s has only ASCII letters, digits and nameChars.
func isName(s string) bool {
	return !strings.ContainsFunc(s, func(c rune) bool { return c >= utf8.RuneSelf || !isNameChar(byte(c)) })
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(nameChars, c) >= 0
}

// defaultName returns the name NormalizeRules gives a rule r that has none,
// before a suffix (see there), with its param when withParam: the
// resource's spaces written as colons, every other character outside the
// name charset (see nameChars) as '_'.
func defaultName(r Rule, withParam bool) string {
	name := string(r.Kind) + ":" + r.Resource
	if withParam {
		name += ":" + r.Param
	}
	if isName(name) {
		return name
	}
	var b strings.Builder
	for _, c := range name {
		switch {
		case c == ' ':
			b.WriteByte(':')
		case c < utf8.RuneSelf && isNameChar(byte(c)):
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// NormalizeRules checks every rule of rules and returns a *RulesError
// listing their problems (see RulesError), ordered by rule index and then by field in the
// order of the rules file documentation; when they are all valid, it
// returns a copy with every resource in canonical form
// (see Rule.Resource) and every default applied: window 1s, algorithm
// leap-array (flow) or token-bucket (hotspot), 10 leap-array buckets,
// coldFactor 3 with warmup, MaxKeys 100000, and a name for every unnamed
// rule. That name is its kind, resource and (hotspot) param joined by
// colons ("hotspot:GET:/items/{id}:header:X-User-ID"), shortened to 200
// bytes when longer, with a suffix #2, #3, ... when an earlier unnamed rule
// or any named one already has it. The copy shares no map with rules.
func NormalizeRules(rules []Rule) ([]Rule, error) {
	return kindSet(builtinKinds()).normalizeRules(rules)
}

// normalizeRules is NormalizeRules for the kinds of ks.
func (ks kindSet) normalizeRules(rules []Rule) ([]Rule, error) {
	if err := ks.checkRules(rules); err != nil {
		return nil, err
	}
	out := make([]Rule, len(rules))
	taken := map[string]bool{} // names given or explicit
	next := map[string]int{}   // base name -> the last suffix number tried
	for i, r := range rules {
		out[i] = ks.withDefaults(r)
		if r.Name != "" {
			taken[r.Name] = true
		}
	}
	for i := range out {
		if out[i].Name != "" {
			continue
		}
		base := defaultName(out[i], ks.find(out[i].Kind).field("param") != nil)
		for n := max(next[base], 1); out[i].Name == ""; n++ {
			name := rulefields.Truncate(base, maxNameLen)
			if n > 1 {
				suffix := "#" + strconv.Itoa(n)
				name = rulefields.Truncate(base, maxNameLen-len(suffix)) + suffix
			}
			if !taken[name] {
				taken[name], next[base], out[i].Name = true, n, name
			}
		}
	}
	return out, nil
}

// withDefaults returns a valid rule r with its resource in canonical form,
// its defaults applied and its Overrides copied.
func (ks kindSet) withDefaults(r Rule) Rule {
	r.Resource, _ = resname.Canonical(r.Resource) // valid: cannot fail
	r.Overrides = maps.Clone(r.Overrides)
	if k := ks.find(r.Kind); k.defaults != nil {
		r = k.defaults(r)
	}
	if r.Store != "" {
		r.Mode = cmp.Or(r.Mode, store.Exact)
		r.OnFailure = cmp.Or(r.OnFailure, FailLocal)
		r.LocalLimit = cmp.Or(r.LocalLimit, r.Limit)
	}
	return r
}

// logNormalized logs at Info, in one record, the rules of rules whose
// resource norm (their normalized copy) writes in canonical form, so that
// the rules file can be corrected; it logs nothing when there are none.
func logNormalized(log *slog.Logger, rules, norm []Rule) {
	var changed []string
	n := 0
	for i := range rules {
		if rules[i].Resource == norm[i].Resource {
			continue
		}
		if n++; len(changed) < maxLoggedRules {
			changed = append(changed, fmt.Sprintf("rules[%d] (%s): %s is %s", i, norm[i].Name, quote(rules[i].Resource), quote(norm[i].Resource)))
		}
	}
	if n == 0 {
		return
	}
	attrs := []slog.Attr{slog.Any("rules", changed)}
	if n > len(changed) {
		attrs = append(attrs, slog.Int("more", n-len(changed)))
	}
	log.LogAttrs(context.Background(), slog.LevelInfo, "sluice: rule resources normalized to their canonical form; write them so in the rules", attrs...)
}
