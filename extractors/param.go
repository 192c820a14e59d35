package extractors

import (
	"fmt"
	"net/textproto"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sluicekit/sluice/core"
)

// Param kinds, the Kind of a parsedParam.
const (
	kindHeader   = "header"   // header:NAME, a request header (gRPC: metadata)
	kindMetadata = "metadata" // metadata:NAME, gRPC metadata (HTTP: a request header)
	kindQuery    = "query"    // query:NAME, a URL query parameter
	kindCookie   = "cookie"   // cookie:NAME, a cookie
	kindPath     = "path"     // path:NAME, a route parameter
	kindIP       = "ip"       // ip, the client IP
	kindPeer     = "peer"     // peer, the socket peer IP
	kindMethod   = "method"   // method, the HTTP method or gRPC full method
	kindHost     = "host"     // host, the HTTP Host or gRPC :authority
	kindCustom   = "custom"   // NAME, a custom param registered in Go
)

// parsedParam is a parsed param spec: the request value a hotspot rule
// limits by. Kind is one of the kind constants; Name is the header,
// metadata, query, cookie, path parameter or custom param name as written
// (empty for ip, peer, method and host).
type parsedParam struct {
	Kind, Name string
}

// String returns the spec of p, as parseParam reads it.
func (p parsedParam) String() string {
	switch p.Kind {
	case kindCustom:
		return p.Name
	case kindIP, kindPeer, kindMethod, kindHost:
		return p.Kind
	}
	return p.Kind + ":" + p.Name
}

// parseParam parses a param spec as rules write it: KIND:NAME for kinds
// header, metadata, query, cookie and path (NAME non-empty, without spaces or
// control characters), the words ip, peer, method and host, or a custom
// param name: a letter, then letters, digits, '_', '.' or '-'. The error
// names the bad spec. It accepts exactly what core accepts in Rule.Param.
func parseParam(spec string) (parsedParam, error) {
	if err := core.ValidateParam(spec); err != nil {
		return parsedParam{}, fmt.Errorf("extractors: %w", err)
	}
	kind, name, found := strings.Cut(spec, ":")
	switch {
	case found:
		return parsedParam{Kind: kind, Name: name}, nil
	case spec == kindIP, spec == kindPeer, spec == kindMethod, spec == kindHost:
		return parsedParam{Kind: spec}, nil
	}
	return parsedParam{Kind: kindCustom, Name: spec}, nil
}

// truncate returns the longest prefix of s of at most n bytes that does not
// cut a UTF-8 sequence (or, when s is not valid UTF-8 there, n-3 bytes at
// least).
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i]
		}
	}
	return s[:n]
}

// spec is a parsed param with the lookup keys its kind needs, computed once
// per distinct param string and cached by the Extractor.
type spec struct {
	param  string // the spec as given
	code   kindCode
	name   string // as written
	header string // canonical MIME header key of name (header, metadata)
	md     string // lower-cased name (header, metadata)
	bin    bool   // md ends in "-bin": binary metadata, never split on commas
}

// kindCode is a param kind as a small integer, which Param switches on for
// every value read.
type kindCode uint8

const (
	codeInvalid kindCode = iota // a spec that did not parse: absent
	codeHeader                  // header and metadata
	codeQuery
	codeCookie
	codePath
	codeIP
	codePeer
	codeMethod
	codeHost
	codeCustom
)

// codeOf returns the code of a Kind constant.
func codeOf(kind string) kindCode {
	switch kind {
	case kindHeader, kindMetadata:
		return codeHeader
	case kindQuery:
		return codeQuery
	case kindCookie:
		return codeCookie
	case kindPath:
		return codePath
	case kindIP:
		return codeIP
	case kindPeer:
		return codePeer
	case kindMethod:
		return codeMethod
	case kindHost:
		return codeHost
	case kindCustom:
		return codeCustom
	}
	return codeInvalid
}

// newSpec parses param into a spec; an invalid param yields a spec of code
// codeInvalid, which reads as absent.
func newSpec(param string) *spec {
	p, err := parseParam(param)
	if err != nil {
		return &spec{param: param}
	}
	s := &spec{param: param, code: codeOf(p.Kind), name: p.Name}
	if p.Kind == kindHeader || p.Kind == kindMetadata {
		s.header = textproto.CanonicalMIMEHeaderKey(p.Name)
		s.md = strings.ToLower(p.Name)
		s.bin = strings.HasSuffix(s.md, "-bin")
	}
	return s
}

// spec returns the parsed spec of param, from the cache when it is there.
// The first few specs are also kept in a list that is searched before the
// map: rules name few params, and comparing a handful of strings (the same
// strings each time, so equal by pointer) is cheaper than hashing one.
func (x *Extractor) spec(param string) *spec {
	if hot := x.hot.Load(); hot != nil {
		for _, s := range *hot {
			if s.param == param {
				return s
			}
		}
	}
	if s, ok := x.params.load(param); ok {
		return s
	}
	s := x.params.store(param, newSpec(param))
	x.mu.Lock()
	defer x.mu.Unlock()
	var hot []*spec
	if old := x.hot.Load(); old != nil {
		hot = *old
	}
	if len(hot) < maxHotParams && !slices.Contains(hot, s) {
		hot = append(slices.Clip(hot), s)
		x.hot.Store(&hot)
	}
	return s
}
