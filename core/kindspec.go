package core

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/sluicekit/sluice/core/internal/rulefields"
)

// kindSpec describes one rule kind: everything the validator, the
// defaults, the rules file's parser and JSON Schema, the adapters' block
// responses, the statistics and the Guard know of it. Each kind's is
// declared in its file (kind_*.go) and listed once, by builtinKinds.
type kindSpec struct {
	kind Kind
	doc  string // what the kind limits, in a few words
	// fields are the rule fields the kind takes, besides the fields of
	// every rule (commonFields), in report order. A rule of the kind that
	// sets any other field is refused.
	fields []fieldSpec
	// unsetHints say, for a field the kind does not take, what to write
	// instead; the problem lists the kinds that take it otherwise.
	unsetHints map[string]string
	// check adds the problems of the fields of a rule of the kind that
	// their own bounds do not say (nil: none).
	check    func(v *validator, r *Rule)
	defaults func(r Rule) Rule                 // a valid rule with the kind's defaults (nil: none)
	schema   []any                             // its JSON Schema conditions beyond its fields' (see rulesSchema)
	block    BlockClass                        // how the kind's blocks are answered
	slots    bool                              // KindInfo.Slots
	summary  func(b *strings.Builder, r *Rule) // the kind's own fields of r, for Rule.Summary
	// limiter makes the limiter of a valid rule of the kind, carrying over
	// the state of prev, the same rule's in the rule set being replaced
	// (nil when none; a limiter of another type is ignored).
	limiter func(g *Guard, r Rule, prev limiter) (limiter, traits, error)
}

// fieldSpec describes a rule field as one kind takes it.
type fieldSpec struct {
	key  string // the field's name in a rules file (Rule's json name)
	doc  string // for this kind, one line
	unit string // of a number, for the schema ("requests", "ms")
	def  string // the default, as written in a rules file; "" none
	// given is true for a field a rules file must give even at its zero
	// value (limit: 0 blocks every request); required for one that must
	// not be zero (the validator says so).
	given, required bool
	min, xmin, max  any      // bounds of a number, xmin exclusive (nil: none)
	enum            []string // the values a text field takes (nil: any)
}

var commonFields = [...]string{"name", "resource", "kind", "shadow"} // the fields of every rule, whatever its kind

// builtinKinds returns the descriptors of the built-in kinds, in the order
// documented for Kind. It is the one list of them. A kind's blocks count
// under its name, at its index in the list (BlockClass.reason).
func builtinKinds() []kindSpec {
	ks := [...]kindSpec{flowSpec(), concurrencySpec(), hotspotSpec(), breakerSpec(), adaptiveSpec(), systemSpec()}
	_ = [1]struct{}{}[reasonFallback-len(ks)] // a compile error unless maxReasons fits the reasons exactly
	for i := range ks {
		ks[i].block.reason = i
	}
	return ks[:]
}

// blockReasons are the reasons by index. It is never modified.
var blockReasons = func() [maxReasons]string {
	names := [maxReasons]string{reasonFallback: ReasonFallback, reasonCancelled: ReasonCancelled}
	for i, k := range builtinKinds() {
		names[i] = string(k.kind)
	}
	return names
}()

// reasonOf returns the index in blockReasons of the reason of b:
// ReasonFallback, or its block class's (its kind's name).
func reasonOf(b *BlockedError) int {
	switch {
	case b.Fallback:
		return reasonFallback
	case b.class != nil:
		return b.class.reason
	}
	return b.Class().reason
}

// Reason returns why b blocked its request: the name of the kind of the
// rule that blocked it, or ReasonFallback (see Totals.BlockedBy).
func (e *BlockedError) Reason() string { return blockReasons[reasonOf(e)] }

// kindSet is the kinds a Guard, the validator or a parser knows.
type kindSet []kindSpec

// find returns the descriptor of kind k, or nil.
func (ks kindSet) find(k Kind) *kindSpec {
	if i := slices.IndexFunc(ks, func(s kindSpec) bool { return s.kind == k }); i >= 0 {
		return &ks[i]
	}
	return nil
}

// names returns the kinds' names written as a choice: "a, b or c".
func (ks kindSet) names(conj string) string {
	return joinWords(mapped(ks, func(k kindSpec) string { return string(k.kind) }), conj)
}

// taking returns the kinds that take field.
func (ks kindSet) taking(field string) kindSet {
	var out kindSet
	for _, k := range ks {
		if k.field(field) != nil {
			out = append(out, k)
		}
	}
	return out
}

// field returns the kind's spec of key, nil when the kind does not take it.
func (k *kindSpec) field(key string) *fieldSpec {
	if i := slices.IndexFunc(k.fields, func(f fieldSpec) bool { return f.key == key }); i >= 0 {
		return &k.fields[i]
	}
	return nil
}

// joinWords returns words as "a", "a and b" or "a, b and c" (conj for "and").
func joinWords(words []string, conj string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}

// mapped returns f of each element of s, in order.
func mapped[E, T any](s []E, f func(E) T) []T {
	out := make([]T, len(s))
	for i, e := range s {
		out[i] = f(e)
	}
	return out
}

// ruleFields returns Rule's fields by their rules-file names, in struct order.
func ruleFields() []string { return rulefields.Names(reflect.TypeFor[Rule]()) }

// isSetValue reports whether a Rule field is set: not zero, nor an empty map.
func isSetValue(v reflect.Value) bool {
	if v.Kind() == reflect.Map {
		return v.Len() != 0
	}
	return !v.IsZero()
}

// checkUnset reports the fields r sets that its kind k does not take.
func (v *validator) checkUnset(k *kindSpec, r *Rule) {
	rv := reflect.ValueOf(r).Elem()
	for i, key := range v.fields {
		if !isSetValue(rv.Field(i)) || slices.Contains(commonFields[:], key) || k.field(key) != nil {
			continue
		}
		hint := k.unsetHints[key]
		if hint == "" {
			hint = "only to kind"
			taking := v.kinds.taking(key)
			if len(taking) > 1 {
				hint += "s"
			}
			hint += " " + taking.names("and")
		}
		v.add(key, "does not apply to kind %s (%s)", k.kind, hint)
	}
}

// Class returns how e is answered: the block class of the kind of the rule
// that blocked it, or for a BlockedError made outside a Guard, of a
// built-in kind, a quota's (429) for another kind.
func (e *BlockedError) Class() BlockClass {
	if e.class != nil {
		return *e.class
	}
	if k := kindSet(builtinKinds()).find(e.Kind); k != nil {
		return k.block
	}
	return quotaBlock()
}

// Error describes the block: the rule's limit, or the state its class
// says (a circuit open), and when to retry.
func (e *BlockedError) Error() string {
	says := e.Class().says
	s := fmt.Sprintf("sluice: %s blocked by %s rule %q: ", e.Resource, e.Kind, e.Rule)
	switch {
	case says != "" && e.Never:
		s += fmt.Sprintf("it asks more than the threshold %d", e.Limit)
	case says != "":
		s += says
	case e.Window == 0:
		s += fmt.Sprintf("%d in flight", e.Limit)
	default:
		s += fmt.Sprintf("limit %d per %s", e.Limit, e.Window)
	}
	switch {
	case e.Never:
		s += "; the request will never pass"
	case says != "" || e.Window != 0:
		s += ", retry after " + e.RetryAfter.String()
	}
	var others []string
	for _, p := range e.Policies {
		if p.Blocked && p.Rule != e.Rule {
			others = append(others, fmt.Sprintf("%q", p.Rule))
		}
	}
	if len(others) > 0 {
		s += " (also rejected by " + strings.Join(others, ", ") + ")"
	}
	return s
}

// KindInfo describes a kind of rule for tools that list kinds (a
// dashboard, a rules checker, exporters).
type KindInfo struct {
	Kind Kind
	Doc  string // what the kind limits, in a few words
	// Fields are the fields a rule of the kind takes, by their names in a
	// rules file, besides name, resource, kind and shadow.
	Fields []string
	Given  []string   // the fields a rules file must give, even at 0
	Block  BlockClass // how its blocks are answered
	// Slots is true when its rules' limit is a fixed count of slots, one
	// for each request in flight (RuleStats.InFlight), which exporters
	// report by rule.
	Slots bool
}

// Kinds returns the built-in kinds of rules, in a fixed order: flow,
// concurrency, hotspot, breaker, adaptive and system. The slice is new.
func Kinds() []KindInfo {
	return mapped(builtinKinds(), func(k kindSpec) KindInfo {
		info := KindInfo{Kind: k.kind, Doc: k.doc, Block: k.block, Slots: k.slots}
		for _, f := range k.fields {
			info.Fields = append(info.Fields, f.key)
			if f.given {
				info.Given = append(info.Given, f.key)
			}
		}
		return info
	})
}

// checkKind checks the kind of r and, when known, the fields of its kind.
func (v *validator) checkKind(r *Rule) {
	k := v.kinds.find(r.Kind)
	switch {
	case k != nil:
		if k.check != nil {
			k.check(v, r)
		}
		v.checkUnset(k, r)
	case r.Kind == "":
		v.add("kind", "is required (%s)", v.kinds.names("or"))
	default:
		v.add("kind", "must be %s, got %s", v.kinds.names("or"), quote(string(r.Kind)))
	}
}

// KindDef defines a kind of rule of a Guard's own (WithKind), which a rule
// of a built-in kind enforces. The validator, the rules file's parser
// (through Guard.SetRules and rulesfile.NewGuard) and the adapters read it
// as they read the built-in kinds' descriptors.
type KindDef struct {
	// Kind is its name in rules and rules files: a letter, then letters,
	// digits, '_', '.' and '-'; not a built-in kind's.
	Kind Kind
	Doc  string // what it limits, in a few words
	// Fields are as KindInfo's: a rule that sets another is refused. A
	// rules file may leave any of them out: Check refuses a zero value that
	// cannot be meant (a limit of 0 left by a file cut short).
	Fields []string
	// Check returns the problems of a rule of the kind, each a field's
	// name (Problem.Field) and what is wrong with its value (Problem.Msg:
	// "must be >= 1, got 0"); their other fields are filled in. Nil:
	// the fields are only checked as the enforcing rule.
	Check func(r Rule) []Problem
	// Enforce returns the rule of a built-in kind that enforces a rule r
	// that Check accepts; its name, resource and shadow are set to r's.
	// Its problems, if any, are r's. The engine reads r's limit and burst
	// as the enforcing rule's: keep them.
	Enforce func(r Rule) Rule
	// Block is how its blocks are answered: Status 400 to 599 and GRPCCode
	// 1 to 16. Totals.BlockedBy counts them under the kind of the rule
	// enforcing it.
	Block BlockClass
}

// WithKind adds the kind d to those the Guard's rules may have (see
// KindDef). New refuses a kind whose name is taken or malformed, that
// takes a field Rule lacks, or that has no Enforce.
func WithKind(d KindDef) Option {
	return optionFunc(func(cfg *config) error {
		if err := d.check(append(builtinKinds(), cfg.kinds...)); err != nil {
			return fmt.Errorf("WithKind: kind %s: %w", quote(string(d.Kind)), err)
		}
		cfg.kinds = append(cfg.kinds, d.spec())
		return nil
	})
}

// check returns what is wrong with d, among the kinds known.
func (d *KindDef) check(known kindSet) error {
	switch {
	case !rulefields.IsIdentifier(string(d.Kind)):
		return errors.New("the name must be a letter, then letters, digits, '_', '.' and '-'")
	case known.find(d.Kind) != nil:
		return errors.New("the name is taken")
	case d.Enforce == nil:
		return errors.New("its Enforce is nil")
	case d.Block.Status < 400 || d.Block.Status > 599:
		return fmt.Errorf("its Block.Status must be in [400, 599], got %d", d.Block.Status)
	case d.Block.GRPCCode < 1 || d.Block.GRPCCode > 16:
		return fmt.Errorf("its Block.GRPCCode must be in [1, 16], got %d", d.Block.GRPCCode)
	}
	for _, f := range d.Fields {
		if !slices.Contains(ruleFields(), f) || slices.Contains(commonFields[:], f) {
			return fmt.Errorf("its Fields: %s is not a rule field a kind may take", quote(f))
		}
	}
	return nil
}

// spec returns the descriptor of d.
func (d KindDef) spec() kindSpec {
	fields := mapped(d.Fields, func(f string) fieldSpec { return fieldSpec{key: f} })
	builtin := kindSet(builtinKinds())
	return kindSpec{
		kind: d.Kind, doc: d.Doc, fields: fields, block: d.Block,
		check: func(v *validator, r *Rule) {
			if d.Check != nil {
				ps := d.Check(*r)
				for _, p := range ps {
					v.add(p.Field, "%s", p.Msg)
				}
				if len(ps) > 0 {
					return
				}
			}
			base := d.enforced(*r)
			if builtin.find(base.Kind) == nil {
				v.add("kind", "is enforced by a rule of kind %s, not a built-in kind", quote(string(base.Kind)))
				return
			}
			bv := validator{kinds: builtin, fields: v.fields, firstUse: map[string]int{}, index: v.index, name: v.name}
			bv.checkKind(&base)
			for _, p := range bv.problems {
				p.Msg = fmt.Sprintf("%s (enforced as a %s rule)", p.Msg, base.Kind)
				v.problems = append(v.problems, p)
			}
		},
		limiter: func(g *Guard, r Rule, prev limiter) (limiter, traits, error) {
			base := builtin.withDefaults(d.enforced(r))
			bk := builtin.find(base.Kind)
			l, t, err := bk.limiter(g, base, prev)
			c := d.Block
			c.reason, c.says = bk.block.reason, bk.block.says
			t.class = &c
			return l, t, err
		},
	}
}

// enforced returns the rule that enforces r.
func (d *KindDef) enforced(r Rule) Rule {
	base := d.Enforce(r)
	base.Name, base.Resource, base.Shadow = r.Name, r.Resource, r.Shadow
	return base
}
