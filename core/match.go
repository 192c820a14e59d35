package core

import "strings"

// pattern is a compiled resource pattern: an exact name, or a glob in which
// each '*' matches any run of characters.
type pattern struct {
	exact string
	parts []string // glob: the literal parts around the stars; nil for exact
}

func compilePattern(s string) pattern {
	if !strings.Contains(s, "*") {
		return pattern{exact: s}
	}
	return pattern{parts: strings.Split(s, "*")}
}

// match reports whether name matches p.
func (p pattern) match(name string) bool {
	if p.parts == nil {
		return name == p.exact
	}
	first, last := p.parts[0], p.parts[len(p.parts)-1]
	if len(name) < len(first)+len(last) || !strings.HasPrefix(name, first) || !strings.HasSuffix(name, last) {
		return false
	}
	rest := name[len(first) : len(name)-len(last)]
	for _, mid := range p.parts[1 : len(p.parts)-1] {
		i := strings.Index(rest, mid)
		if i < 0 {
			return false
		}
		rest = rest[i+len(mid):]
	}
	return true
}

// MatchResource reports whether the resource name matches pattern as a
// rule's Resource does: exactly, or as a glob in which each '*' matches any
// run of characters, '/' included.
func MatchResource(pattern, name string) bool {
	return compilePattern(pattern).match(name)
}
