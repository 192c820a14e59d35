package resname

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicekit/sluice/core/internal/rulefields"
)

// methods are the methods of resource names (see Methods).
var methods = [...]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE", "OTHER"}

// Methods returns the methods of resource names: the standard HTTP methods,
// and OTHER, under which the extractors name every other method. The slice
// is new.
func Methods() []string { return slices.Clone(methods[:]) }

// Canonical returns the canonical form of a rule's Resource, the
// form resource names take (see package extractors), or an error saying
// what is wrong and what to write instead: what core's package doc (Rules)
// lists as normalized or refused. Names with no '/' first and no method
// are custom names, kept as they are.
func Canonical(res string) (string, error) {
	res = strings.ToValidUTF8(res, "\uFFFD") // as a Guard names resources
	fields := strings.Fields(res)
	if len(fields) == 0 {
		return res, nil // a rule's validation requires a resource
	}
	if strings.HasPrefix(fields[0], "/") {
		if len(fields) > 1 {
			return "", fmt.Errorf("template must not contain spaces, and a method goes first, got %s; write e.g. %s", rulefields.Quote(res), rulefields.Quote("GET "+fields[0]))
		}
		return canonicalTemplate(fields[0], "")
	}
	m := strings.ToUpper(fields[0]) // the method, if it is one
	isMethod := m == "*" || slices.Contains(methods[:], m)
	tmpl := fields[len(fields)-1]
	switch {
	case len(fields) == 1:
		return res, nil // a custom name ("checkout") or a glob ("*")
	case !isMethod && !strings.HasPrefix(fields[1], "/"):
		return res, nil // a custom name ("db query")
	case !isMethod:
		return "", fmt.Errorf("method must be %s or * (every method), got %s in %s", strings.Join(methods[:], ", "), rulefields.Quote(fields[0]), rulefields.Quote(res))
	case !strings.HasPrefix(fields[1], "/") && !strings.HasPrefix(fields[1], "*"):
		if len(fields) > 2 || !strings.ContainsAny(tmpl, "/{:") {
			return res, nil // a custom name ("get user")
		}
		return "", fmt.Errorf("template must start with '/', got %s; write %s", rulefields.Quote(res), rulefields.Quote(m+" /"+tmpl))
	case len(fields) > 2:
		return "", fmt.Errorf("template must not contain spaces, got %s; write %s", rulefields.Quote(res), rulefields.Quote(m+" "+strings.Join(fields[1:], "")))
	}
	return canonicalTemplate(fields[1], m)
}

// canonicalTemplate returns method and the canonical form of template tmpl
// (see Canonical), or an error.
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
				fix = "write " + rulefields.Quote(join(strings.ReplaceAll(tmpl, "**", "*")))
			}
			return "", fmt.Errorf("uses the glob syntax %s, which sluice does not support (a glob has only '*'), got %s; %s", rulefields.Quote(bad), rulefields.Quote(join(tmpl)), fix)
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
			return "", fmt.Errorf("wildcard must be a whole segment {name}, a last {name...} or a last {$}, got %s in %s", rulefields.Quote(seg), rulefields.Quote(join(tmpl)))
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

// isParamName reports whether s is a route parameter name: letters, digits, '_'.
func isParamName(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_')
	})
}

// IsHTTP reports whether res, a resource in canonical form, names HTTP
// routes: "METHOD TEMPLATE", or a template alone that is not a gRPC full
// method ("/pkg.Service/Method": two segments, a '.' in the first).
func IsHTTP(res string) bool {
	if strings.HasPrefix(res, "/") {
		first, rest, _ := strings.Cut(res[1:], "/")
		return !(strings.Contains(first, ".") && rest != "" && !strings.Contains(rest, "/"))
	}
	m, tmpl, ok := strings.Cut(res, " ")
	return ok && strings.HasPrefix(tmpl, "/") && (m == "*" || slices.Contains(methods[:], m))
}
