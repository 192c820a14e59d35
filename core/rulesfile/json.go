package rulesfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core"
)

// Bounds of what readJSON builds, so that the memory a JSON rules file
// takes to read is bounded by its size (see the package documentation):
// the keys of the top-level mapping, which has one, and of a rule, which
// has at most about 30 fields, and the values of a rule's overrides (a
// YAML file, at most 512 KiB, holds about as many).
const (
	maxTopKeys   = 64
	maxRuleKeys  = 256
	maxOverrides = 100_000
)

// readJSON reads the rules of the JSON data with p: a rules file, as
// p.document reads a node tree, or a rules list (list true, for
// Rules.UnmarshalJSON). It checks the syntax and counts the rules, to
// refuse too many before reading any, then builds the node tree of one
// rule at a time, in nodes reused from rule to rule, without what no
// problem needs (see openKind). Its errors are *core.RulesError: syntax,
// too many rules, or a mapping over maxTopKeys, maxRuleKeys or
// maxOverrides.
func readJSON(data []byte, list bool, p *fileParser) ([]core.Rule, error) {
	j := &jsonReader{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	j.dec.UseNumber()
	switch {
	case !list && len(bytes.Trim(data, " \t\r\n")) == 0:
		p.document(nil)
		return nil, nil
	case !json.Valid(data):
		return nil, syntaxProblem(jsonSyntaxError(data))
	}
	read, count, over := j.document, 0, 0
	if list {
		read = j.list
		count, over = jsonListCount(json.NewDecoder(bytes.NewReader(data)), data)
	} else {
		count, over = jsonRulesCount(data)
	}
	if over > 0 {
		return nil, problem(-1, "rules", over, "%s", tooManyRulesMsg())
	}
	j.count = count
	rules, err := read(p)
	return rules, syntaxProblem(err)
}

// jsonReader reads a valid JSON document token by token into yaml.Nodes.
type jsonReader struct {
	dec   *json.Decoder
	data  []byte
	off   int // offset up to which newlines are counted in lines
	lines int

	count int // the number of rules, to allocate them at once

	// The nodes of the rule being read, reused for the next (inRule), and
	// the contents of the rule and of its overrides.
	inRule  bool
	nodes   []*yaml.Node
	used    int
	content [2][]*yaml.Node
}

// node returns a new node, one of the rule's while inRule.
func (j *jsonReader) node() *yaml.Node {
	if !j.inRule {
		return &yaml.Node{}
	}
	if j.used == len(j.nodes) {
		j.nodes = append(j.nodes, new(yaml.Node))
	}
	j.used++
	*j.nodes[j.used-1] = yaml.Node{}
	return j.nodes[j.used-1]
}

// lineAt returns the line of offset off, at or after the last one asked.
func (j *jsonReader) lineAt(off int) int {
	if off > j.off && off <= len(j.data) {
		j.lines += bytes.Count(j.data[j.off:off], []byte{'\n'})
		j.off = off
	}
	return j.lines + 1
}

// open reads the next token, nested depth levels deep: a scalar, whole,
// or the start of a list or mapping, whose contents are to be read next.
func (j *jsonReader) open(depth int) (*yaml.Node, error) {
	tok, err := j.dec.Token()
	if err != nil {
		return nil, err
	}
	n := j.node()
	n.Kind, n.Line = yaml.ScalarNode, j.lineAt(int(j.dec.InputOffset()))
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
		n.Tag, n.Value, n.Style = "!!str", t, yaml.DoubleQuotedStyle
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

// openKind reads the next value, nested depth levels deep: a scalar, or
// the start of a list or mapping of kind, as open does; another list or
// mapping it skips in one json.Decoder.Decode (which, unlike Token,
// allocates nothing for each value in it), and returns its node without
// contents: its kind and line are all that a problem of a value of the
// wrong type shows. Kind 0 skips every list and mapping.
func (j *jsonReader) openKind(depth int, kind yaml.Kind) (*yaml.Node, error) {
	start, c := nextByte(j.data, j.dec.InputOffset())
	k := map[byte]yaml.Kind{'[': yaml.SequenceNode, '{': yaml.MappingNode}[c]
	if k == 0 || k == kind {
		return j.open(depth)
	}
	n := j.node()
	n.Kind, n.Line = k, j.lineAt(start)
	if err := j.dec.Decode(&skipJSON{}); err != nil {
		return nil, err
	}
	// The document is valid: only its depth is left to check.
	if deep := nesting(j.data[start:j.dec.InputOffset()], maxJSONDepth-depth); deep >= 0 {
		return nil, fmt.Errorf("line %d: values are nested more than %d levels deep", j.lineAt(start+deep), maxJSONDepth)
	}
	return n, nil
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
			return err
		}
		if len(content) == 2*max {
			return too(key)
		}
		val, err := value(key)
		if err != nil {
			return err
		}
		content = append(content, key, val)
	}
	n.Content = content
	_, err := j.dec.Token() // the closing '}'
	return err
}

// document reads a rules file with p (see readJSON).
func (j *jsonReader) document(p *fileParser) ([]core.Rule, error) {
	root, err := j.openKind(0, yaml.MappingNode)
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
			return j.openKind(1, 0)
		}
		listed = true
		list, err := j.openKind(1, yaml.SequenceNode)
		if err == nil && list.Kind == yaml.SequenceNode {
			rules, err = j.rules(p, 1)
		}
		return list, err
	}, func(key *yaml.Node) error {
		return problem(-1, "", key.Line, "a rules file has the one key rules, got more than %d keys", maxTopKeys)
	})
	if err != nil || p.topLevel(root) == nil {
		return nil, err
	}
	return rules, nil
}

// list reads a rules list with p (see readJSON).
func (j *jsonReader) list(p *fileParser) ([]core.Rule, error) {
	n, err := j.openKind(0, yaml.SequenceNode)
	if err != nil || !p.isList(n) {
		return nil, err
	}
	return j.rules(p, 0)
}

// rules reads a rules list nested depth levels deep, after its '[', one
// rule at a time with p.rule.
func (j *jsonReader) rules(p *fileParser, depth int) ([]core.Rule, error) {
	var rules []core.Rule
	j.inRule = true
	defer func() { j.inRule = false }()
	for i := 0; j.dec.More(); i++ {
		j.used = 0
		var n *yaml.Node
		var err error
		if p.full() {
			n, err = j.openKind(depth+1, 0)
		} else {
			n, err = j.rule(i, depth+1)
		}
		if err != nil {
			return nil, err
		}
		if i == maxRules {
			return nil, problem(-1, "rules", n.Line, "%s", tooManyRulesMsg())
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
	_, err := j.dec.Token() // the closing ']'
	return rules, err
}

// rule reads rules[index], nested depth levels deep: the mapping of its
// fields, with the contents of its first overrides key, or the node of
// what else it is.
func (j *jsonReader) rule(index, depth int) (*yaml.Node, error) {
	n, err := j.openKind(depth, yaml.MappingNode)
	if err != nil || n.Kind != yaml.MappingNode {
		return n, err
	}
	overrides := false
	err = j.mapping(n, depth, j.content[0], maxRuleKeys, func(key *yaml.Node) (*yaml.Node, error) {
		if key.Value != "overrides" || overrides {
			return j.openKind(depth+1, 0)
		}
		overrides = true
		val, err := j.openKind(depth+1, yaml.MappingNode)
		if err != nil || val.Kind != yaml.MappingNode {
			return val, err
		}
		err = j.mapping(val, depth+1, j.content[1], maxOverrides, func(*yaml.Node) (*yaml.Node, error) {
			return j.openKind(depth+2, 0)
		}, func(key *yaml.Node) error {
			return problem(index, "overrides", key.Line, "must hold at most %d values in a JSON file, got more: the next starts on this line", maxOverrides)
		})
		j.content[1] = val.Content
		return val, err
	}, func(key *yaml.Node) error {
		return problem(index, "", key.Line, "a rule has at most %d keys, got more: the next starts on this line", maxRuleKeys)
	})
	j.content[0] = n.Content
	return n, err
}

// problem returns a *core.RulesError of one problem of field of
// rules[index], or of the file as a whole (index -1, no field).
func problem(index int, field string, line int, format string, args ...any) *core.RulesError {
	return &core.RulesError{Problems: []core.Problem{{Index: index, Field: field, Line: line, Msg: fmt.Sprintf(format, args...)}}}
}

// jsonRulesCount returns the number of rules in the JSON rules file data,
// and the line on which rules[maxRules] starts when it holds more than
// maxRules rules, else 0; 0, 0 when data is not valid JSON. It counts the
// items of each list under the top-level key rules, skipping each in one
// json.Decoder.Decode, up to maxTopKeys top-level keys.
func jsonRulesCount(data []byte) (count, over int) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, _ := dec.Token(); tok != json.Delim('{') || !json.Valid(data) {
		return 0, 0
	}
	for keys := 0; dec.More() && keys < maxTopKeys; keys++ {
		if key, _ := dec.Token(); key != "rules" {
			_ = dec.Decode(&skipJSON{})
			continue
		}
		n, line := jsonListCount(dec, data)
		if count += n; line > 0 {
			return count, line
		}
	}
	return count, 0
}

// jsonListCount counts, as jsonRulesCount does, the items of the value dec
// reads next in data, valid JSON, if it is a list: it returns their number
// and the line of item maxRules, or 0.
func jsonListCount(dec *json.Decoder, data []byte) (count, over int) {
	if _, c := nextByte(data, dec.InputOffset()); c != '[' {
		_ = dec.Decode(&skipJSON{})
		return 0, 0
	}
	_, _ = dec.Token()
	for ; dec.More(); count++ {
		if count == maxRules {
			start, _ := nextByte(data, dec.InputOffset())
			return count, 1 + bytes.Count(data[:start], []byte{'\n'})
		}
		_ = dec.Decode(&skipJSON{})
	}
	_, _ = dec.Token()
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
