package httpadapter

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/sluicekit/sluice/core"
)

// The problem types of blocked responses: those
// draft-ietf-httpapi-ratelimit-headers-11 (section 10.2) asks IANA to
// register in the HTTP Problem Types registry.
const (
	// ProblemQuotaExceeded is the problem type of a 429 response: the
	// requests exceeded a quota policy.
	ProblemQuotaExceeded = "https://iana.org/assignments/http-problem-types#quota-exceeded"
	// ProblemReducedCapacity is the problem type of a 503 response: the
	// server cannot take the request now, whoever sends it.
	ProblemReducedCapacity = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
)

// Status returns the status of the default response to a request b
// blocked: 503 Service Unavailable when a concurrency rule (Kind
// concurrency) or an open circuit breaker (Kind breaker) blocked it, and 429
// Too Many Requests for every other rule, per-value in-flight limits
// (hotspot rules with algorithm concurrency) included.
//
// 429 says that the client sent too many requests: that is true of a rate
// limit, and of a per-value limit, which counts the requests of one user,
// tenant or address. A concurrency rule limits the requests in flight of a
// resource, whoever sends them: a client blocked by it may have sent one
// request in an hour. What it meets is a server at capacity, which is what
// 503 says (RFC 9110, section 15.6.4: "temporary overload"); load balancers
// and clients may retry a 503 on another instance, where the request may
// well pass, while a 429 tells a client to slow down, which is not what a
// busy server needs from a client that sends little. An open breaker says
// the same of a failing resource.
func Status(b *core.BlockedError) int {
	if b.Kind == core.KindConcurrency || b.Kind == core.KindBreaker {
		return http.StatusServiceUnavailable
	}
	return http.StatusTooManyRequests
}

// blockedPolicy returns the RateLimit fields' description of b.
func blockedPolicy(b *core.BlockedError) Policy {
	return Policy{Rule: b.Rule, Limit: b.Limit, Window: b.Window, Remaining: b.Remaining, Reset: b.RetryAfter}
}

// SetBlockedHeaders sets the fields of the default response to b on h:
// Retry-After, RateLimit-Policy and RateLimit (see WriteBlocked). A breaker
// is no quota policy: for a block by a breaker (b.Kind core.KindBreaker)
// only Retry-After is set, and RateLimit-Policy and RateLimit fields already
// on h (from an earlier middleware, say) are removed, so that the response
// claims no quota.
func SetBlockedHeaders(h http.Header, b *core.BlockedError) {
	if b.Kind == core.KindBreaker {
		delete(h, keyRateLimitPolicy)
		delete(h, keyRateLimit)
	} else {
		SetRateLimitFields(h, blockedPolicy(b))
	}
	if s := CeilSeconds(b.RetryAfter); s > 0 {
		h[keyRetryAfter] = []string{strconv.FormatInt(s, 10)}
	} else {
		delete(h, keyRetryAfter)
	}
}

// WriteBlocked writes the default response to a request b blocked:
//
//   - status Status(b): 429, or 503 for a concurrency rule or a breaker;
//   - Retry-After: b.RetryAfter in whole seconds, rounded up (at least 1 when
//     it is above 0, absent when it is 0, as for limits on requests in
//     flight, which free a slot whenever a request ends); for a breaker,
//     the time until it lets a probe through;
//   - RateLimit-Policy: "<rule>";q=<limit>;w=<window in seconds> (for a limit
//     on requests in flight: "<rule>";q=<limit>;qu="concurrent-requests");
//   - RateLimit: "<rule>";r=<remaining>;t=<seconds until the request would
//     pass> (no t for a limit on requests in flight). t and Retry-After are
//     the same number, so Retry-After is never earlier than t. Neither
//     field is sent for a breaker, which is no quota;
//   - Cache-Control: no-store;
//   - an application/problem+json body (RFC 9457) with members type,
//     title, status, detail, and the extension members rule, limit,
//     window (seconds, a JSON number, 0 for limits on requests in flight),
//     retryAfter (whole seconds, as in Retry-After, 0 when absent),
//     violated-policies (the rule, as the problem types of
//     draft-ietf-httpapi-ratelimit-headers define it) and, for hotspot
//     rules, param (the param the rule limits by, never its value). For a
//     breaker the type is temporary-reduced-capacity and the extension
//     members are rule, kind ("breaker") and retryAfter, and nothing else:
//     a breaker has no limit, window or quota policy to violate.
//
// The rule name is written as a structured-field String (AppendSFString)
// in the fields, and as a JSON string in the body.
func WriteBlocked(w http.ResponseWriter, b *core.BlockedError) {
	status := Status(b)
	body := AppendProblem(make([]byte, 0, 512+2*len(b.Rule)+len(b.Resource)), b, status)
	h := w.Header()
	SetBlockedHeaders(h, b)
	h[keyContentType] = []string{"application/problem+json"}
	h[keyContentLength] = []string{strconv.Itoa(len(body))}
	h[keyCacheControl] = []string{"no-store"}
	h[keyNoSniff] = []string{"nosniff"}
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client may be gone; nothing to do about it
}

// AppendProblem appends the problem+json body of the default response to b
// with the given status (see WriteBlocked): the members type, title, status,
// detail and rule, then, for a breaker (b.Kind core.KindBreaker), kind and
// retryAfter; for any other rule limit, window, retryAfter, param (hotspot
// rules) and violated-policies. The type is temporary-reduced-capacity for
// status 503 and quota-exceeded for any other.
func AppendProblem(dst []byte, b *core.BlockedError, status int) []byte {
	typ, title := ProblemQuotaExceeded, "Quota Exceeded"
	if status == http.StatusServiceUnavailable {
		typ, title = ProblemReducedCapacity, "Temporary Reduced Capacity"
	}
	dst = append(dst, `{"type":`...)
	dst = AppendJSONString(dst, typ)
	dst = append(dst, `,"title":`...)
	dst = AppendJSONString(dst, title)
	dst = append(dst, `,"status":`...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, `,"detail":`...)
	dst = AppendJSONString(dst, Detail(b))
	dst = append(dst, `,"rule":`...)
	dst = AppendJSONString(dst, b.Rule)
	if b.Kind == core.KindBreaker {
		dst = append(dst, `,"kind":"breaker","retryAfter":`...)
		dst = strconv.AppendInt(dst, CeilSeconds(b.RetryAfter), 10)
		return append(dst, '}')
	}
	dst = append(dst, `,"limit":`...)
	dst = strconv.AppendInt(dst, b.Limit, 10)
	dst = append(dst, `,"window":`...)
	dst = strconv.AppendFloat(dst, max(b.Window, 0).Seconds(), 'f', -1, 64)
	dst = append(dst, `,"retryAfter":`...)
	dst = strconv.AppendInt(dst, CeilSeconds(b.RetryAfter), 10)
	if b.Param != "" {
		dst = append(dst, `,"param":`...)
		dst = AppendJSONString(dst, b.Param)
	}
	dst = append(dst, `,"violated-policies":[`...)
	dst = AppendJSONString(dst, b.Rule)
	return append(dst, "]}"...)
}

// Detail returns the problem detail of a request b blocked, a sentence for
// people: "GET /hello allows 5 requests per 1s; retry in 1s", or for a
// breaker "GET /fail is failing: circuit breaker \"fail-breaker\" is
// open; retry in 5s" (the retry time is Retry-After's, and is left out when
// b.RetryAfter is 0). A half-open breaker whose probes are all out is
// described as open too: for the client it is.
func Detail(b *core.BlockedError) string {
	if b.Kind == core.KindBreaker {
		d := b.Resource + ` is failing: circuit breaker "` + b.Rule + `" is open`
		if s := CeilSeconds(b.RetryAfter); s > 0 {
			d += "; retry in " + strconv.FormatInt(s, 10) + "s"
		}
		return d
	}
	per := ""
	if b.Param != "" {
		per = " for each " + b.Param + " value"
	}
	limit := strconv.FormatInt(b.Limit, 10)
	if b.Window <= 0 {
		return b.Resource + " allows " + limit + " requests in flight" + per + "; retry when one ends"
	}
	retry := ""
	if s := CeilSeconds(b.RetryAfter); s > 0 {
		retry = "; retry in " + strconv.FormatInt(s, 10) + "s"
	}
	return b.Resource + " allows " + limit + " requests per " + b.Window.String() + per + retry
}

// AppendJSONString appends s as a JSON string. Quotes, backslashes and
// control characters are escaped, as are U+2028 and U+2029; invalid UTF-8
// becomes U+FFFD, so the result is always valid JSON.
func AppendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// errInternal is the body of WriteEnterError.
const errInternal = `{"type":"about:blank","title":"Internal Server Error","status":500}`

// WriteEnterError writes the response to a request whose Enter failed with
// an error that is neither a block nor the end of the request's context: a
// 500 problem without details (the error is the server's business, not the
// client's). It does not happen with a valid Guard.
func WriteEnterError(w http.ResponseWriter) {
	h := w.Header()
	h[keyContentType] = []string{"application/problem+json"}
	h[keyContentLength] = []string{strconv.Itoa(len(errInternal))}
	h[keyCacheControl] = []string{"no-store"}
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write([]byte(errInternal))
}

// Rejection sorts the error of a failed Enter: the *core.BlockedError when a
// rule blocked the request; gone true when the request's context ended
// (the client disconnected, or a deadline passed, while the request waited
// for a leaky-bucket turn), in which case nothing is to be written; neither
// for any other error.
func Rejection(ctx context.Context, err error) (b *core.BlockedError, gone bool) {
	if b, ok := err.(*core.BlockedError); ok {
		return b, false
	}
	if errors.As(err, &b) {
		return b, false
	}
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, true
	}
	return nil, false
}
