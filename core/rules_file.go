package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Format is the syntax of a rules file.
type Format int

// The rules file formats. Both have the same fields.
const (
	// FormatYAML is YAML, the format of every rules file not named *.json.
	FormatYAML Format = iota
	// FormatJSON is JSON.
	FormatJSON
)

// Bounds of a rules file. A file within them takes memory proportional to
// its size to parse.
const (
	maxRulesFileSize = 16 << 20
	maxRules         = 100_000
	// maxJSONDepth bounds the nesting of a JSON file; a rules file needs 4.
	maxJSONDepth = 64
)

// LoadRulesFile reads and parses the rules file at path (see ParseRules): a
// file whose name ends in ".json", in any case, is JSON; any other is YAML.
// Its errors start with the path.
func LoadRulesFile(path string) ([]Rule, error) {
	format := FormatYAML
	if strings.EqualFold(filepath.Ext(path), ".json") {
		format = FormatJSON
	}
	rules, err := readRulesFile(path, format)
	if err != nil {
		return nil, fmt.Errorf("rules file %s: %w", path, err)
	}
	return rules, nil
}

// readRulesFile reads at most one byte more than the size limit of the file
// at path and parses it.
func readRulesFile(path string, format Format) ([]Rule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRulesFileSize+1))
	if err != nil {
		return nil, err
	}
	return ParseRules(data, format)
}

// ParseRules parses a rules file: a mapping whose one key, rules, holds a
// list of rules, each a mapping of the fields of Rule named as in its json
// tags. Durations are Go durations ("1s", "250ms") or 0; overrides maps
// param values to limits. An empty file has no rules. ParseRules returns
// the rules normalized (see NormalizeRules), or a *RulesError listing every
// problem of the file: syntax, unknown fields, values of the wrong type,
// duplicate keys, and every problem ValidateRules finds; problems found
// reading the file give its line.
//
// The input is limited to 16 MiB and 100,000 rules; YAML aliases are not
// accepted.
func ParseRules(data []byte, format Format) ([]Rule, error) {
	root, err := decodeRulesFile(data, format)
	if err != nil {
		return nil, &RulesError{Problems: []Problem{{Index: -1, Msg: err.Error()}}}
	}
	p := fileParser{unread: map[fieldKey]bool{}}
	rules := p.document(root)
	if problems := p.merge(validateRules(rules)); len(problems) > 0 {
		return nil, &RulesError{Problems: problems}
	}
	return normalize(rules), nil
}

// decodeRulesFile parses data into a node tree, nil for an empty file.
func decodeRulesFile(data []byte, format Format) (*yaml.Node, error) {
	if len(data) > maxRulesFileSize {
		return nil, fmt.Errorf("a rules file must be at most 16 MiB (%d bytes)", maxRulesFileSize)
	}
	switch format {
	case FormatYAML:
		return decodeYAML(data)
	case FormatJSON:
		return decodeJSON(data)
	}
	return nil, fmt.Errorf("unknown rules file format %d", format)
}

// decodeYAML parses a YAML document into its node tree. A document that
// is empty or holds only comments gives nil; a second document is an
// error.
func decodeYAML(data []byte) (root *yaml.Node, err error) {
	defer func() {
		// The parser reports bad input as errors; this turns any bug
		// of it that hostile input might reach into one too.
		if r := recover(); r != nil {
			root, err = nil, fmt.Errorf("yaml: cannot parse: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, next yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, err
	}
	if err := dec.Decode(&next); err != io.EOF {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("line %d: a rules file must be one YAML document, found a second", next.Line)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// decodeJSON parses a JSON document into the node tree the same YAML
// would give, keeping the order of keys, their duplicates and their line
// numbers. An empty document gives nil; data after it is an error.
func decodeJSON(data []byte) (*yaml.Node, error) {
	j := jsonReader{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	j.dec.UseNumber()
	root, err := j.value(0)
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, j.syntaxError(err)
	}
	if _, err := j.dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("line %d: unexpected data after the top-level JSON value", j.line())
	}
	return root, nil
}

// jsonReader reads a JSON document token by token into yaml.Nodes.
type jsonReader struct {
	dec   *json.Decoder
	data  []byte
	off   int // offset up to which newlines are counted in lines
	lines int
}

// line returns the line of the decoder's input offset, the end of the last
// token read.
func (j *jsonReader) line() int {
	if off := int(j.dec.InputOffset()); off > j.off && off <= len(j.data) {
		j.lines += bytes.Count(j.data[j.off:off], []byte{'\n'})
		j.off = off
	}
	return j.lines + 1
}

// syntaxError returns err, a syntax error of the document, with its line.
func (j *jsonReader) syntaxError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset <= int64(len(j.data)) {
		return fmt.Errorf("line %d: %w", 1+bytes.Count(j.data[:se.Offset], []byte{'\n'}), err)
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("unexpected end of JSON input")
	}
	return err
}

// value reads the next value, nested depth levels deep. It returns io.EOF
// only when the input holds no value at all.
func (j *jsonReader) value(depth int) (*yaml.Node, error) {
	tok, err := j.dec.Token()
	if err != nil {
		return nil, err
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Line: j.line()}
	switch t := tok.(type) {
	case json.Delim: // '[' or '{': closing ones end the loop below
		if depth >= maxJSONDepth {
			return nil, fmt.Errorf("line %d: values are nested more than %d levels deep", n.Line, maxJSONDepth)
		}
		n.Kind = yaml.SequenceNode
		if t == '{' {
			n.Kind = yaml.MappingNode
		}
		for j.dec.More() {
			child, err := j.value(depth + 1)
			if err != nil {
				return nil, notEOF(err)
			}
			n.Content = append(n.Content, child)
		}
		if _, err := j.dec.Token(); err != nil {
			return nil, notEOF(err)
		}
	case string:
		n.Tag, n.Value = "!!str", t
	case json.Number:
		n.Tag, n.Value = "!!int", string(t)
		if strings.ContainsAny(n.Value, ".eE") {
			n.Tag = "!!float"
		}
	case bool:
		n.Tag, n.Value = "!!bool", strconv.FormatBool(t)
	case nil:
		n.Tag, n.Value = "!!null", "null"
	}
	return n, nil
}

// notEOF turns the end of the input inside a value into an error.
func notEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// fieldKey names a field of a rule; the field wholeRule stands for all.
type fieldKey struct {
	index int
	field string
}

const wholeRule = "*"

// fileParser turns the node tree of a rules file into rules, recording a
// problem for everything it cannot take.
type fileParser struct {
	problems []Problem
	unread   map[fieldKey]bool // fields that could not be read
}

// add records a problem at node n.
func (p *fileParser) add(index int, name, field string, n *yaml.Node, format string, args ...any) {
	p.problems = append(p.problems, Problem{Index: index, Name: name, Field: field, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
}

// markUnread records that a field of rules[index] could not be read.
func (p *fileParser) markUnread(index int, field string) {
	p.unread[fieldKey{index, field}] = true
}

// merge returns the problems found parsing and the validation problems of
// fields that could be read (the zero value left in a field that could not
// be read would only repeat its problem), in report order.
func (p *fileParser) merge(validated []Problem) []Problem {
	all := p.problems
	for _, v := range validated {
		if !p.unread[fieldKey{v.Index, v.Field}] && !p.unread[fieldKey{v.Index, wholeRule}] {
			all = append(all, v)
		}
	}
	sortProblems(all)
	return all
}

// document reads the top-level mapping of a rules file and its rules.
func (p *fileParser) document(root *yaml.Node) []Rule {
	if root == nil || isNull(root) {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		p.add(-1, "", "", root, "a rules file must be a mapping with the one key rules, got %s", describe(root))
		return nil
	}
	var list *yaml.Node
	seen := keyLines{}
	for key, val := range pairs(root) {
		name, ok := keyText(key)
		switch {
		case !ok || name != "rules":
			p.add(-1, "", "", key, "unknown top-level key %s (a rules file has the one key rules)", describeKey(key))
		case seen.dup(p, -1, "", "", key, name): // reported
		default:
			list = val
		}
	}
	if list == nil || isNull(list) {
		return nil
	}
	if list.Kind != yaml.SequenceNode {
		p.add(-1, "", "rules", list, "must be a list of rules, got %s", describe(list))
		return nil
	}
	if len(list.Content) > maxRules {
		p.add(-1, "", "rules", list, "must hold at most %d rules, got %d", maxRules, len(list.Content))
		return nil
	}
	rules := make([]Rule, len(list.Content))
	for i, n := range list.Content {
		rules[i] = p.rule(i, n)
	}
	return rules
}

// rule reads rules[index] from its mapping n.
func (p *fileParser) rule(index int, n *yaml.Node) Rule {
	var r Rule
	if n.Kind != yaml.MappingNode {
		p.add(index, "", "", n, "a rule must be a mapping of fields such as resource and kind, got %s", describe(n))
		p.markUnread(index, wholeRule)
		return r
	}
	rp := ruleParser{p: p, index: index, name: explicitName(n)}
	seen := keyLines{}
	for key, val := range pairs(n) {
		name, ok := keyText(key)
		switch {
		case !ok:
			p.add(index, rp.name, "", key, "field names must be strings, got %s", describe(key))
		case seen.dup(p, index, rp.name, "", key, name): // reported
		default:
			rp.field(&r, name, key, val)
		}
	}
	return r
}

// explicitName returns the name field of the rule mapping n, if it is a
// string, for naming the rule in problems.
func explicitName(n *yaml.Node) string {
	for key, val := range pairs(n) {
		if name, _ := keyText(key); name == "name" && val.Kind == yaml.ScalarNode && !isNull(val) {
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
		p.add(index, ruleName, field, key, "key %s is set twice (first on line %d)", quote(name), first)
		return true
	}
	s[name] = key.Line
	return false
}

// ruleParser reads the fields of one rule.
type ruleParser struct {
	p     *fileParser
	index int
	name  string // the rule's name, for problems
}

// add records a problem of field of the rule at node n.
func (rp *ruleParser) add(field string, n *yaml.Node, format string, args ...any) {
	rp.p.add(rp.index, rp.name, field, n, format, args...)
}

// field sets the field named key of r from val. A null value leaves the
// field zero.
func (rp *ruleParser) field(r *Rule, key string, keyNode, val *yaml.Node) {
	if !slices.Contains(fieldOrder[:], key) {
		rp.add("", keyNode, "unknown field %s%s", quote(key), suggestField(key))
		return
	}
	if isNull(val) {
		return
	}
	var msg string
	switch key {
	case "name":
		r.Name, msg = textValue(val)
	case "resource":
		r.Resource, msg = textValue(val)
	case "kind":
		var kind string
		kind, msg = textValue(val)
		r.Kind = Kind(kind)
	case "limit":
		r.Limit, msg = intValue[int64](val)
	case "window":
		r.Window, msg = durationValue(val)
	case "algorithm":
		r.Algorithm, msg = textValue(val)
	case "buckets":
		r.Buckets, msg = intValue[int](val)
	case "burst":
		r.Burst, msg = intValue[int64](val)
	case "maxWait":
		r.MaxWait, msg = durationValue(val)
	case "warmup":
		r.Warmup, msg = durationValue(val)
	case "coldFactor":
		r.ColdFactor, msg = intValue[int](val)
	case "param":
		r.Param, msg = textValue(val)
	case "maxKeys":
		r.MaxKeys, msg = intValue[int](val)
	case "overrides":
		r.Overrides = rp.overrides(val)
	case "store":
		r.Store, msg = textValue(val)
	case "mode":
		r.Mode, msg = textValue(val)
	case "onFailure":
		r.OnFailure, msg = textValue(val)
	case "localLimit":
		r.LocalLimit, msg = intValue[int64](val)
	case "strategy":
		r.Strategy, msg = textValue(val)
	case "threshold":
		r.Threshold, msg = floatValue(val)
	case "maxRT":
		r.MaxRT, msg = durationValue(val)
	case "minRequests":
		r.MinRequests, msg = intValue[int64](val)
	case "openFor":
		r.OpenFor, msg = durationValue(val)
	case "probes":
		r.Probes, msg = intValue[int64](val)
	}
	if msg != "" {
		rp.add(key, val, "%s", msg)
		rp.p.markUnread(rp.index, key)
	}
}

// overrides reads the overrides mapping n: param values (any scalar, taken
// as its text) to limits. Values that cannot be read are left out.
func (rp *ruleParser) overrides(n *yaml.Node) map[string]int64 {
	if n.Kind != yaml.MappingNode {
		rp.add("overrides", n, "must be a mapping of param values to limits, got %s", describe(n))
		rp.p.markUnread(rp.index, "overrides")
		return nil
	}
	out := make(map[string]int64, len(n.Content)/2)
	seen := keyLines{}
	for key, val := range pairs(n) {
		value, ok := keyText(key)
		switch {
		case !ok:
			rp.add("overrides", key, "keys must be param values, got %s", describe(key))
		case seen.dup(rp.p, rp.index, rp.name, "overrides", key, value): // reported
		default:
			limit, msg := intValue[int64](val)
			if msg != "" {
				rp.add("overrides", val, "value for %s %s", quote(value), msg)
				continue
			}
			out[value] = limit
		}
	}
	return out
}

// textValue returns the text of a scalar, or a problem.
func textValue(n *yaml.Node) (string, string) {
	if n.Kind != yaml.ScalarNode {
		return "", "must be a string, got " + describe(n)
	}
	return n.Value, ""
}

// intValue returns the value of an integer scalar as a T, or a problem.
func intValue[T int | int64](n *yaml.Node) (T, string) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, "must be an integer, got " + describe(n)
	}
	var v int64
	if err := n.Decode(&v); err != nil || int64(T(v)) != v {
		return 0, "is out of range, got " + describe(n)
	}
	return T(v), ""
}

// floatValue returns the value of a finite number scalar, integer or
// not, or a problem.
func floatValue(n *yaml.Node) (float64, string) {
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") {
		var v float64
		if err := n.Decode(&v); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
			return v, ""
		}
	}
	return 0, "must be a number, got " + describe(n)
}

// durationValue returns the value of a scalar holding a Go duration, or
// the integer 0, or a problem.
func durationValue(n *yaml.Node) (time.Duration, string) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!str":
			if d, err := time.ParseDuration(n.Value); err == nil {
				return d, ""
			}
		case "!!int":
			if v, msg := intValue[int64](n); msg == "" && v == 0 {
				return 0, ""
			}
		}
	}
	return 0, "must be a Go duration such as 1s or 250ms, got " + describe(n)
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

// keyText returns the text of a scalar mapping key; other keys (lists,
// mappings, aliases) have none.
func keyText(key *yaml.Node) (string, bool) {
	return key.Value, key.Kind == yaml.ScalarNode
}

// isNull reports whether n is a null scalar (null, ~, or nothing).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe returns how a problem shows the value n: a string quoted, other
// scalars as written, and the kind of anything else.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "the alias *" + truncate(n.Value, 64) + " (rules files do not support YAML aliases)"
	case yaml.ScalarNode:
		return describeScalar(n)
	}
	return "nothing"
}

// describeScalar returns how a problem shows a scalar: strings, and
// anything that would need escapes, quoted; numbers and booleans as written.
func describeScalar(n *yaml.Node) string {
	tag := n.ShortTag()
	if tag == "!!null" {
		return "null"
	}
	short := truncate(n.Value, 64)
	if tag == "!!str" || strconv.Quote(short) != `"`+short+`"` {
		return quote(n.Value)
	}
	if short != n.Value {
		return short + "..."
	}
	return short
}

// describeKey returns how a problem shows a mapping key.
func describeKey(key *yaml.Node) string {
	if text, ok := keyText(key); ok {
		return quote(text)
	}
	return describe(key)
}

// suggestField returns ` (did you mean "limit"?)` for an unknown field
// name that is close to a known one, else "".
func suggestField(name string) string {
	const maxDistance = 2
	if len(name) > 2*len("coldFactor") {
		return ""
	}
	for _, f := range fieldOrder {
		if editDistance(strings.ToLower(name), strings.ToLower(f)) <= maxDistance {
			return fmt.Sprintf(" (did you mean %q?)", f)
		}
	}
	return ""
}

// editDistance returns the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
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
