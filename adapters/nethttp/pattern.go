package sluicehttp

import (
	"strings"

	"github.com/sluicekit/sluice/adapters/httpadapter"
)

// patternValue returns the value that the wildcard name of the ServeMux
// pattern takes in path, the request's escaped path, as the ServeMux gives
// it to r.PathValue: a {name} wildcard takes its segment, a {name...}
// wildcard the rest of the path, both unescaped. pattern is one the path
// matched, as router.Handler returns it ("GET /items/{id}",
// "example.com/files/{path...}"); false when it has no such wildcard.
func patternValue(pattern, path, name string) (string, bool) {
	i := strings.IndexByte(pattern, '/') // after the method and host, which have no '/'
	if i < 0 {
		return "", false
	}
	pat := pattern[i:]
	for len(pat) > 0 && pat[0] == '/' && len(path) > 0 && path[0] == '/' {
		pat, path = pat[1:], path[1:]
		pseg, prest := splitSegment(pat)
		seg, rest := splitSegment(path)
		if len(pseg) > 2 && pseg[0] == '{' && pseg[len(pseg)-1] == '}' {
			wild := pseg[1 : len(pseg)-1]
			if multi, ok := strings.CutSuffix(wild, "..."); ok {
				if multi == name {
					return httpadapter.PathUnescape(path), true
				}
				return "", false
			}
			if wild == name {
				return httpadapter.PathUnescape(seg), true
			}
		}
		pat, path = prest, rest
	}
	return "", false
}

// splitSegment splits s at its first '/': the segment before it, and the
// rest from it ("" when there is none).
func splitSegment(s string) (seg, rest string) {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}
