package rulesfile

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"iter"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/internal/rulefields"
)

// fieldKey names a field of a rule; the field wholeRule stands for all.
type fieldKey struct {
	index int
	field string
}

const wholeRule = "*"

// fileParser turns the node tree of a rules file into rules, recording a
// problem for everything it cannot take.
type fileParser struct {
	kinds    []core.KindInfo
	names    []string       // core.Rule's fields, by their names in a rules file
	fields   map[string]int // their indexes by name
	problems []core.Problem
	unread   map[fieldKey]bool // fields that could not be read
	lines    []ruleLines       // the lines of the rules read, in order
	fieldAt  []fieldLine       // the lines of their fields
	dropped  bool              // problems were left out (maxProblems)
}

const maxProblems = rulefields.MaxProblems // bounds the problems a rules file reports

// ruleLines are the line of a rule and the range of fieldAt that holds
// the lines of the keys of the fields it sets (the first of each).
type ruleLines struct {
	line, start, end int
}

// fieldLine is the line of a field's key; field is its index in core.Rule.
type fieldLine struct {
	field, line int32
}

// newFileParser returns a parser of the rules of the kinds given.
func newFileParser(kinds []core.KindInfo) *fileParser {
	names := rulefields.Names(reflect.TypeFor[core.Rule]())
	fields := make(map[string]int, len(names))
	for i, name := range names {
		fields[name] = i
	}
	return &fileParser{kinds: kinds, names: names, fields: fields, unread: map[fieldKey]bool{}}
}

// add records a problem at node n.
func (p *fileParser) add(index int, name, field string, n *yaml.Node, format string, args ...any) {
	if p.full() {
		p.dropped = true
		return
	}
	p.problems = append(p.problems, core.Problem{Index: index, Name: name, Field: field, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
}

// full reports whether maxProblems problems are recorded: reading may stop.
func (p *fileParser) full() bool {
	return len(p.problems) >= maxProblems
}

// merge returns the problems found parsing and the validation problems of
// fields that could be read (the zero value left in a field that could not
// be read would only repeat its problem), in report order.
func (p *fileParser) merge(validated []core.Problem) []core.Problem {
	all, more := p.problems, p.dropped
	for _, v := range validated {
		// Index -1: core cut its list (rulefields.MoreProblems). Both lists
		// are in rule order: the first maxProblems are in.
		if v.Index < 0 || len(all) >= 2*maxProblems {
			more = true
			continue
		}
		if !p.unread[fieldKey{v.Index, v.Field}] && !p.unread[fieldKey{v.Index, wholeRule}] {
			v.Line = p.line(v.Index, v.Field)
			all = append(all, v)
		}
	}
	slices.SortStableFunc(all, func(a, b core.Problem) int {
		return cmp.Or(a.Index-b.Index, rulefields.Rank(p.names, a.Field)-rulefields.Rank(p.names, b.Field))
	})
	return capped(all, more)
}

// capped returns problems, cut to maxProblems and ended by the problem
// that says there are more when they are longer or more is true.
func capped(problems []core.Problem, more bool) []core.Problem {
	if !more && len(problems) <= maxProblems {
		return problems
	}
	n := min(len(problems), maxProblems)
	return append(problems[:n:n], core.Problem{Index: -1, Msg: rulefields.MoreProblems()})
}

// withLines returns err with the line of each problem of a *core.RulesError
// (which core.Guard.SetRules and core.NormalizeRules return), for a rule set
// whose rules from first on are this file's rules: the problems of those
// rules are renumbered from 0 and given the line of their field. Other
// errors are returned as they are.
func (p *fileParser) withLines(err error, first int) error {
	rerr, ok := err.(*core.RulesError)
	if !ok {
		return err
	}
	out := &core.RulesError{Problems: capped(slices.Clone(rerr.Problems), false)}
	for i, q := range out.Problems {
		if q.Index >= first {
			q.Index -= first
			q.Line = p.line(q.Index, q.Field)
			out.Problems[i] = q
		}
	}
	return out
}

// line returns the line of field of rules[index] in the file: its key's,
// or the rule's when the rule does not set it.
func (p *fileParser) line(index int, field string) int {
	if index < 0 || index >= len(p.lines) {
		return 0
	}
	r := p.lines[index]
	if i, ok := p.fields[field]; ok {
		for _, f := range p.fieldAt[r.start:r.end] {
			if int(f.field) == i {
				return int(f.line)
			}
		}
	}
	return r.line
}

// noRules is how problems of a file without rules say what to write.
const noRules = `a rules file with no rules says so with "rules: []"`

// document reads the top-level mapping of a rules file and its rules.
func (p *fileParser) document(root *yaml.Node) []core.Rule {
	if list := p.topLevel(root); list != nil {
		return p.rules(list)
	}
	return nil
}

// rules reads the rules of the list n.
func (p *fileParser) rules(n *yaml.Node) []core.Rule {
	rules := make([]core.Rule, len(n.Content))
	for i, item := range n.Content {
		p.rule(i, item, &rules[i])
	}
	return rules
}

// topLevel checks the top-level mapping of a rules file and returns its
// rules list, or nil when it has none to read.
func (p *fileParser) topLevel(root *yaml.Node) *yaml.Node {
	if root == nil || isNull(root) {
		p.problems = append(p.problems, core.Problem{Index: -1, Field: "rules",
			Msg: "is missing: the file is empty (it may have been cut short); " + noRules})
		return nil
	}
	if root.Kind != yaml.MappingNode {
		p.add(-1, "", "", root, "a rules file must be a mapping with the one key rules, got %s", describe(root))
		return nil
	}
	var list *yaml.Node
	seen := keyLines{}
	for key, val := range pairs(root) {
		name, ok := key.Value, key.Kind == yaml.ScalarNode
		switch {
		case !ok || name != "rules":
			p.add(-1, "", "", key, "unknown top-level key %s (a rules file has the one key rules)", describe(key))
		case seen.dup(p, -1, "", "", key, name): // reported
		default:
			list = val
		}
	}
	switch {
	case list == nil:
		p.add(-1, "", "rules", root, "is missing; %s", noRules)
		return nil
	case isNull(list):
		p.add(-1, "", "rules", list, "must be a list of rules, got null (the file may have been cut short); %s", noRules)
		return nil
	case !p.isList(list):
		return nil
	case len(list.Content) > maxRules:
		p.add(-1, "", "rules", list.Content[maxRules], "%s", tooManyRulesMsg())
		return nil
	}
	return list
}

// isList reports whether n is a list, else records a rules list problem.
func (p *fileParser) isList(n *yaml.Node) bool {
	if n.Kind != yaml.SequenceNode {
		p.add(-1, "", "rules", n, "must be a list of rules, got %s", describe(n))
	}
	return n.Kind == yaml.SequenceNode
}

// checkEnd records a problem when the YAML file data ends in the middle of
// a line, after a plain value or a comment: a file cut there parses, with
// the value cut short.
func (p *fileParser) checkEnd(data []byte) {
	text := bytes.TrimRight(data, " \t")
	if len(text) == 0 || bytes.ContainsAny(text[len(text)-1:], "\n\r]}\"'") {
		return
	}
	last := text[bytes.LastIndexAny(text, "\n\r")+1:]
	p.problems = append(p.problems, core.Problem{Index: -1, Line: 1 + bytes.Count(text, []byte{'\n'}),
		Msg: fmt.Sprintf("the file ends without a line break after %s: it may have been cut short in the middle of a value; end it with a line break", rulefields.Quote(string(last)))})
}

// rule reads rules[index], the one after the rules read, into r from its
// mapping n (r, not a copy, so that the reflection that sets its fields
// does not move a copy to the heap), and records its lines.
func (p *fileParser) rule(index int, n *yaml.Node, r *core.Rule) {
	k := len(p.lines)
	p.lines = append(p.lines, ruleLines{line: n.Line, start: len(p.fieldAt)})
	defer func() { p.lines[k].end = len(p.fieldAt) }()
	if n.Kind != yaml.MappingNode {
		p.add(index, "", "", n, "a rule must be a mapping of fields such as resource and kind, got %s", describe(n))
		p.unread[fieldKey{index, wholeRule}] = true
		return
	}
	rp := ruleParser{p: p, index: index, name: explicitName(n)}
	seen := keyLines{}
	nulls := map[string]*yaml.Node{} // the keys written with null
	for key, val := range pairs(n) {
		name, ok := key.Value, key.Kind == yaml.ScalarNode
		switch {
		case !ok:
			p.add(index, rp.name, "", key, "field names must be strings, got %s", describe(key))
		case seen.dup(p, index, rp.name, "", key, name): // reported
		default:
			if i, ok := p.fields[name]; ok {
				p.fieldAt = append(p.fieldAt, fieldLine{int32(i), int32(key.Line)})
			}
			if isNull(val) && val.Value != "" { // "key:" alone is reported by field
				nulls[name] = key
			}
			rp.field(r, name, key, val)
		}
	}
	if rp.huge != nil {
		rp.reportHuge(r)
	}
	if i := slices.IndexFunc(p.kinds, func(k core.KindInfo) bool { return k.Kind == r.Kind }); i >= 0 {
		for _, f := range p.kinds[i].Given {
			// A null is no value written out, as a template renders a missing one.
			if key := nulls[f]; key != nil {
				rp.add(f, key, "must be a number for kind %s, got null (%s: 0, written out, blocks every request)", r.Kind, f)
				p.unread[fieldKey{index, f}] = true
			} else if _, ok := seen[f]; !ok {
				rp.add(f, n, "is required for kind %s (%s: 0 blocks every request)", r.Kind, f)
				p.unread[fieldKey{index, f}] = true
			}
		}
	}
}

// explicitName returns the name field of the rule mapping n, if it is a
// string, for naming the rule in problems.
func explicitName(n *yaml.Node) string {
	for key, val := range pairs(n) {
		if key.Kind == yaml.ScalarNode && key.Value == "name" && val.Kind == yaml.ScalarNode && !isNull(val) {
			return val.Value
		}
	}
	return ""
}

// keyLines records the keys of a mapping seen so far and their lines.
type keyLines map[string]int

// dup reports whether key, named name, was seen before in its mapping,
// recording a problem of field of rules[index] when so.
func (s keyLines) dup(p *fileParser, index int, ruleName, field string, key *yaml.Node, name string) bool {
	first, seen := s[name]
	if seen {
		p.add(index, ruleName, field, key, "key %s is set twice (first on line %d)", rulefields.Quote(name), first)
		return true
	}
	s[name] = key.Line
	return false
}

// ruleParser reads the fields of one rule.
type ruleParser struct {
	p     *fileParser
	index int
	name  string      // the rule's name, for problems
	huge  []hugeValue // the integers written beyond their field's bits
}

// hugeValue is an integer, n, written beyond the bits of its field (or of
// an override's limit, key), which holds the nearest value, sat.
type hugeValue struct {
	field, key string
	n          *yaml.Node
	sat        int64
}

// add records a problem of field of the rule at node n.
func (rp *ruleParser) add(field string, n *yaml.Node, format string, args ...any) {
	rp.p.add(rp.index, rp.name, field, n, format, args...)
}

// field sets field key of r from val; a null value leaves the field zero.
func (rp *ruleParser) field(r *core.Rule, key string, keyNode, val *yaml.Node) {
	index, ok := rp.p.fields[key]
	if !ok {
		rp.add("", keyNode, "unknown field %s%s", rulefields.Quote(key), suggestField(key, rp.p.names))
		return
	}
	if isNull(val) {
		if val.Value == "" { // a key and nothing after it
			rp.add(key, keyNode, "has no value (the file may have been cut short); give one, or remove the key")
			rp.p.unread[fieldKey{rp.index, key}] = true
		}
		return
	}
	f := reflect.ValueOf(r).Elem().Field(index)
	if f.CanInt() && f.Type() != reflect.TypeFor[time.Duration]() && rp.beyond(key, "", val, f) {
		return
	}
	if f.Kind() == reflect.Map {
		f.Set(reflect.ValueOf(rp.overrides(val)))
	} else if msg := setValue(f, val); msg != "" {
		rp.add(key, val, "%s", msg)
		rp.p.unread[fieldKey{rp.index, key}] = true
	}
}

// setValue sets f, a field of a rule, from n and returns "" or a problem:
// a text takes a scalar; a duration a Go duration or the integer 0; an
// integer an integer in range; a number a finite number, integer or not;
// a boolean true or false.
func setValue(f reflect.Value, n *yaml.Node) string {
	tag := ""
	if n.Kind == yaml.ScalarNode {
		tag = n.ShortTag()
	}
	var want string
	var ok bool
	switch {
	case f.Type() == reflect.TypeFor[time.Duration]():
		if d, err := time.ParseDuration(n.Value); tag == "!!str" && err == nil {
			f.SetInt(int64(d))
			return ""
		}
		if v := int64(1); tag == "!!int" && n.Decode(&v) == nil && v == 0 {
			return ""
		}
		return "must be a Go duration such as 1s or 250ms, got " + describe(n)
	case f.Kind() == reflect.String:
		if tag == "" {
			return "must be a string, got " + describe(n)
		}
		f.SetString(n.Value)
		return ""
	case f.Kind() == reflect.Bool:
		want, ok = "must be true or false", tag == "!!bool"
	case f.CanFloat():
		want, ok = "must be a number", tag == "!!int" || tag == "!!float"
	default:
		want, ok = "must be an integer", tag == "!!int"
	}
	if !ok {
		return want + ", got " + describe(n)
	}
	if d, o := leadingZero(n.Value); tag == "!!int" && d != "" {
		return want + " without a leading 0, got " + n.Value + ": YAML 1.1 reads it as octal, YAML 1.2 as decimal; write " + d + ", or " + o + " for octal"
	}
	v := reflect.New(f.Type())
	switch err := n.Decode(v.Interface()); {
	case err != nil, f.CanFloat() && (math.IsInf(v.Elem().Float(), 0) || math.IsNaN(v.Elem().Float())):
		return want + ", got " + describe(n)
	}
	f.Set(v.Elem())
	return ""
}

// leadingZero returns, for an integer written with a leading 0 ("010",
// "-0_10"), its decimal and octal forms without it ("10", "0o10"); else "".
func leadingZero(s string) (dec, oct string) {
	if digits := strings.TrimLeft(s, "+-"); len(digits) > 1 && digits[0] == '0' && strings.Trim(digits, "0123456789_") == "" {
		sign, d := strings.TrimPrefix(s[:len(s)-len(digits)], "+"), cmp.Or(strings.TrimLeft(digits, "0_"), "0")
		return sign + d, sign + "0o" + d
	}
	return "", ""
}

// overrides reads the overrides mapping n: param values (any scalar, taken
// as its text) to limits. Values that cannot be read are left out.
func (rp *ruleParser) overrides(n *yaml.Node) map[string]int64 {
	if n.Kind != yaml.MappingNode {
		rp.add("overrides", n, "must be a mapping of param values to limits, got %s", describe(n))
		rp.p.unread[fieldKey{rp.index, "overrides"}] = true
		return nil
	}
	out := make(map[string]int64, len(n.Content)/2)
	seen, limit := keyLines{}, reflect.New(reflect.TypeFor[int64]()).Elem()
	for key, val := range pairs(n) {
		value, ok := key.Value, key.Kind == yaml.ScalarNode
		switch {
		case !ok:
			rp.add("overrides", key, "keys must be param values, got %s", describe(key))
		case seen.dup(rp.p, rp.index, rp.name, "overrides", key, value): // reported
		case rp.beyond("overrides", value, val, limit):
			out[value] = limit.Int()
		default:
			if msg := setValue(limit, val); msg != "" {
				rp.add("overrides", val, "value for %s %s", rulefields.Quote(value), msg)
				continue
			}
			out[value] = limit.Int()
		}
	}
	return out
}

// beyond reports whether n is an integer as YAML writes them (0x, 0o, 0b,
// signs, underscores) beyond the bits of f, the field (or an override's
// limit, key), and then sets f to the nearest value it holds (reportHuge).
func (rp *ruleParser) beyond(field, key string, n *yaml.Node, f reflect.Value) bool {
	sat, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, f.Type().Bits())
	if n.Kind != yaml.ScalarNode || n.Style != 0 || !errors.Is(err, strconv.ErrRange) { // quoted or tagged: a string
		return false
	}
	f.SetInt(sat)
	rp.huge = append(rp.huge, hugeValue{field, key, n, sat})
	return true
}

// reportHuge records the problem of each integer of rule r written beyond
// its field's bits: the problem core.NormalizeRules finds in r with the
// nearest value the field holds (its own bound), with the value as
// written; the bound of the field's bits when that names no such value.
// Each such field is then left unset.
func (rp *ruleParser) reportHuge(r *core.Rule) {
	problems := validated([]core.Rule{*r})
	for _, h := range rp.huge {
		sat, written := strconv.FormatInt(h.sat, 10), strings.ReplaceAll(rulefields.Quote(h.n.Value), `"`, "")
		msg := fmt.Sprintf("must be %s %s, got %s", map[bool]string{true: ">=", false: "<="}[h.sat < 0], sat, written)
		for _, v := range problems {
			i := strings.LastIndex(v.Msg, " "+sat)
			if v.Field == h.field && i >= 0 && (h.key == "" || strings.Contains(v.Msg, rulefields.Quote(h.key))) {
				msg = v.Msg[:i+1] + written + v.Msg[i+1+len(sat):]
				break
			}
		}
		if rp.add(h.field, h.n, "%s", msg); h.key != "" {
			delete(r.Overrides, h.key)
		} else {
			rp.p.unread[fieldKey{rp.index, h.field}] = true
			reflect.ValueOf(r).Elem().Field(rp.p.fields[h.field]).SetZero()
		}
	}
}

// pairs yields the keys and values of a mapping node.
func pairs(m *yaml.Node) iter.Seq2[*yaml.Node, *yaml.Node] {
	return func(yield func(*yaml.Node, *yaml.Node) bool) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if !yield(m.Content[i], m.Content[i+1]) {
				return
			}
		}
	}
}

// isNull reports whether n is a null scalar (null, ~, or nothing).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe returns how a problem shows the value n: strings, and scalars
// that would need escapes, quoted; numbers and booleans as written; the
// kind of anything else.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "the alias *" + rulefields.Truncate(n.Value, 64) + " (rules files do not support YAML aliases)"
	case yaml.ScalarNode:
		q := rulefields.Quote(n.Value)
		switch tag := n.ShortTag(); {
		case tag == "!!null":
			return "null"
		case tag == "!!str" || strings.Contains(q, `\`):
			return q
		}
		return strings.ReplaceAll(q, `"`, "")
	}
	return "nothing"
}

// suggestField returns ` (did you mean "limit"?)` for an unknown field
// name that is close to one of fields, the closest (the first of those as
// close), else "".
func suggestField(name string, fields []string) string {
	const maxDistance = 2
	if len(name) > 2*len("coldFactor") {
		return ""
	}
	best, bestDistance := "", maxDistance+1
	for _, f := range fields {
		if d := editDistance(strings.ToLower(name), strings.ToLower(f)); d < bestDistance {
			best, bestDistance = f, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance returns the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
