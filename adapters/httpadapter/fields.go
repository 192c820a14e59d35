package httpadapter

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core"
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

// ceilSeconds returns d in whole seconds, rounded up: 0 for d <= 0, and at
// least 1 for any d > 0, so that a time given in seconds is never earlier
// than the real one.
func ceilSeconds(d time.Duration) int64 {
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
// non-negative. It writes the digits itself, two at a time, as strconv
// does, without strconv's calls: it runs for every admitted response.
func appendSFInteger(dst []byte, n int64) []byte {
	u := uint64(min(max(n, 0), maxSFInteger))
	if u < 10 {
		return append(dst, byte('0'+u))
	}
	var b [16]byte // maxSFInteger has 15 digits
	i := len(b)
	for u >= 100 {
		r := u % 100
		u /= 100
		i -= 2
		b[i], b[i+1] = digitPairs[2*r], digitPairs[2*r+1]
	}
	if u >= 10 {
		i -= 2
		b[i], b[i+1] = digitPairs[2*u], digitPairs[2*u+1]
	} else {
		i--
		b[i] = byte('0' + u)
	}
	return append(dst, b[i:]...)
}

// digitPairs holds the two digits of each number from 00 to 99.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// appendSFString appends s as a structured-field String (RFC 9651, section
// 3.3.3): a double-quoted string of printable ASCII in which '"' and '\'
// are escaped with a backslash. A String cannot carry other bytes, and rule
// names are written by users, so every byte outside printable ASCII (0x20 to
// 0x7E: control characters, and each byte of a UTF-8 sequence), and '%'
// itself, is written as %XX (uppercase hex), as in a URL: a client can
// recover the exact name with a percent-decoder, two names never collide, and
// no CR or LF can reach a header.
func appendSFString(dst []byte, s string) []byte {
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

// appendPolicyField appends the RateLimit-Policy field member of q: a quota
// policy item named by the rule, with q the limit and w the window in whole
// seconds, rounded up and at least 1 (the field has no sub-second windows,
// so a sub-second window is advertised as a stricter policy: the same quota
// over a longer window). A limit on requests in flight has no window; it is
// advertised with the quota unit "concurrent-requests".
func appendPolicyField(dst []byte, q core.Quota) []byte {
	dst = appendSFString(dst, q.Rule)
	dst = append(dst, ";q="...)
	dst = appendSFInteger(dst, q.Limit)
	if q.Window <= 0 {
		return append(dst, `;qu="concurrent-requests"`...)
	}
	dst = append(dst, ";w="...)
	return appendSFInteger(dst, max(ceilSeconds(q.Window), 1))
}

// appendLimitField appends the RateLimit field member of q: a service limit
// item named by the rule, with r the quota left and, for a windowed limit,
// t the seconds until the quota is restored (when none is left or the rule
// rejected the request, until the next request passes: core.Quota.Reset),
// rounded up. A limit on requests in
// flight has no t: a slot frees whenever a request ends.
func appendLimitField(dst []byte, q core.Quota) []byte {
	dst = appendSFString(dst, q.Rule)
	dst = append(dst, ";r="...)
	dst = appendSFInteger(dst, q.Remaining)
	if q.Window <= 0 {
		return dst
	}
	dst = append(dst, ";t="...)
	return appendSFInteger(dst, ceilSeconds(q.Reset))
}

// AppendRateLimitFields appends to dst the value of the RateLimit-Policy
// field listing the policies qs, in order, then that of the RateLimit
// field, as the HTTP adapters send them, and returns dst and the length of
// the first value within what it appended: for a server that sends the
// fields its own way (package sluiceenvoy).
func AppendRateLimitFields(dst []byte, qs []core.Quota) ([]byte, int) {
	start := len(dst)
	for i := range qs {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendPolicyField(dst, qs[i])
	}
	n := len(dst) - start
	for i := range qs {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendLimitField(dst, qs[i])
	}
	return dst, n
}

// setRateLimitFields sets the RateLimit-Policy and RateLimit fields of h to
// list the policies qs, in order (draft-ietf-httpapi-ratelimit-headers
// fields are Lists), replacing any already set; with no policy it removes
// them. The two values are parts of one text and share one slice: two
// allocations.
func setRateLimitFields(h http.Header, qs ...core.Quota) {
	if len(qs) == 0 {
		delete(h, keyRateLimitPolicy)
		delete(h, keyRateLimit)
		return
	}
	var arr [256]byte // the fields of a few rules with short names
	buf, n := AppendRateLimitFields(arr[:0], qs)
	s := string(buf)
	vals := []string{s[:n], s[n:]}
	h[keyRateLimitPolicy] = vals[0:1:1] // capacity 1: an append copies
	h[keyRateLimit] = vals[1:2:2]
}

// Bounds of quotaTexts: rule names and limits come from rules (a hotspot
// rule's overrides give values limits of their own), so real programs stay
// far below maxCachedQuotas texts; a text beyond it starts the cache afresh,
// so that the texts of older rule sets do not stay. The
// first maxHotQuotas texts are also kept in a list searched before the map:
// comparing a few names (the same strings each time, so equal by pointer)
// is cheaper than hashing one.
const (
	maxCachedQuotas = 1024
	maxHotQuotas    = 8
)

// quotaText is what the RateLimit fields of an admitted response say of
// one rule that does not change from one response to the next: the rule's
// RateLimit-Policy member and the start of its RateLimit member (its name
// and ";r="), for the rule's limit and window.
type quotaText struct {
	quotaKey
	policy string
	prefix string
	// joined is the RateLimit-Policy field last made of several rules
	// starting with this one: a resource's rules admit its requests in
	// the same order each time.
	joined atomic.Pointer[joinedPolicy]
}

// joinedPolicy is the RateLimit-Policy field of the rules of texts.
type joinedPolicy struct {
	texts []*quotaText
	field string
}

// of reports whether t is the text of q.
func (t *quotaText) of(q *core.Quota) bool { return t.quotaKey == quotaKey{q.Rule, q.Limit, q.Window} }

// quotaTexts caches the quotaText of each rule, limit and window, so that
// an admitted response's fields cost one short string and no formatting of
// names. Reads are lock-free; a miss copies the map.
type quotaTexts struct {
	hot atomic.Pointer[[]*quotaText]
	m   atomic.Pointer[map[quotaKey]*quotaText]
	mu  sync.Mutex
}

// quotaKey is what a quotaText is the text of.
type quotaKey struct {
	rule   string
	limit  int64
	window time.Duration
}

// text returns the quotaText of q.
func (c *quotaTexts) text(q *core.Quota) *quotaText {
	if hot := c.hot.Load(); hot != nil {
		for _, t := range *hot {
			if t.of(q) {
				return t
			}
		}
	}
	key := quotaKey{q.Rule, q.Limit, q.Window}
	if m := c.m.Load(); m != nil {
		if t := (*m)[key]; t != nil {
			return t
		}
	}
	prefix := append(appendSFString(nil, q.Rule), ";r="...)
	t := &quotaText{quotaKey: key, policy: string(appendPolicyField(nil, *q)), prefix: string(prefix)}
	c.mu.Lock()
	defer c.mu.Unlock()
	var old map[quotaKey]*quotaText
	if m := c.m.Load(); m != nil && len(*m) < maxCachedQuotas {
		old = *m
	}
	m := make(map[quotaKey]*quotaText, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[key] = t
	c.m.Store(&m)
	var hot []*quotaText
	if h := c.hot.Load(); h != nil {
		hot = *h
	}
	if len(hot) < maxHotQuotas {
		hot = append(slices.Clip(hot), t)
		c.hot.Store(&hot)
	}
	return t
}

// Sizes of the memory a QuotaFields carves the fields' values from: a
// RateLimit text of two rules takes about 50 bytes, so a text block serves
// about ten responses, and a block of values sixteen.
const (
	textBlock  = 512 // bytes
	valueBlock = 32  // header values, two per response
)

// QuotaFields is what the RateLimit fields of one admitted request are made
// with: the quotas Enter gathers, and the memory their header values
// are carved from. An adapter lends one per request from a pool (the
// fields are set before the request's handler runs, and the QuotaFields is
// then free for another request). The values it carves belong to one
// response for good, never reused, so a handler may keep or change its
// header; memory is carved in blocks, so that most responses allocate
// nothing: a response kept after it ends keeps its blocks (about 1.5 KiB)
// from the garbage collector.
type QuotaFields struct {
	// Quotas are the quotas of the request's rate rules (Enter).
	Quotas []core.Quota
	// text holds RateLimit texts, appended one after another: a
	// strings.Builder never changes the bytes of a string it returned, so
	// each text is a part of the Builder's String.
	text strings.Builder
	vals []string // header values not handed out yet
}

// values returns two header values of their own, each a slice of capacity
// 1: a handler that appends to one gets a new array.
func (f *QuotaFields) values() []string {
	if len(f.vals) < 2 {
		f.vals = make([]string, valueBlock)
	}
	v := f.vals[:2:2]
	f.vals = f.vals[2:]
	return v
}

// string returns b as a string, carved from f's text block.
func (f *QuotaFields) string(b []byte) string {
	if len(b) > textBlock/4 {
		return string(b)
	}
	if f.text.Cap()-f.text.Len() < len(b) {
		f.text.Reset() // the old block stays with the strings carved from it
		f.text.Grow(textBlock)
	}
	start := f.text.Len()
	f.text.Write(b)
	return f.text.String()[start:]
}

// SetQuotaHeaders sets the RateLimit fields of an admitted request on h:
// one member per rate rule (flow or hotspot) that admitted it, f.Quotas,
// which Enter gathered. Without any, h is left as it is. The
// RateLimit-Policy text of the rules is made once per rule set; the
// RateLimit text and both header values are carved from f's blocks.
func (c *Common) SetQuotaHeaders(h http.Header, f *QuotaFields) {
	quotas := f.Quotas
	if len(quotas) == 0 {
		return
	}
	t := c.quotas.text(&quotas[0])
	policy := t.policy
	var ts []*quotaText // the texts of quotas after the first
	if len(quotas) > 1 {
		j := t.joined.Load()
		if j == nil || !j.of(quotas) {
			j = c.join(quotas)
		}
		policy, ts = j.field, j.texts[1:]
	}
	var arr [128]byte
	buf := append(arr[:0], t.prefix...)
	buf = appendRemaining(buf, &quotas[0])
	for i := 1; i < len(quotas); i++ {
		buf = append(buf, ", "...)
		buf = append(buf, ts[i-1].prefix...)
		buf = appendRemaining(buf, &quotas[i])
	}
	vals := f.values()
	vals[0], vals[1] = policy, f.string(buf)
	h[keyRateLimitPolicy] = vals[0:1:1]
	h[keyRateLimit] = vals[1:2:2]
}

// appendRemaining appends what the RateLimit member of q says after its
// prefix (quotaText.prefix): the quota left and, for a windowed limit, the
// seconds until it is restored (see appendLimitField).
func appendRemaining(buf []byte, q *core.Quota) []byte {
	buf = appendSFInteger(buf, q.Remaining)
	if q.Window > 0 {
		buf = append(buf, ";t="...)
		buf = appendSFInteger(buf, ceilSeconds(q.Reset))
	}
	return buf
}

// of reports whether j is the RateLimit-Policy field of quotas.
func (j *joinedPolicy) of(quotas []core.Quota) bool {
	if len(j.texts) != len(quotas) {
		return false
	}
	for i := range quotas {
		if !j.texts[i].of(&quotas[i]) {
			return false
		}
	}
	return true
}

// join returns the RateLimit-Policy field of several quotas, and keeps it
// with the text of the first: made once while the rules stay the same.
func (c *Common) join(quotas []core.Quota) *joinedPolicy {
	j := &joinedPolicy{texts: make([]*quotaText, len(quotas))}
	var buf []byte
	for i := range quotas {
		t := c.quotas.text(&quotas[i])
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = append(buf, t.policy...)
		j.texts[i] = t
	}
	j.field = string(buf)
	j.texts[0].joined.Store(j)
	return j
}
