package core

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// pattern is a compiled resource pattern: an exact name, or a glob in which
// each '*' matches any run of characters. A pattern that starts with '/'
// (a template without a method, or a gRPC full method) also matches every
// name made of a method, a space and a name it matches.
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
	if p.matchName(name) {
		return true
	}
	if !p.anyMethod {
		return false
	}
	i := strings.IndexByte(name, ' ')
	return i > 0 && p.matchName(name[i+1:])
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

// resourceMethods are the methods of resource names: the standard HTTP
// methods, and OTHER, under which the extractors name every other method.
var resourceMethods = [...]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE", "OTHER"}

// canonicalResource returns the canonical form of a rule's Resource, the
// form resource names take (see package extractors), or an error saying
// what is wrong and what to write instead. An HTTP resource is "METHOD
// TEMPLATE": METHOD is a standard method, OTHER or the glob '*', and
// TEMPLATE is a route template in net/http's ServeMux syntax ({name},
// {name...}, {$}) in which '*' is a glob. A template alone ("/items/{id}",
// or a gRPC full method "/pkg.Service/Method") matches under every method.
// Other names (no '/' first, no method) are custom names, kept as they are.
//
// Normalized when the meaning is unambiguous: a lowercase method
// ("get"), spaces around and between method and template, gin and echo
// parameters (":id" -> "{id}") and a last segment "*name" (a gin or echo
// catch-all -> "{name...}"). Refused: other methods, spaces inside a
// template, glob syntax sluice does not have ('?', '[', ']', "**"), and
// braces that are not a whole segment {name}, a last {name...} or {$}.
func canonicalResource(res string) (string, error) {
	fields := strings.Fields(res)
	if len(fields) == 0 {
		return res, nil // NormalizeRules requires a resource
	}
	if strings.HasPrefix(fields[0], "/") {
		if len(fields) > 1 {
			return "", fmt.Errorf("template must not contain spaces, and a method goes first, got %s; write e.g. %s", quote(res), quote("GET "+fields[0]))
		}
		return canonicalTemplate(fields[0], "")
	}
	m, isMethod := canonicalMethod(fields[0])
	tmpl := fields[len(fields)-1]
	switch {
	case len(fields) == 1:
		return res, nil // a custom name ("checkout") or a glob ("*")
	case !isMethod && !strings.HasPrefix(fields[1], "/"):
		return res, nil // a custom name ("db query")
	case !isMethod:
		return "", fmt.Errorf("method must be %s or * (every method), got %s in %s", strings.Join(resourceMethods[:], ", "), quote(fields[0]), quote(res))
	case !strings.HasPrefix(fields[1], "/") && !strings.HasPrefix(fields[1], "*"):
		if len(fields) > 2 || !strings.ContainsAny(tmpl, "/{:") {
			return res, nil // a custom name ("get user")
		}
		return "", fmt.Errorf("template must start with '/', got %s; write %s", quote(res), quote(m+" /"+tmpl))
	case len(fields) > 2:
		return "", fmt.Errorf("template must not contain spaces, got %s; write %s", quote(res), quote(m+" "+strings.Join(fields[1:], "")))
	}
	return canonicalTemplate(fields[1], m)
}

// canonicalMethod returns the method of a resource in upper case, and
// whether it is one (or '*').
func canonicalMethod(m string) (string, bool) {
	if m == "*" {
		return m, true
	}
	up := strings.ToUpper(m)
	for _, std := range resourceMethods {
		if up == std {
			return up, true
		}
	}
	return up, false
}

// canonicalTemplate returns method and the canonical form of template tmpl
// (see canonicalResource), or an error.
func canonicalTemplate(tmpl, method string) (string, error) {
	join := func(t string) string {
		if method == "" {
			return t
		}
		return method + " " + t
	}
	for _, bad := range []string{"**", "?", "[", "]"} {
		if strings.Contains(tmpl, bad) {
			fix := "use '*', which matches any run of characters, '/' included"
			if bad == "**" {
				fix = "write " + quote(join(strings.ReplaceAll(tmpl, "**", "*")))
			}
			return "", fmt.Errorf("uses the glob syntax %s, which sluice does not support (a glob has only '*'), got %s; %s", quote(bad), quote(join(tmpl)), fix)
		}
	}
	segs := strings.Split(tmpl, "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		switch {
		case len(seg) > 1 && seg[0] == ':' && isParamName(seg[1:]):
			segs[i] = "{" + seg[1:] + "}"
		case last && len(seg) > 1 && seg[0] == '*' && isParamName(seg[1:]):
			segs[i] = "{" + seg[1:] + "...}"
		case strings.ContainsAny(seg, "{}") && !isWildcard(seg, last):
			return "", fmt.Errorf("wildcard must be a whole segment {name}, a last {name...} or a last {$}, got %s in %s", quote(seg), quote(join(tmpl)))
		}
	}
	return join(strings.Join(segs, "/")), nil
}

// isWildcard reports whether seg is a ServeMux wildcard: {name}, or in the
// last segment {name...} (with echo's unnamed catch-all {*...}) or {$}.
func isWildcard(seg string, last bool) bool {
	if len(seg) < 3 || seg[0] != '{' || seg[len(seg)-1] != '}' {
		return false
	}
	name := seg[1 : len(seg)-1]
	if rest, ok := strings.CutSuffix(name, "..."); ok {
		return last && (isParamName(rest) || rest == "*")
	}
	return isParamName(name) || last && name == "$"
}

// isParamName reports whether s is a route parameter name: letters, digits
// and '_'.
func isParamName(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

// maxLoggedResources bounds the rules a log record of normalized resources
// lists.
const maxLoggedResources = 20

// logNormalized logs at Info, in one record, the rules of rules whose
// resource norm (their normalized copy) writes in canonical form, so that
// the rules file can be corrected; it logs nothing when there are none.
func logNormalized(log *slog.Logger, rules, norm []Rule) {
	var changed []string
	n := 0
	for i := range rules {
		if rules[i].Resource == norm[i].Resource {
			continue
		}
		if n++; len(changed) < maxLoggedResources {
			changed = append(changed, fmt.Sprintf("rules[%d] (%s): %s is %s", i, norm[i].Name, quote(rules[i].Resource), quote(norm[i].Resource)))
		}
	}
	if n == 0 {
		return
	}
	attrs := []slog.Attr{slog.Any("rules", changed)}
	if n > len(changed) {
		attrs = append(attrs, slog.Int("more", n-len(changed)))
	}
	log.LogAttrs(context.Background(), slog.LevelInfo, "sluice: rule resources normalized to their canonical form; write them so in the rules", attrs...)
}
