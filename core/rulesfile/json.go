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
)

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

// jsonRulesOver returns the line on which rules[maxRules] starts when the
// JSON rules file data holds more than maxRules rules, else 0. It counts
// the items of the list under the top-level key rules (of each, when the
// key is set twice) with a json.Decoder that checks each item's syntax
// without building it, so that a file with too many rules is refused
// without its node tree, which takes about 30 times the size of the text.
// It stops at the first syntax error, which decodeJSON then reports.
func jsonRulesOver(data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0
	}
	var skip skipJSON
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0
		}
		if key != "rules" {
			if dec.Decode(&skip) != nil {
				return 0
			}
			continue
		}
		tok, err := dec.Token()
		if err != nil {
			return 0
		}
		if tok != json.Delim('[') {
			if !skipRest(dec, tok) {
				return 0
			}
			continue
		}
		for n := 0; dec.More(); n++ {
			if n == maxRules {
				start := int(dec.InputOffset())
				for start < len(data) && bytes.IndexByte([]byte(" \t\r\n,"), data[start]) >= 0 {
					start++
				}
				return 1 + bytes.Count(data[:start], []byte{'\n'})
			}
			if dec.Decode(&skip) != nil {
				return 0
			}
		}
		if _, err := dec.Token(); err != nil {
			return 0
		}
	}
	return 0
}

// skipJSON is a value json.Decoder.Decode checks and leaves out.
type skipJSON struct{}

// UnmarshalJSON does nothing: the decoder checked the value's syntax.
func (*skipJSON) UnmarshalJSON([]byte) error { return nil }

// skipRest reads the rest of the value that tok, read from dec, starts;
// it reports whether the value was read whole.
func skipRest(dec *json.Decoder, tok json.Token) bool {
	depth := 0
	for {
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
		if depth == 0 {
			return true
		}
		var err error
		if tok, err = dec.Token(); err != nil {
			return false
		}
	}
}

// notEOF turns the end of the input inside a value into an error.
func notEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
