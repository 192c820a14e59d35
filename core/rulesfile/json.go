package rulesfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core"
)

// Bounds of what readJSON builds, so that the memory a JSON rules file
// takes to read is bounded by its size (see the package documentation).
const (
	// maxTopKeys bounds the keys of a JSON rules file's top-level mapping,
	// which has one.
	maxTopKeys = 64
	// maxRuleKeys bounds the keys of a rule: a rule has at most about 30
	// fields.
	maxRuleKeys = 256
	// maxOverrides bounds the values of a rule's overrides in a JSON file;
	// a YAML file, at most 512 KiB, holds about as many at most.
	maxOverrides = 100_000
)

// decodeJSON parses a JSON document into the node tree the same YAML
// would give, keeping the order of keys, their duplicates and their line
// numbers. An empty document gives nil; data after it is an error.
func decodeJSON(data []byte) (*yaml.Node, error) {
	j := newJSONReader(data)
	root, err := j.value(0)
	if err == io.EOF {
		return nil, nil
	}
	if err == nil {
		err = j.end()
	}
	if err != nil {
		return nil, j.syntaxError(err)
	}
	return root, nil
}

// readJSON reads the rules of the JSON rules file data, count rules (or
// about), with p, as p.document reads a node tree, but builds the node
// tree of one rule at a time, in nodes reused from rule to rule, and
// leaves out what no problem needs: the contents of lists and mappings in
// a rule (but for its overrides) and of top-level keys other than rules,
// each skipped in one json.Decoder.Decode. Its errors are syntax errors
// (jsonSyntaxError), or a *core.RulesError of a mapping over maxTopKeys,
// maxRuleKeys or maxOverrides.
func readJSON(data []byte, count int, p *fileParser) ([]core.Rule, error) {
	if len(bytes.Trim(data, " \t\r\n")) == 0 {
		p.document(nil)
		return nil, nil
	}
	if !json.Valid(data) {
		return nil, jsonSyntaxError(data)
	}
	j := newJSONReader(data)
	j.count = count
	rules, err := j.document(p)
	if err == nil {
		err = j.end()
	}
	if err != nil {
		var rerr *core.RulesError
		if errors.As(err, &rerr) {
			return nil, err
		}
		return nil, j.syntaxError(err)
	}
	return rules, nil
}

// jsonReader reads a JSON document token by token into yaml.Nodes.
type jsonReader struct {
	dec   *json.Decoder
	data  []byte
	off   int // offset up to which newlines are counted in lines
	lines int

	count int // the number of rules, to allocate them at once

	// The nodes of the rule being read, reused for the next (inRule):
	// chunks of nodes, the next free one, and the contents of the rule
	// and of its overrides.
	inRule  bool
	chunks  [][]yaml.Node
	used    int
	content [2][]*yaml.Node
}

// newJSONReader returns a reader of the JSON document data.
func newJSONReader(data []byte) *jsonReader {
	j := &jsonReader{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	j.dec.UseNumber()
	return j
}

// end returns an error unless the document ends after the value read.
func (j *jsonReader) end() error {
	if _, err := j.dec.Token(); err != io.EOF {
		return fmt.Errorf("line %d: unexpected data after the top-level JSON value", j.line())
	}
	return nil
}

// node returns a new node, one of the rule's while inRule.
func (j *jsonReader) node() *yaml.Node {
	if !j.inRule {
		return &yaml.Node{}
	}
	const chunk = 256
	i, k := j.used/chunk, j.used%chunk
	if i == len(j.chunks) {
		j.chunks = append(j.chunks, make([]yaml.Node, chunk))
	}
	j.used++
	n := &j.chunks[i][k]
	*n = yaml.Node{}
	return n
}

// line returns the line of the decoder's input offset, the end of the last
// token read.
func (j *jsonReader) line() int {
	return j.lineAt(int(j.dec.InputOffset()))
}

// lineAt returns the line of offset off, at or after the last one asked.
func (j *jsonReader) lineAt(off int) int {
	if off > j.off && off <= len(j.data) {
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
	n, err := j.open(depth)
	if err != nil || n.Kind == yaml.ScalarNode {
		return n, err
	}
	for j.dec.More() {
		child, err := j.value(depth + 1)
		if err != nil {
			return nil, notEOF(err)
		}
		n.Content = append(n.Content, child)
	}
	return n, j.close()
}

// open reads the next token, nested depth levels deep: a scalar, whole,
// or the start of a list or mapping, whose contents are to be read next.
func (j *jsonReader) open(depth int) (*yaml.Node, error) {
	tok, err := j.dec.Token()
	if err != nil {
		return nil, err
	}
	n := j.node()
	n.Kind, n.Line = yaml.ScalarNode, j.line()
	switch t := tok.(type) {
	case json.Delim: // '[' or '{': closing ones end the list or mapping
		if depth >= maxJSONDepth {
			return nil, fmt.Errorf("line %d: values are nested more than %d levels deep", n.Line, maxJSONDepth)
		}
		n.Kind = yaml.SequenceNode
		if t == '{' {
			n.Kind = yaml.MappingNode
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

// close reads the end of a list or mapping.
func (j *jsonReader) close() error {
	_, err := j.dec.Token()
	return notEOF(err)
}

// skip reads the next value, nested depth levels deep, and returns its
// node without the contents of a list or mapping: its kind and line are
// all that a problem of a value of the wrong type shows.
func (j *jsonReader) skip(depth int) (*yaml.Node, error) {
	return j.openKind(depth, 0)
}

// openKind reads the next value, nested depth levels deep, as open does
// when it is a list or mapping of kind, whose contents are to be read
// next, and as skip does else.
// The document must be valid JSON.
func (j *jsonReader) openKind(depth int, kind yaml.Kind) (*yaml.Node, error) {
	if n, ok, err := j.skipWhole(depth, kind); ok {
		return n, err
	}
	return j.open(depth)
}

// skipWhole skips the next value, nested depth levels deep, when it is a
// list or mapping not of kind, in one json.Decoder.Decode (which, unlike
// Token, allocates nothing for each value in it), and returns its node
// without contents and true; else false. The document must be valid JSON:
// skipWhole checks its depth, not its syntax.
func (j *jsonReader) skipWhole(depth int, kind yaml.Kind) (*yaml.Node, bool, error) {
	start, c := nextByte(j.data, j.dec.InputOffset())
	k := map[byte]yaml.Kind{'[': yaml.SequenceNode, '{': yaml.MappingNode}[c]
	if k == 0 || k == kind {
		return nil, false, nil
	}
	n := j.node()
	n.Kind, n.Line = k, j.lineAt(start)
	if err := j.dec.Decode(&skipJSON{}); err != nil {
		return nil, true, notEOF(err)
	}
	if deep := nesting(j.data[start:j.dec.InputOffset()], maxJSONDepth-depth); deep >= 0 {
		return nil, true, fmt.Errorf("line %d: values are nested more than %d levels deep", j.lineAt(start+deep), maxJSONDepth)
	}
	return n, true, nil
}

// nesting returns the offset in v, a valid JSON value, of its first list
// or mapping nested limit levels deep (v itself at level 0), or -1.
func nesting(v []byte, limit int) int {
	depth, inString := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case inString && c == '\\':
			i++ // an escaped character
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth >= limit {
				return i
			}
			depth++
		case c == ']' || c == '}':
			depth--
		}
	}
	return -1
}

// jsonSyntaxError returns the first error of data, which is not valid
// JSON, as reading it token by token finds it: a value nested more than
// maxJSONDepth deep, data after the top-level value, or the syntax error
// json.Unmarshal finds (without building anything), with its line.
func jsonSyntaxError(data []byte) error {
	err := json.Unmarshal(data, &skipJSON{})
	var se *json.SyntaxError
	if !errors.As(err, &se) || se.Offset < 1 || se.Offset > int64(len(data)) {
		return err
	}
	bad := int(se.Offset) - 1 // the offending byte
	msg := se.Error()
	end := strings.HasPrefix(msg, "unexpected end of JSON input") ||
		strings.HasPrefix(msg, "invalid character ' '") && data[bad] != ' ' // the scanner's end
	if end {
		bad = len(data)
	}
	lineOf := func(off int) int { return 1 + bytes.Count(data[:off], []byte{'\n'}) }
	if deep := nesting(data[:bad], maxJSONDepth); deep >= 0 {
		return fmt.Errorf("line %d: values are nested more than %d levels deep", lineOf(deep), maxJSONDepth)
	}
	switch {
	case end:
		return errors.New("unexpected end of JSON input")
	case strings.HasSuffix(msg, "after top-level value"):
		return fmt.Errorf("line %d: unexpected data after the top-level JSON value", lineOf(bad))
	}
	return fmt.Errorf("line %d: %w", lineOf(int(se.Offset)), err)
}

// mapping reads the contents of the mapping n, nested depth levels deep,
// into content, at most max keys, with value reading the value of each
// key; the content is n's. too is the problem of a key over max.
func (j *jsonReader) mapping(n *yaml.Node, depth int, content []*yaml.Node, max int, value func(key *yaml.Node) (*yaml.Node, error), too func(key *yaml.Node) error) error {
	content = content[:0]
	for j.dec.More() {
		key, err := j.open(depth + 1)
		if err != nil {
			return notEOF(err)
		}
		if len(content) == 2*max {
			return too(key)
		}
		val, err := value(key)
		if err != nil {
			return notEOF(err)
		}
		content = append(content, key, val)
	}
	n.Content = content
	return j.close()
}

// document reads a rules file with p (see readJSON).
func (j *jsonReader) document(p *fileParser) ([]core.Rule, error) {
	root, err := j.openKind(0, yaml.MappingNode)
	if err == io.EOF {
		p.document(nil)
		return nil, nil
	}
	if err != nil || root.Kind != yaml.MappingNode {
		if err == nil {
			p.document(root)
		}
		return nil, err
	}
	var rules []core.Rule
	listed := false
	err = j.mapping(root, 0, nil, maxTopKeys, func(key *yaml.Node) (*yaml.Node, error) {
		if key.Value != "rules" || listed {
			return j.skip(1)
		}
		listed = true
		list, err := j.openKind(1, yaml.SequenceNode)
		if err == nil && list.Kind == yaml.SequenceNode {
			rules, err = j.rules(p)
		}
		return list, err
	}, func(key *yaml.Node) error {
		return fileProblem(key.Line, "a rules file has the one key rules, got more than %d keys", maxTopKeys)
	})
	if err != nil || p.topLevel(root) == nil {
		return nil, err
	}
	return rules, nil
}

// rules reads the rules list, after its '[', one rule at a time with
// p.rule.
func (j *jsonReader) rules(p *fileParser) ([]core.Rule, error) {
	var rules []core.Rule
	j.inRule = true
	defer func() { j.inRule = false }()
	for i := 0; j.dec.More(); i++ {
		j.used = 0
		var n *yaml.Node
		var err error
		if p.full() {
			n, err = j.skip(2)
		} else {
			n, err = j.rule(i)
		}
		if err != nil {
			return nil, err
		}
		if i == maxRules {
			return nil, ruleProblem(-1, "rules", n.Line, "%s", tooManyRulesMsg())
		}
		if rules == nil {
			rules = make([]core.Rule, 0, min(j.count, maxRules))
		}
		if p.full() { // leave the rest unread, but for its syntax
			p.dropped = true
			continue
		}
		rules = append(rules, core.Rule{})
		p.rule(i, n, &rules[i])
	}
	return rules, j.close()
}

// rule reads rules[index]: the mapping of its fields, with the contents
// of its first overrides key, or the node of what else it is.
func (j *jsonReader) rule(index int) (*yaml.Node, error) {
	n, err := j.openKind(2, yaml.MappingNode)
	if err != nil || n.Kind != yaml.MappingNode {
		return n, err
	}
	overrides := false
	err = j.mapping(n, 2, j.content[0], maxRuleKeys, func(key *yaml.Node) (*yaml.Node, error) {
		if key.Value != "overrides" || overrides {
			return j.skip(3)
		}
		overrides = true
		val, err := j.openKind(3, yaml.MappingNode)
		if err != nil || val.Kind != yaml.MappingNode {
			return val, err
		}
		err = j.mapping(val, 3, j.content[1], maxOverrides, func(*yaml.Node) (*yaml.Node, error) {
			return j.skip(4)
		}, func(key *yaml.Node) error {
			return ruleProblem(index, "overrides", key.Line, "must hold at most %d values in a JSON file, got more: the next starts on this line", maxOverrides)
		})
		j.content[1] = val.Content
		return val, err
	}, func(key *yaml.Node) error {
		return ruleProblem(index, "", key.Line, "a rule has at most %d keys, got more: the next starts on this line", maxRuleKeys)
	})
	j.content[0] = n.Content
	return n, err
}

// ruleProblem returns a *core.RulesError of one problem of rules[index].
func ruleProblem(index int, field string, line int, format string, args ...any) error {
	return &core.RulesError{Problems: []core.Problem{{Index: index, Field: field, Line: line, Msg: fmt.Sprintf(format, args...)}}}
}

// jsonRulesOver returns the line on which rules[maxRules] starts when the
// JSON rules file data holds more than maxRules rules, else 0. It counts
// the items of the list under the top-level key rules (of each, when the
// key is set twice) with a json.Decoder that checks each item's syntax
// without building it, so that a file with too many rules is refused
// before any is read. It stops at the first syntax error, which readJSON
// then reports.
func jsonRulesOver(data []byte) int {
	_, over := jsonRulesCount(data)
	return over
}

// jsonRulesCount returns the number of rules in the JSON rules file data,
// as far as jsonRulesOver counts them, and jsonRulesOver(data). It stops
// at the first syntax error, and after maxTopKeys top-level keys.
func jsonRulesCount(data []byte) (count, over int) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, 0
	}
	var skip skipJSON
	for keys := 0; dec.More() && keys < maxTopKeys; keys++ {
		key, err := dec.Token()
		if err != nil {
			return count, 0
		}
		if key != "rules" {
			if dec.Decode(&skip) != nil {
				return count, 0
			}
			continue
		}
		if off, c := nextByte(data, dec.InputOffset()); c != '[' {
			if dec.Decode(&skip) != nil || off == len(data) {
				return count, 0
			}
			continue
		}
		if _, err := dec.Token(); err != nil {
			return count, 0
		}
		for n := 0; dec.More(); n++ {
			if n == maxRules {
				start, _ := nextByte(data, dec.InputOffset())
				return count, 1 + bytes.Count(data[:start], []byte{'\n'})
			}
			if dec.Decode(&skip) != nil {
				return count, 0
			}
			count++
		}
		if _, err := dec.Token(); err != nil {
			return count, 0
		}
	}
	return count, 0
}

// skipJSON is a value json.Decoder.Decode checks and leaves out.
type skipJSON struct{}

// UnmarshalJSON does nothing: the decoder checked the value's syntax.
func (*skipJSON) UnmarshalJSON([]byte) error { return nil }

// nextByte returns the offset in data of the first byte at or after off
// that is not white space, a comma or a colon, and that byte; len(data)
// and 0 at the end.
func nextByte(data []byte, off int64) (int, byte) {
	i := int(off)
	for i < len(data) && strings.IndexByte(" \t\r\n,:", data[i]) >= 0 {
		i++
	}
	if i >= len(data) {
		return len(data), 0
	}
	return i, data[i]
}

// notEOF turns the end of the input inside a value into an error.
func notEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
