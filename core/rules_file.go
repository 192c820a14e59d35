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

	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/store"
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
// It stops reading at the first byte over the size limit or the first rule
// over the count limit. Its errors start with the path.
func LoadRulesFile(path string) ([]Rule, error) {
	rules, err := readRulesFile(path, formatOf(path))
	if err != nil {
		return nil, fmt.Errorf("rules file %s: %w", path, err)
	}
	return rules, nil
}

// formatOf returns the format of the rules file at path, by its extension.
func formatOf(path string) Format {
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return FormatJSON
	}
	return FormatYAML
}

// readRulesFile reads the file at path with readRules and parses it.
func readRulesFile(path string, format Format) ([]Rule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readRules(f, format)
	if err != nil {
		return nil, err
	}
	return ParseRules(data, format)
}

// readRules reads a rules file from f, counting its rules as it reads (see
// ruleCounter): it stops after the first byte over the size limit, or at
// the line of the first rule over the count limit, so that ParseRules
// refuses what it returns without parsing it.
func readRules(f *os.File, format Format) ([]byte, error) {
	size := 64 << 10
	if info, err := f.Stat(); err == nil && info.Size() < maxRulesFileSize {
		size = max(size, int(info.Size())+1) // +1 to see the end
	}
	c := newRuleCounter(format)
	data := make([]byte, 0, size)
	for {
		if len(data) == cap(data) {
			data = slices.Grow(data, cap(data)) // the file grew while read
		}
		n, err := f.Read(data[len(data):min(cap(data), maxRulesFileSize+1)])
		data = data[:len(data)+n]
		c.feed(data, false)
		switch {
		case c.over(), len(data) > maxRulesFileSize, err == io.EOF:
			return data, nil
		case err != nil:
			return nil, err
		}
	}
}

// ParseRules parses a rules file: a mapping whose one key, rules, holds a
// list of rules, each a mapping of the fields of Rule named as in its json
// tags. Durations are Go durations ("1s", "250ms") or 0; overrides maps
// param values to limits. ParseRules returns the rules normalized (see
// NormalizeRules), or a *RulesError listing every problem of the file:
// syntax, unknown fields, values of the wrong type, duplicate keys, and
// every problem ValidateRules finds; problems found reading the file give
// its line.
//
// A file that may have been cut short is refused, so that a rules file
// caught halfway through a write, or left so by a full disk or a crash,
// never applies as a smaller rule set:
//   - a file with no rules key (an empty file, one of comments only) or
//     with a bare "rules:" or "rules: null": a file with no rules says so
//     with "rules: []" (JSON: {"rules": []});
//   - a YAML file whose last line has no line break and ends with a plain
//     value or comment (a value cut in the middle: "limit: 1" for
//     "limit: 100"); a file that ends with a closing bracket or quote is
//     complete, and so is a JSON file, which cannot end early and parse;
//   - a field with an empty value ("window:"), as a cut after a key leaves
//     it; null, written out, leaves the field zero;
//   - a flow, concurrency or hotspot rule without limit (a cut before the
//     limit would block every request): "limit: 0" blocks every request.
//
// A YAML file cut at a line break after a complete field or rule is a valid
// shorter file and cannot be told from one: a writer must replace a rules
// file at once (write another file and rename it over the rules file) or
// leave the RulesWatcher time to see it hold still (see RulesWatcher).
//
// The input is limited to 16 MiB and 100,000 rules; the rules are counted
// from the text before it is parsed (parsing takes memory about 30 times
// the size of the text). YAML aliases are not accepted.
func ParseRules(data []byte, format Format) ([]Rule, error) {
	if len(data) > maxRulesFileSize {
		return nil, fileProblem(0, "a rules file must be at most 16 MiB (%d bytes), got more", maxRulesFileSize)
	}
	c := newRuleCounter(format)
	if c.feed(data, true); c.over() {
		return nil, &RulesError{Problems: []Problem{{Index: -1, Field: "rules", Line: c.overLine,
			Msg: fmt.Sprintf("must hold at most %d rules, got more: rules[%d] starts on this line", maxRules, maxRules)}}}
	}
	root, err := decodeRulesFile(data, format)
	if err != nil {
		line, msg := splitLine(err.Error())
		return nil, fileProblem(line, "%s", msg)
	}
	p := fileParser{unread: map[fieldKey]bool{}}
	rules := p.document(root)
	if format == FormatYAML && p.problems == nil {
		p.checkEnd(data)
	}
	if problems := p.merge(validateRules(rules)); len(problems) > 0 {
		return nil, &RulesError{Problems: problems}
	}
	return normalize(rules), nil
}

// splitLine returns the line a syntax error's text names, "yaml: line 3:
// msg" (go.yaml.in/yaml's) or "line 3: msg" (decodeJSON's), and the text
// without it; 0 and the text when it names none.
func splitLine(text string) (int, string) {
	prefix, rest, ok := strings.Cut(text, "line ")
	if !ok || prefix != "" && prefix != "yaml: " {
		return 0, text
	}
	num, msg, ok := strings.Cut(rest, ": ")
	line, err := strconv.Atoi(num)
	if !ok || err != nil || line <= 0 {
		return 0, text
	}
	return line, prefix + msg
}

// fileProblem returns a *RulesError of one problem of the file as a whole.
func fileProblem(line int, format string, args ...any) *RulesError {
	return &RulesError{Problems: []Problem{{Index: -1, Line: line, Msg: fmt.Sprintf(format, args...)}}}
}

// decodeRulesFile parses data into a node tree, nil for an empty file.
func decodeRulesFile(data []byte, format Format) (*yaml.Node, error) {
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

// ruleCounter counts the rules of a rules file from its text, before the
// text is parsed, so that a file with too many rules is refused without
// building its node tree, which takes about 30 times the size of the text.
// It counts the items of the rules list that start a mapping in JSON and in
// YAML flow style ("rules: [{...}, ...]"), and, in YAML block style, the
// lines that start an item ("- ") at the indentation of the list's first
// item. It can miss items (an item that is not a mapping, a list it does not
// recognize); ParseRules counts the parsed list too. It counts more items
// than the list has only when a quoted string spans lines that look like
// items.
type ruleCounter struct {
	yaml     bool
	off      int // bytes of the text counted
	line     int // lines before off
	state    counterState
	n        int // items counted
	overLine int // line of the first item over maxRules, once over

	indent int // YAML block style: the indentation of the items

	// JSON and YAML flow style: the nesting depth, the kinds of the
	// outermost containers ('[' or '{'), the depth of the rules list, and
	// the quote or comment the scan is in.
	depth     int
	outer     [3]byte
	listDepth int
	quote     byte
	escaped   bool
	comment   bool
	prev      byte
}

type counterState int

const (
	seekKey   counterState = iota // YAML: looking for the rules key
	seekItem                      // YAML: looking for the first item of a block list
	blockList                     // YAML: counting the items of a block list
	flowList                      // counting the items of a flow list (JSON, YAML)
	counted                       // the list ended, or is not one the counter reads
)

// newRuleCounter returns a counter of the rules of a file in format.
func newRuleCounter(format Format) *ruleCounter {
	if format == FormatJSON {
		return &ruleCounter{state: flowList, listDepth: 2}
	}
	return &ruleCounter{yaml: true}
}

// over reports whether the counter found more than maxRules rules.
func (c *ruleCounter) over() bool { return c.overLine > 0 }

// feed counts the rules in data after what earlier calls counted: data is
// the text read so far, final once it is all of it. YAML is counted by
// whole lines.
func (c *ruleCounter) feed(data []byte, final bool) {
	if !c.yaml {
		c.scanFlow(data[c.off:]) // JSON is not split into lines
		c.off = len(data)
		return
	}
	for c.off < len(data) && c.state != counted && !c.over() {
		rest := data[c.off:]
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			if !final {
				return
			}
			end = len(rest) - 1
		}
		c.off += end + 1
		if c.state == flowList {
			c.scanFlow(rest[:end+1])
			continue
		}
		c.scanLine(rest[:end+1])
		if c.state != flowList { // else scanFlow saw the line break
			c.line++
		}
	}
}

// scanLine counts the items on a line of YAML, with its line break
// (unless it is the last line), outside flow style.
func (c *ruleCounter) scanLine(chunk []byte) {
	line := bytes.TrimRight(chunk, "\r\n")
	text := bytes.TrimLeft(line, " ")
	indent := len(line) - len(text)
	if c.state != seekKey && (len(text) == 0 || text[0] == '#') {
		return // blank, or a comment
	}
	switch c.state {
	case seekKey:
		for _, key := range []string{"rules:", `"rules":`, "'rules':"} {
			if rest, ok := bytes.CutPrefix(line, []byte(key)); ok {
				c.state = counted
				rest = bytes.TrimLeft(rest, " \t")
				switch {
				case len(rest) == 0 || rest[0] == '#':
					c.state = seekItem
				case rest[0] == '[':
					c.state, c.listDepth, c.prev = flowList, 1, ' '
					c.scanFlow(chunk[len(line)-len(rest):])
				}
				return
			}
		}
	case seekItem:
		c.state = counted
		if isItem(text) {
			c.state, c.indent = blockList, indent
			c.count()
		}
	case blockList:
		switch {
		case indent > c.indent: // inside an item
		case indent == c.indent && isItem(text):
			c.count()
		default:
			c.state = counted
		}
	}
}

// isItem reports whether the text of a YAML line starts a block list item.
func isItem(text []byte) bool {
	return len(text) > 0 && text[0] == '-' && (len(text) == 1 || text[1] == ' ' || text[1] == '\t')
}

// count counts an item on the current line.
func (c *ruleCounter) count() {
	c.n++
	if c.n > maxRules {
		c.overLine = c.line + 1
	}
}

// scanFlow counts the mappings opened directly in the rules list in chunk,
// JSON or YAML flow style, following quotes (and in YAML, comments).
func (c *ruleCounter) scanFlow(chunk []byte) {
	for _, b := range chunk {
		prev := c.prev
		c.prev = b
		switch {
		case b == '\n':
			c.line++
			c.comment = false
		case c.comment:
		case c.quote != 0:
			switch {
			case c.escaped:
				c.escaped = false
			case b == '\\' && c.quote == '"':
				c.escaped = true
			case b == c.quote:
				c.quote = 0
				c.prev = 0 // '' in a YAML single-quoted string reopens it
			}
		case b == '"' || c.yaml && b == '\'' && isFlowBoundary(prev):
			c.quote = b
		case c.yaml && b == '#' && (prev == ' ' || prev == '\t'):
			c.comment = true
		case b == '[' || b == '{':
			if b == '{' && c.depth == c.listDepth && c.outer[c.listDepth] == '[' && (c.yaml || c.outer[1] == '{') {
				c.count()
				if c.over() {
					return
				}
			}
			c.depth++
			if c.depth < len(c.outer) {
				c.outer[c.depth] = b
			}
		case b == ']' || b == '}':
			c.depth--
			if c.depth < c.listDepth && c.yaml {
				c.state = counted
				return
			}
		}
	}
}

// isFlowBoundary reports whether a quote after b starts a quoted string in
// YAML flow style, rather than being part of a plain one.
func isFlowBoundary(b byte) bool {
	return b == 0 || strings.IndexByte(" \t\n[]{},:", b) >= 0
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
	list     *yaml.Node        // the rules list, once read
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
			v.Line = p.line(v.Index, v.Field)
			all = append(all, v)
		}
	}
	sortProblems(all)
	return all
}

// line returns the line of field of rules[index] in the file: its key's,
// or the rule's when the rule does not set it.
func (p *fileParser) line(index int, field string) int {
	if p.list == nil || index < 0 || index >= len(p.list.Content) {
		return 0
	}
	n := p.list.Content[index]
	for key := range pairs(n) {
		if name, _ := keyText(key); name == field {
			return key.Line
		}
	}
	return n.Line
}

// noRules is how problems of a file without rules say what to write.
const noRules = `a rules file with no rules says so with "rules: []"`

// document reads the top-level mapping of a rules file and its rules.
func (p *fileParser) document(root *yaml.Node) []Rule {
	if root == nil || isNull(root) {
		p.problems = append(p.problems, Problem{Index: -1, Field: "rules",
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
		name, ok := keyText(key)
		switch {
		case !ok || name != "rules":
			p.add(-1, "", "", key, "unknown top-level key %s (a rules file has the one key rules)", describeKey(key))
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
	case list.Kind != yaml.SequenceNode:
		p.add(-1, "", "rules", list, "must be a list of rules, got %s", describe(list))
		return nil
	case len(list.Content) > maxRules:
		p.add(-1, "", "rules", list, "must hold at most %d rules, got %d", maxRules, len(list.Content))
		return nil
	}
	p.list = list
	rules := make([]Rule, len(list.Content))
	for i, n := range list.Content {
		rules[i] = p.rule(i, n)
	}
	return rules
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
	p.problems = append(p.problems, Problem{Index: -1, Line: 1 + bytes.Count(text, []byte{'\n'}),
		Msg: fmt.Sprintf("the file ends without a line break after %s: it may have been cut short in the middle of a value; end it with a line break", quote(string(last)))})
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
	if _, ok := seen["limit"]; !ok && (r.Kind == KindFlow || r.Kind == KindConcurrency || r.Kind == KindHotspot) {
		rp.add("limit", n, "is required for kind %s (limit: 0 blocks every request)", r.Kind)
		p.markUnread(index, "limit")
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
		if val.Value == "" { // a key and nothing after it
			rp.add(key, keyNode, "has no value (the file may have been cut short); give one, or remove the key")
			rp.p.markUnread(rp.index, key)
		}
		return
	}
	var msg string
	switch key {
	case "name":
		r.Name, msg = textValue(val)
	case "resource":
		r.Resource, msg = textValue(val)
	case "kind":
		r.Kind, msg = typedText[Kind](val)
	case "limit":
		r.Limit, msg = intValue[int64](val)
	case "window":
		r.Window, msg = durationValue(val)
	case "algorithm":
		r.Algorithm, msg = typedText[Algorithm](val)
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
	case "onMissing":
		r.OnMissing, msg = typedText[OnMissing](val)
	case "store":
		r.Store, msg = textValue(val)
	case "mode":
		r.Mode, msg = typedText[store.Mode](val)
	case "onFailure":
		r.OnFailure, msg = typedText[FailurePolicy](val)
	case "localLimit":
		r.LocalLimit, msg = intValue[int64](val)
	case "strategy":
		r.Strategy, msg = typedText[breaker.Strategy](val)
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

// typedText returns the text of a scalar as a T, or a problem.
func typedText[T ~string](n *yaml.Node) (T, string) {
	s, msg := textValue(n)
	return T(s), msg
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
// name that is close to a known one, the closest (the first in fieldOrder
// of those as close), else "".
func suggestField(name string) string {
	const maxDistance = 2
	if len(name) > 2*len("coldFactor") {
		return ""
	}
	best, bestDistance := "", maxDistance+1
	for _, f := range fieldOrder {
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
