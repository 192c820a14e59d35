package rulesfile

import (
	"bytes"
	"strings"
)

// yamlCounter counts the rules of a YAML rules file from its text, before
// the text is parsed, so that a file with too many rules is refused without
// building its node tree, which takes about 30 times the size of the text
// (go.yaml.in/yaml/v3 builds the tree of a whole document before it returns
// any of it, and has no interface to its events). JSON files are counted
// by encoding/json's decoder instead (jsonRulesOver).
//
// It counts the items of the rules list that start a mapping in flow style
// ("rules: [{...}, ...]"), and, in block style, the lines that start an
// item ("- ") at the indentation of the list's first item. It can miss
// items (an item that is not a mapping, a list it does not recognize); the
// parser counts the parsed list too. It counts more items than the list
// has only when a quoted string spans lines that look like items. Its
// nesting depth never goes below that of the rules list, where it stops
// (FuzzYAMLCounter).
type yamlCounter struct {
	off      int // bytes of the text counted
	line     int // lines before off
	state    counterState
	n        int // items counted
	overLine int // line of the first item over maxRules, once over

	indent int // block style: the indentation of the items

	// Flow style: the nesting depth, the kinds of the outermost
	// containers ('[' or '{'), and the quote or comment the scan is in.
	depth   int
	outer   [3]byte
	quote   byte
	escaped bool
	comment bool
	prev    byte
}

type counterState int

const (
	seekKey   counterState = iota // looking for the rules key
	seekItem                      // looking for the first item of a block list
	blockList                     // counting the items of a block list
	flowList                      // counting the items of a flow list
	counted                       // the list ended, or is not one the counter reads
)

// over reports whether the counter found more than maxRules rules.
func (c *yamlCounter) over() bool { return c.overLine > 0 }

// feed counts the rules in data after what earlier calls counted: data is
// the text read so far, final once it is all of it. It counts whole lines.
func (c *yamlCounter) feed(data []byte, final bool) {
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

// scanLine counts the items on a line, with its line break (unless it is
// the last line), outside flow style.
func (c *yamlCounter) scanLine(chunk []byte) {
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
					c.state, c.prev = flowList, ' '
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

// isItem reports whether the text of a line starts a block list item.
func isItem(text []byte) bool {
	return len(text) > 0 && text[0] == '-' && (len(text) == 1 || text[1] == ' ' || text[1] == '\t')
}

// count counts an item on the current line.
func (c *yamlCounter) count() {
	c.n++
	if c.n > maxRules {
		c.overLine = c.line + 1
	}
}

// scanFlow counts the mappings opened directly in the flow rules list
// (depth 1) in chunk, following quotes and comments, until the list ends.
func (c *yamlCounter) scanFlow(chunk []byte) {
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
		case b == '"' || b == '\'' && isFlowBoundary(prev):
			c.quote = b
		case b == '#' && (prev == ' ' || prev == '\t'):
			c.comment = true
		case b == '[' || b == '{':
			if b == '{' && c.depth == 1 && c.outer[1] == '[' {
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
			if c.depth < 1 {
				c.state = counted
				return
			}
		}
	}
}

// isFlowBoundary reports whether a quote after b starts a quoted string in
// flow style, rather than being part of a plain one.
func isFlowBoundary(b byte) bool {
	return b == 0 || strings.IndexByte(" \t\n[]{},:", b) >= 0
}
