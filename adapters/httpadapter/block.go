package httpadapter

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluicekit/sluice/core"
)

// problemWillNotPass is the problem type of a 403 response to a request
// that can never pass (core.BlockedError.Never): a rule's limit for it is
// 0, or below the permits it asks for. Retrying cannot help. The other
// problem types are the block classes' (core.BlockClass).
const problemWillNotPass = "https://github.com/sluicekit/sluice#request-will-not-pass"

// Status returns the status of the default response to a request b
// blocked: 403 Forbidden when the request can never pass (b.Never), else
// its block class's (b.Class): 503 Service Unavailable when a concurrency
// rule, an adaptive limit, a system rule or an open circuit breaker
// blocked it, and 429 Too Many Requests for every other rule, per-value
// in-flight limits (hotspot rules with algorithm concurrency) included.
//
// Why each status: package sluicehttp's documentation (the adapters share
// this choice).
func Status(b *core.BlockedError) int {
	if b.Never {
		return http.StatusForbidden
	}
	return b.Class().Status
}

// setBlockedHeaders sets the fields of the default response to b on h:
// Retry-After, RateLimit-Policy and RateLimit (see WriteBlocked). A breaker
// or a system rule is no quota policy: for a block by one (b.Class().Quota
// false) only Retry-After is set, and RateLimit-Policy and RateLimit fields already
// on h (from an earlier middleware, say) are removed, so that the response
// claims no quota. A request that can never pass (b.Never) gets none of the
// three: nothing that reads as a time to come back.
func setBlockedHeaders(h http.Header, b *core.BlockedError) {
	switch {
	case b.Never || noQuota(b):
		setRateLimitFields(h)
	case len(b.Policies) > 0:
		setRateLimitFields(h, b.Policies...)
	default: // a BlockedError made outside core
		setRateLimitFields(h, core.Quota{Rule: b.Rule, Limit: b.Limit, Window: b.Window, Remaining: b.Remaining, Reset: b.RetryAfter, Blocked: true})
	}
	if s := ceilSeconds(b.RetryAfter); s > 0 && !b.Never {
		h[keyRetryAfter] = []string{strconv.FormatInt(s, 10)}
	} else {
		delete(h, keyRetryAfter)
	}
}

// WriteBlocked writes the default response to a request b blocked:
//
//   - status Status(b): 429, 503 for a concurrency rule or a breaker, 403
//     for a request that can never pass;
//   - Retry-After: b.RetryAfter, the latest time any rejecting rule allows,
//     in whole seconds, rounded up (at least 1 when it is above 0, absent
//     when it is 0, as for limits on requests in flight, which free a slot
//     whenever a request ends, and for a request that can never pass); for
//     a breaker, the time until it lets a probe through;
//   - RateLimit-Policy: one member per policy of b.Policies (every rate rule
//     that applied, and every concurrency rule that rejected),
//     "<rule>";q=<limit>;w=<window in seconds> (for a limit on requests in
//     flight: "<rule>";q=<limit>;qu="concurrent-requests");
//   - RateLimit: the same members, "<rule>";r=<remaining>;t=<seconds until
//     the quota is restored, or, when none is left or the rule rejected the
//     request, until the next request passes> (no t for a limit on requests in flight). Every t is
//     at most Retry-After. Neither field is sent for a breaker, which is no
//     quota, nor for a request that can never pass;
//   - Cache-Control: no-store;
//   - an application/problem+json body (RFC 9457) with members type,
//     title, status, detail, and the extension members rule, limit,
//     window (seconds, a JSON number, 0 for limits on requests in flight),
//     retryAfter (whole seconds, as in Retry-After, 0 when absent),
//     violated-policies (every rule that rejected the request, as the
//     problem types of draft-ietf-httpapi-ratelimit-headers define it) and,
//     for hotspot rules, param (the param the rule limits by, never its
//     value); rule, limit, window and param are those of the rule that
//     decided the response (core.BlockedError.Rule). For a request that can
//     never pass the type is problemWillNotPass and there is no retryAfter.
//     For a breaker or a system rule the type is
//     temporary-reduced-capacity and the extension members are rule, kind
//     ("breaker" or "system") and retryAfter, and nothing else: neither
//     has a quota policy to violate.
//
// The rule names are written as structured-field Strings (appendSFString)
// in the fields, and as JSON strings in the body.
func WriteBlocked(w http.ResponseWriter, b *core.BlockedError) {
	status := Status(b)
	body := appendProblem(make([]byte, 0, 512+2*len(b.Rule)+len(b.Resource)), b, status)
	h := w.Header()
	setBlockedHeaders(h, b)
	h[keyContentType] = []string{"application/problem+json"}
	h[keyContentLength] = []string{strconv.Itoa(len(body))}
	h[keyCacheControl] = []string{"no-store"}
	h[keyNoSniff] = []string{"nosniff"}
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client may be gone; nothing to do about it
}

// appendProblem appends the problem+json body of the default response to b
// with the given status (see WriteBlocked): the members type, title, status,
// detail and rule, then, for a rule that is no quota policy (a breaker, a
// system rule), kind and retryAfter; for any other rule limit, window,
// retryAfter (not for a request that can never pass), param (hotspot
// rules) and violated-policies. The type is will-not-pass for a request
// that can never pass, else its block class's: temporary-reduced-capacity
// for status 503, quota-exceeded for 429.
func appendProblem(dst []byte, b *core.BlockedError, status int) []byte {
	c := b.Class()
	typ, title := c.Problem, c.Title
	if b.Never {
		typ, title = problemWillNotPass, "Request Will Not Pass"
	}
	dst = append(dst, `{"type":`...)
	dst = appendJSONString(dst, typ)
	dst = append(dst, `,"title":`...)
	dst = appendJSONString(dst, title)
	dst = append(dst, `,"status":`...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, `,"detail":`...)
	dst = appendJSONString(dst, Detail(b))
	dst = append(dst, `,"rule":`...)
	dst = appendJSONString(dst, b.Rule)
	if noQuota(b) {
		dst = append(dst, `,"kind":`...)
		dst = appendJSONString(dst, string(b.Kind))
		dst = append(dst, `,"retryAfter":`...)
		dst = strconv.AppendInt(dst, ceilSeconds(b.RetryAfter), 10)
		return append(dst, '}')
	}
	dst = append(dst, `,"limit":`...)
	dst = strconv.AppendInt(dst, b.Limit, 10)
	dst = append(dst, `,"window":`...)
	dst = strconv.AppendFloat(dst, max(b.Window, 0).Seconds(), 'f', -1, 64)
	if !b.Never {
		dst = append(dst, `,"retryAfter":`...)
		dst = strconv.AppendInt(dst, ceilSeconds(b.RetryAfter), 10)
	}
	if b.Param != "" {
		dst = append(dst, `,"param":`...)
		dst = appendJSONString(dst, b.Param)
	}
	dst = append(dst, `,"violated-policies":[`...)
	if len(b.Policies) == 0 { // a BlockedError made outside core
		dst = appendJSONString(dst, b.Rule)
	}
	sep := false
	for i := range b.Policies {
		if p := &b.Policies[i]; p.Blocked {
			if sep {
				dst = append(dst, ',')
			}
			dst, sep = appendJSONString(dst, p.Rule), true
		}
	}
	return append(dst, "]}"...)
}

// Detail returns the problem detail of a request b blocked, a sentence for
// people: "GET /hello allows 5 requests per 1s; retry in 1s", or for a
// breaker "GET /fail is failing: circuit breaker \"fail-breaker\" is
// open; retry in 5s" (the retry time is Retry-After's, and is left out when
// b.RetryAfter is 0), or for a request that can never pass "GET /hello
// allows this request's header:X-User-ID value 0 requests per 1m0s: this
// request will never pass; do not retry it". A half-open breaker whose
// probes are all out is described as open too: for the client it is. A
// system rule's is "GET /hello is overloaded: system rule \"cpu\" sheds
// requests; retry in 1s".
func Detail(b *core.BlockedError) string {
	if c := b.Class(); c.Detail != "" && !b.Never {
		res, rule, _ := strings.Cut(c.Detail, "%s")
		rule, rest, _ := strings.Cut(rule, "%s")
		d := res + b.Resource + rule + b.Rule + rest
		if s := ceilSeconds(b.RetryAfter); s > 0 {
			d += "; retry in " + strconv.FormatInt(s, 10) + "s"
		}
		return d
	}
	limit := strconv.FormatInt(b.Limit, 10) + " requests"
	if b.Window > 0 {
		limit += " per " + b.Window.String()
	} else {
		limit += " in flight"
	}
	if b.Never {
		whom := ""
		if b.Param != "" {
			whom = "this request's " + b.Param + " value "
		}
		return b.Resource + " allows " + whom + limit + ": this request will never pass; do not retry it"
	}
	per := ""
	if b.Param != "" {
		per = " for each " + b.Param + " value"
	}
	if b.Window <= 0 {
		return b.Resource + " allows " + limit + per + "; retry when one ends"
	}
	retry := ""
	if s := ceilSeconds(b.RetryAfter); s > 0 {
		retry = "; retry in " + strconv.FormatInt(s, 10) + "s"
	}
	return b.Resource + " allows " + limit + per + retry
}

// appendJSONString appends s as a JSON string. Quotes, backslashes and
// control characters are escaped, as are U+2028 and U+2029; invalid UTF-8
// becomes U+FFFD, so the result is always valid JSON.
func appendJSONString(dst []byte, s string) []byte {
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

// noQuota reports whether the rule that decided b is no quota policy (its
// block class's Quota is false: a breaker, a system rule), unless the
// request can never pass.
func noQuota(b *core.BlockedError) bool {
	return !b.Never && !b.Class().Quota
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
