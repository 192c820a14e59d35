package adaptertest

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Item is one member of a structured-field List (RFC 9651) as the
// RateLimit fields use them: a String naming a policy, and its parameters,
// whose values are int64 (Integer), string (String) or Token.
type Item struct {
	Name   string
	Params map[string]any
}

// Token is a structured-field Token parameter value.
type Token string

// ParseList parses a structured-field List whose members are Strings with
// parameters of Integer, String, Token or Boolean values, strictly: any
// other syntax is an error, as a conforming parser would reject it.
func ParseList(s string) ([]Item, error) {
	p := &sfParser{s: s}
	var items []Item
	p.skipSP()
	for {
		it, err := p.item()
		if err != nil {
			return nil, err
		}
		items = append(items, it)
		p.skipOWS()
		if p.eof() {
			return items, nil
		}
		if p.s[p.i] != ',' {
			return nil, p.errf("want ',' between members")
		}
		p.i++
		p.skipOWS()
		if p.eof() {
			return nil, p.errf("trailing comma")
		}
	}
}

// Decode percent-decodes a policy name as the adapters write names with
// bytes outside printable ASCII.
func Decode(name string) (string, error) {
	return url.PathUnescape(name)
}

type sfParser struct {
	s string
	i int
}

func (p *sfParser) eof() bool { return p.i >= len(p.s) }

func (p *sfParser) errf(format string, args ...any) error {
	return fmt.Errorf("structured field %q at %d: %s", p.s, p.i, fmt.Sprintf(format, args...))
}

func (p *sfParser) skipSP() {
	for !p.eof() && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfParser) skipOWS() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *sfParser) item() (Item, error) {
	name, err := p.str()
	if err != nil {
		return Item{}, err
	}
	it := Item{Name: name, Params: map[string]any{}}
	for !p.eof() && p.s[p.i] == ';' {
		p.i++
		p.skipSP()
		key, err := p.key()
		if err != nil {
			return Item{}, err
		}
		if _, dup := it.Params[key]; dup {
			return Item{}, p.errf("duplicate parameter %q", key)
		}
		var v any = true
		if !p.eof() && p.s[p.i] == '=' {
			p.i++
			if v, err = p.bare(); err != nil {
				return Item{}, err
			}
		}
		it.Params[key] = v
	}
	return it, nil
}

func (p *sfParser) key() (string, error) {
	start := p.i
	for !p.eof() {
		c := p.s[p.i]
		if c >= 'a' && c <= 'z' || c == '*' || p.i > start && (c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			p.i++
			continue
		}
		break
	}
	if p.i == start {
		return "", p.errf("want a parameter key")
	}
	return p.s[start:p.i], nil
}

func (p *sfParser) bare() (any, error) {
	if p.eof() {
		return nil, p.errf("want a value")
	}
	switch c := p.s[p.i]; {
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		p.i++
		for !p.eof() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		digits := strings.TrimPrefix(p.s[start:p.i], "-")
		if digits == "" || len(digits) > 15 {
			return nil, p.errf("bad integer %q", p.s[start:p.i])
		}
		if !p.eof() && p.s[p.i] == '.' {
			return nil, p.errf("decimals are not expected here")
		}
		return strconv.ParseInt(p.s[start:p.i], 10, 64)
	case c == '?':
		if p.i+1 < len(p.s) && (p.s[p.i+1] == '0' || p.s[p.i+1] == '1') {
			p.i += 2
			return p.s[p.i-1] == '1', nil
		}
		return nil, p.errf("bad boolean")
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '*':
		start := p.i
		p.i++
		for !p.eof() && isTChar(p.s[p.i]) {
			p.i++
		}
		return Token(p.s[start:p.i]), nil
	}
	return nil, p.errf("unexpected %q", p.s[p.i])
}

func isTChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~:/", c) >= 0
}

func (p *sfParser) str() (string, error) {
	if p.eof() || p.s[p.i] != '"' {
		return "", p.errf("want a String")
	}
	p.i++
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.eof() || p.s[p.i] != '"' && p.s[p.i] != '\\' {
				return "", p.errf("bad escape")
			}
			b.WriteByte(p.s[p.i])
			p.i++
		case c == '"':
			return b.String(), nil
		case c < 0x20 || c > 0x7e:
			return "", p.errf("byte %#x not allowed in a String", c)
		default:
			b.WriteByte(c)
		}
	}
	return "", p.errf("unterminated String")
}
