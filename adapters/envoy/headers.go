package sluiceenvoy

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluicekit/sluice/adapters/httpadapter"
	"github.com/sluicekit/sluice/core"
)

// The problem types of the body of an OVER_LIMIT response, those of the
// HTTP adapters.
const (
	problemQuotaExceeded = "https://iana.org/assignments/http-problem-types#quota-exceeded"
	problemWillNotPass   = "https://github.com/sluicekit/sluice#request-will-not-pass"
)

// addHeaders sets the response headers and, when over the limit, the body
// of r's response: the quotas of the descriptors admitted, and the
// BlockedErrors of those rejected.
func (s *Server) addHeaders(r *reply, admitted []core.Quota, blocked []*core.BlockedError) {
	resp := &r.resp
	if !s.o.noHeaders {
		qs := admitted
		for _, b := range blocked {
			qs = append(qs, b.Policies...)
		}
		if len(qs) > 0 {
			// Both values in one string: one allocation.
			v, n := httpadapter.AppendRateLimitFields(r.buf[:0], qs)
			both := string(v)
			r.header("RateLimit-Policy", both[:n])
			r.header("RateLimit", both[n:])
		}
	}
	if s.o.xHeaders {
		for _, h := range xHeaders(resp.Statuses) {
			r.header(h.Key, h.Value)
		}
	}
	if resp.OverallCode == rlsv3.RateLimitResponse_OVER_LIMIT && len(blocked) > 0 {
		b := decisive(blocked)
		if s := ceilSeconds(b.RetryAfter); s > 0 && !b.Never { // a limit in flight has no retry time
			r.header("Retry-After", strconv.FormatInt(s, 10))
		}
		r.header("Content-Type", "application/problem+json")
		resp.RawBody = problem(b, blocked, httpadapter.Detail(b))
	}
}

// xHeaders returns the X-RateLimit headers of draft 03 as Envoy writes
// them: the limit of the descriptor with the least remaining followed by
// every descriptor's quota policy, that descriptor's remaining and its
// seconds until reset.
func xHeaders(sts []*rlsv3.RateLimitResponse_DescriptorStatus) []*corev3.HeaderValue {
	var min *rlsv3.RateLimitResponse_DescriptorStatus
	var policies []string
	for _, st := range sts {
		l := st.CurrentLimit
		if l == nil {
			continue
		}
		if min == nil || st.LimitRemaining < min.LimitRemaining {
			min = st
		}
		w := int64(unitOf(l.Unit).Duration() / time.Second)
		if m := l.GetUnitMultiplier(); m != nil {
			w *= int64(m.Value)
		}
		p := strconv.FormatUint(uint64(l.RequestsPerUnit), 10) + ";w=" + strconv.FormatInt(w, 10)
		if l.Name != "" {
			p += ";name=" + sfString(l.Name)
		}
		policies = append(policies, p)
	}
	if min == nil {
		return nil
	}
	return []*corev3.HeaderValue{
		{Key: "X-RateLimit-Limit", Value: strconv.FormatUint(uint64(min.CurrentLimit.RequestsPerUnit), 10) + ", " + strings.Join(policies, ", ")},
		{Key: "X-RateLimit-Remaining", Value: strconv.FormatUint(uint64(min.LimitRemaining), 10)},
		{Key: "X-RateLimit-Reset", Value: strconv.FormatInt(ceilSeconds(min.DurationUntilReset.AsDuration()), 10)},
	}
}

// decisive returns the rejection the response is about: one that can never
// pass, else the one whose retry time is the latest (the first on a tie).
func decisive(bs []*core.BlockedError) *core.BlockedError {
	d := bs[0]
	for _, b := range bs[1:] {
		if d.Never {
			break
		}
		if b.Never || b.RetryAfter > d.RetryAfter {
			d = b
		}
	}
	return d
}

// problem returns the problem document (RFC 9457) of an OVER_LIMIT
// response, with the members the HTTP adapters give a 429: type, title,
// status, detail, rule, limit, window (seconds), retryAfter (seconds; not
// for a request that can never pass) and violated-policies.
func problem(b *core.BlockedError, all []*core.BlockedError, detail string) []byte {
	typ, title := problemQuotaExceeded, "Quota Exceeded"
	if b.Never {
		typ, title = problemWillNotPass, "Request Will Not Pass"
	}
	var violated []string
	for _, o := range all {
		for _, p := range o.Policies {
			if p.Blocked {
				violated = append(violated, p.Rule)
			}
		}
		if len(o.Policies) == 0 {
			violated = append(violated, o.Rule)
		}
	}
	doc := struct {
		Type       string   `json:"type"`
		Title      string   `json:"title"`
		Status     int      `json:"status"`
		Detail     string   `json:"detail"`
		Rule       string   `json:"rule"`
		Limit      int64    `json:"limit"`
		Window     float64  `json:"window"`
		RetryAfter *int64   `json:"retryAfter,omitempty"`
		Violated   []string `json:"violated-policies"`
	}{typ, title, 429, detail, b.Rule, b.Limit, b.Window.Seconds(), nil, violated}
	if !b.Never {
		r := ceilSeconds(b.RetryAfter)
		doc.RetryAfter = &r
	}
	out, _ := json.Marshal(doc) // of strings and numbers: cannot fail
	return out
}

// ceilSeconds returns d in whole seconds, rounded up.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// sfString returns s as a structured-field String (see appendSFString).
func sfString(s string) string {
	return string(appendSFString(make([]byte, 0, len(s)+2), s))
}

// appendSFString appends s as a structured-field String (RFC 9651): bytes
// outside printable ASCII, and '%', written %XX; '"' and '\' escaped.
func appendSFString(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '%' || c < 0x20 || c > 0x7e:
			b = append(b, '%', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
