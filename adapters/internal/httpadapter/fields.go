package httpadapter

import (
	"net/http"
	"strconv"
	"time"
)

// Header keys in canonical form, so the headers are set without
// canonicalizing them on every response ("RateLimit-Policy" is
// "Ratelimit-Policy" in Go's canonical form; field names are
// case-insensitive on the wire).
const (
	keyRetryAfter      = "Retry-After"
	keyRateLimitPolicy = "Ratelimit-Policy"
	keyRateLimit       = "Ratelimit"
	keyContentType     = "Content-Type"
	keyContentLength   = "Content-Length"
	keyCacheControl    = "Cache-Control"
	keyNoSniff         = "X-Content-Type-Options"
)

// maxSFInteger is the largest Integer a structured field can carry
// (RFC 9651, section 3.3.1: at most 15 digits).
const maxSFInteger = 999_999_999_999_999

// CeilSeconds returns d in whole seconds, rounded up: 0 for d <= 0, and at
// least 1 for any d > 0, so that a time given in seconds is never earlier
// than the real one.
func CeilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}

// appendSFInteger appends n as a structured-field Integer, clamped to
// [0, maxSFInteger]: every integer the RateLimit fields carry is
// non-negative.
func appendSFInteger(dst []byte, n int64) []byte {
	return strconv.AppendInt(dst, min(max(n, 0), maxSFInteger), 10)
}

// AppendSFString appends s as a structured-field String (RFC 9651, section
// 3.3.3): a double-quoted string of printable ASCII in which '"' and '\'
// are escaped with a backslash. A String cannot carry other bytes, and rule
// names are written by users, so every byte outside printable ASCII (0x20 to
// 0x7E: control characters, and each byte of a UTF-8 sequence), and '%'
// itself, is written as %XX (uppercase hex), as in a URL: a client can
// recover the exact name with a percent-decoder, two names never collide, and
// no CR or LF can reach a header.
func AppendSFString(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '%' || c < 0x20 || c > 0x7e:
			dst = append(dst, '%', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// Policy describes one limit for the RateLimit fields: the rule, its quota
// and window (0 for a limit on requests in flight), the quota left and the
// time until it is restored.
type Policy struct {
	Rule      string
	Limit     int64
	Window    time.Duration
	Remaining int64
	Reset     time.Duration
}

// AppendPolicyField appends the RateLimit-Policy field value of p: a quota
// policy item named by the rule, with q the limit and w the window in whole
// seconds, rounded up and at least 1 (the field has no sub-second windows,
// so a sub-second window is advertised as a stricter policy: the same quota
// over a longer window). A limit on requests in flight has no window; it is
// advertised with the quota unit "concurrent-requests".
func AppendPolicyField(dst []byte, p Policy) []byte {
	dst = AppendSFString(dst, p.Rule)
	dst = append(dst, ";q="...)
	dst = appendSFInteger(dst, p.Limit)
	if p.Window <= 0 {
		return append(dst, `;qu="concurrent-requests"`...)
	}
	dst = append(dst, ";w="...)
	return appendSFInteger(dst, max(CeilSeconds(p.Window), 1))
}

// AppendLimitField appends the RateLimit field value of p: a service limit
// item named by the rule, with r the quota left and, for a windowed limit,
// t the seconds until the quota is restored, rounded up. A limit on requests
// in flight has no t: a slot frees whenever a request ends.
func AppendLimitField(dst []byte, p Policy) []byte {
	dst = AppendSFString(dst, p.Rule)
	dst = append(dst, ";r="...)
	dst = appendSFInteger(dst, p.Remaining)
	if p.Window <= 0 {
		return dst
	}
	dst = append(dst, ";t="...)
	return appendSFInteger(dst, CeilSeconds(p.Reset))
}

// SetRateLimitFields sets the RateLimit-Policy and RateLimit fields of h to
// describe p, replacing any already set.
func SetRateLimitFields(h http.Header, p Policy) {
	buf := make([]byte, 0, 2*len(p.Rule)+64)
	buf = AppendPolicyField(buf, p)
	n := len(buf)
	buf = AppendLimitField(buf, p)
	s := string(buf)
	h[keyRateLimitPolicy] = []string{s[:n]}
	h[keyRateLimit] = []string{s[n:]}
}
