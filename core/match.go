package core

import "strings"

// pattern is a compiled Rule.Resource: an exact name, or a glob; one that
// starts with '/' also matches it after any method and a space.
type pattern struct {
	exact     string
	parts     []string // glob: the literal parts around the stars; nil for exact
	anyMethod bool
}

func compilePattern(s string) pattern {
	p := pattern{exact: s, anyMethod: strings.HasPrefix(s, "/")}
	if strings.Contains(s, "*") {
		p.parts = strings.Split(s, "*")
	}
	return p
}

// match reports whether name matches p.
func (p pattern) match(name string) bool {
	method, rest, ok := strings.Cut(name, " ")
	return p.matchName(name) || p.anyMethod && ok && method != "" && p.matchName(rest)
}

// matchName reports whether name matches p as a whole.
func (p pattern) matchName(name string) bool {
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
