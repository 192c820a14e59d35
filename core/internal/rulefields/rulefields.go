// Package rulefields is what package core and package rulesfile share about
// the fields of a rule: their names in a rules file, in the order problems
// are reported, how problems quote values, and the problem of one field
// (FieldError) that the limiters' validation returns.
package rulefields

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Names returns the names in a rules file (json names) of the fields of
// the struct type t, in order: Rule's, in the order problems are reported.
func Names(t reflect.Type) []string {
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}

// Rank returns the position of field among names (see Names): 0 for a whole
// rule's problem (no field), then the fields in order, then other names.
func Rank(names []string, field string) int {
	if field == "" {
		return 0
	}
	if i := slices.Index(names, field); i >= 0 {
		return i + 1
	}
	return len(names) + 1
}

// Quote returns s quoted as a Go string, shortened to its first 64 bytes
// and "..." when longer, for problems.
func Quote[T ~string](t T) string {
	s := string(t)
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(Truncate(s, max)) + "..."
}

// Truncate returns the longest prefix of s of at most n bytes that does not
// cut a UTF-8 sequence.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// FieldError is a problem with one field of a limiter's configuration.
// Field is the name the rules file uses.
type FieldError struct {
	Field string
	Msg   string
}

// Error returns the field name and the message: "limit must be >= 0, got -5".
func (e *FieldError) Error() string { return e.Field + " " + e.Msg }

// Join returns errs joined into one error (errors.Join), nil when none.
func Join(errs []*FieldError) error {
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return errors.Join(all...)
}

// paramKinds are the param kinds written KIND:NAME; bareParams are the
// params written as one word. Neither is ever modified.
var (
	paramKinds = [...]string{"header", "query", "cookie", "path", "metadata"}
	bareParams = [...]string{"ip", "method", "host", "peer"}
)

// MaxParamLen bounds a param's spec: a header, query, cookie, path or
// metadata name, or a custom param's.
const MaxParamLen = 256

// ParamProblem returns what is wrong with param as the Param or Priority
// of a rule, or "" when it is well formed (see core.ValidateParam).
func ParamProblem(param string) string {
	const want = "(want header, query, cookie, path or metadata)"
	kind, name, found := strings.Cut(param, ":")
	switch {
	case param == "":
		return "is required for kind hotspot, e.g. header:X-User-ID or ip"
	case len(param) > MaxParamLen:
		return fmt.Sprintf("must be at most %d bytes, got %d bytes: %s", MaxParamLen, len(param), Quote(param))
	case !found && slices.Contains(bareParams[:], param):
		return ""
	case !found && IsIdentifier(param):
		return "" // a custom extractor
	case !found:
		return fmt.Sprintf("must be KIND:NAME %s, ip, method, host, peer, or a custom extractor name of letters, digits, '_', '.' and '-', got %s", want, Quote(param))
	case !slices.Contains(paramKinds[:], kind):
		return fmt.Sprintf("has unknown kind %s in %s %s", Quote(kind), Quote(param), want)
	case name == "":
		return fmt.Sprintf("%s needs a name after the colon, e.g. %s:X-User-ID", Quote(param), kind)
	case strings.ContainsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }):
		return fmt.Sprintf("name must not contain spaces, format or control characters, got %s", Quote(param))
	}
	// Header, cookie and metadata names are HTTP tokens (RFC 9110): no
	// request carries another, and a rule naming one would limit nobody.
	const tokenChars = "!#$%&'*+-.^_`|~"
	if i := strings.IndexFunc(name, func(r rune) bool {
		return r >= utf8.RuneSelf || !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(tokenChars, r)
	}); i >= 0 && kind != "query" && kind != "path" {
		r, _ := utf8.DecodeRuneInString(name[i:])
		return fmt.Sprintf("name must be ASCII letters, digits and %s (no %s name has another character), got %s, with %U", tokenChars, kind, Quote(param), r)
	}
	return ""
}

// IsIdentifier reports whether s matches ^[A-Za-z][A-Za-z0-9_.-]*$.
func IsIdentifier(s string) bool {
	for i, c := range []byte(s) {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		other := c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
		if !letter && (i == 0 || !other) {
			return false
		}
	}
	return s != ""
}

// MaxProblems bounds the problems a rule set or rules file reports, and the
// memory they take: one with more reports the first MaxProblems, then
// MoreProblems.
const MaxProblems = 1000

// MoreProblems is the message of the problem (rule index -1) that ends a
// list cut at MaxProblems.
func MoreProblems() string {
	return fmt.Sprintf("there are more problems, not listed: at most %d are", MaxProblems)
}
