package extractors

import (
	"net/http"
	"net/netip"
	"strings"
)

// maxHops bounds the forwarding hops clientIP walks: past it, the last
// trusted hop is the client. Real proxy chains are a few hops long.
const maxHops = 32

// clientIP returns the address of the client that sent r: the socket peer
// (r.RemoteAddr), unless the peer lies in a trusted proxy prefix
// (WithTrustedProxies). Then the forwarding headers are read (only the one
// WithClientIPHeader names, when given), in this order of preference:
//
//   - X-Forwarded-For, all its lines as one list, walked from the right:
//     trusted hops are skipped and the first untrusted address is the client;
//   - Forwarded (RFC 7239), the for= parameter of its elements, walked the
//     same way;
//   - X-Real-IP.
//
// A hop that is not an address (garbage, "unknown", an obfuscated "_name")
// ends the walk: the client is the last trusted hop. When every hop is
// trusted, the client is the leftmost one. Addresses may carry a port
// ("192.0.2.1:443", "[2001:db8::1]:443"); IPv4-mapped IPv6 addresses are
// returned as IPv4, and zones are dropped. The result is invalid (the zero
// Addr) when r.RemoteAddr holds no IP address, e.g. for a Unix socket. It
// is the exact address; the ip param of an IPv6 client is its prefix
// (WithIPv6Prefix).
func (x *Extractor) clientIP(r *http.Request) netip.Addr {
	a, _ := x.httpClientIP(r)
	return a
}

// httpClientIP returns clientIP(r) and its text when that is a substring of
// the request ("" when it must be formatted).
func (x *Extractor) httpClientIP(r *http.Request) (netip.Addr, string) {
	peer, text := parseHop(r.RemoteAddr)
	if !x.isTrusted(peer) {
		return peer, text
	}
	return x.forwarded(peer, text, func(key string) []string { return r.Header[key] }, &x.ipHeaders.http)
}

// forwardingHeaders are the names of the forwarding headers read from a
// trusted proxy, in order: X-Forwarded-For, Forwarded, and one that holds
// an address (X-Real-IP); "" for one not read. HTTP names are canonical,
// gRPC ones lower case.
type forwardingHeaders struct{ http, grpc [3]string }

// headersOf returns the forwarding headers read with WithClientIPHeader of
// name, or, for "", by default.
func headersOf(name string) forwardingHeaders {
	var h forwardingHeaders
	switch name = http.CanonicalHeaderKey(name); name {
	case "":
		h.http = [3]string{"X-Forwarded-For", "Forwarded", "X-Real-Ip"}
	case "X-Forwarded-For":
		h.http[0] = name
	case "Forwarded":
		h.http[1] = name
	default:
		h.http[2] = name
	}
	for i, n := range h.http {
		h.grpc[i] = strings.ToLower(n)
	}
	return h
}

// forwarded returns the client behind the trusted peer given its forwarding
// headers, looked up lazily with get under names (see forwardingHeaders).
func (x *Extractor) forwarded(peer netip.Addr, text string, get func(key string) []string, names *[3]string) (netip.Addr, string) {
	if names[0] != "" {
		if xff := get(names[0]); len(xff) > 0 {
			return x.walkXFF(peer, text, xff)
		}
	}
	if names[1] != "" {
		if fwd := get(names[1]); len(fwd) > 0 {
			return x.walkForwarded(peer, text, fwd)
		}
	}
	if names[2] != "" {
		if real := get(names[2]); len(real) > 0 {
			if a, t := parseHop(trimOWS(real[len(real)-1])); a.IsValid() {
				return a, t
			}
		}
	}
	return peer, text
}

// isTrusted reports whether a lies in a trusted proxy prefix.
func (x *Extractor) isTrusted(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	for _, p := range x.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// walkXFF walks X-Forwarded-For lines from the right, starting after the
// trusted peer.
func (x *Extractor) walkXFF(last netip.Addr, lastText string, lines []string) (netip.Addr, string) {
	hops := 0
	for li := len(lines) - 1; li >= 0; li-- {
		line := lines[li]
		for end := len(line); end >= 0; {
			start := strings.LastIndexByte(line[:end], ',') + 1
			elem := trimOWS(line[start:end])
			end = start - 1
			if elem == "" {
				continue
			}
			if hops++; hops > maxHops {
				return last, lastText
			}
			a, t := parseHop(elem)
			if !a.IsValid() {
				return last, lastText
			}
			if !x.isTrusted(a) {
				return a, t
			}
			last, lastText = a, t
		}
	}
	return last, lastText
}

// walkForwarded walks the for= nodes of Forwarded lines from the right,
// starting after the trusted peer. Each line is split from the right
// (lastElem), so that the elements a proxy appended to a client's line
// read as the proxy wrote them, whatever quotes the client left open.
func (x *Extractor) walkForwarded(last netip.Addr, lastText string, lines []string) (netip.Addr, string) {
	hops := 0
	for li := len(lines) - 1; li >= 0; li-- {
		line := lines[li]
		for end := len(line); end >= 0; {
			start := lastElem(line, end)
			elem := trimOWS(line[start:end])
			end = start - 1
			if elem == "" {
				continue
			}
			if hops++; hops > maxHops {
				return last, lastText
			}
			a, t := parseHop(forNode(elem))
			if !a.IsValid() {
				return last, lastText
			}
			if !x.isTrusted(a) {
				return a, t
			}
			last, lastText = a, t
		}
	}
	return last, lastText
}

// lastElem returns where the last element of s[:end] starts: after the
// last comma outside quoted strings (RFC 7230 quoted-string, with backslash
// escapes), read from the right.
func lastElem(s string, end int) int {
	quoted := false
	for i := end - 1; i >= 0; i-- {
		switch s[i] {
		case '"':
			if !quoted || !escaped(s, i) {
				quoted = !quoted
			}
		case ',':
			if !quoted {
				return i + 1
			}
		}
	}
	return 0
}

// escaped reports whether s[i] follows an odd number of backslashes.
func escaped(s string, i int) bool {
	n := 0
	for i--; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// span is the byte range [start, end) of an element of a line.
type span struct{ start, end int }

// splitQuoted splits s at the bytes sep outside quoted strings (RFC 7230
// quoted-string, with backslash escapes) and returns the number of elements;
// the spans of the last len(ring) of them are in ring, element k at
// ring[k%len(ring)].
func splitQuoted(s string, sep byte, ring []span) int {
	n, start, quoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			ring[n%len(ring)] = span{start, i}
			n++
			start = i + 1
		}
	}
	ring[n%len(ring)] = span{start, len(s)}
	return n + 1
}

// forNode returns the value of the for= parameter of a Forwarded element
// ("for=192.0.2.1;proto=https"), unquoted, or "" when it has none or its
// quoted value holds an escape.
func forNode(elem string) string {
	var pairs [8]span
	n := splitQuoted(elem, ';', pairs[:])
	for k := max(0, n-len(pairs)); k < n; k++ {
		p := pairs[k%len(pairs)]
		name, val, ok := strings.Cut(trimOWS(elem[p.start:p.end]), "=")
		if !ok || !strings.EqualFold(trimOWS(name), "for") {
			continue
		}
		val = trimOWS(val)
		if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
			val = val[1 : len(val)-1]
			if strings.IndexByte(val, '\\') >= 0 {
				return ""
			}
		}
		return val
	}
	return ""
}

// parseHop parses an address as forwarding headers and RemoteAddr write it:
// "192.0.2.1", "192.0.2.1:80", "2001:db8::1", "[2001:db8::1]:80",
// "[2001:db8::1]", with an optional zone. It returns the address, unmapped
// and without zone, and its text when s holds it in canonical form ("" when
// it must be formatted); the zero Addr when s is not an address.
func parseHop(s string) (netip.Addr, string) {
	host := s
	switch {
	case s == "":
		return netip.Addr{}, ""
	case s[0] == '[':
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return netip.Addr{}, ""
		}
		host = s[1:end]
		if rest := s[end+1:]; rest != "" && !validPort(rest) {
			return netip.Addr{}, ""
		}
	default:
		i := strings.IndexByte(s, ':')
		if i < 0 || strings.IndexByte(s[i+1:], ':') >= 0 {
			break // no port, or IPv6 without brackets
		}
		if !validPort(s[i:]) {
			return netip.Addr{}, ""
		}
		host = s[:i]
	}
	if !plausibleAddr(host) {
		return netip.Addr{}, ""
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, ""
	}
	if a.Is4In6() {
		a = a.Unmap()
	}
	if a.Zone() != "" {
		a = a.WithZone("")
	}
	var buf [64]byte
	if string(a.AppendTo(buf[:0])) != host {
		return a, ""
	}
	return a, host
}

// validPort reports whether s is ":" followed by 1 to 5 digits.
func validPort(s string) bool {
	if len(s) < 2 || len(s) > 6 || s[0] != ':' {
		return false
	}
	for _, c := range []byte(s[1:]) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// plausibleAddr reports whether s could be an IP address, so that obvious
// garbage ("unknown", "_hidden") is rejected without the error value
// netip.ParseAddr allocates.
func plausibleAddr(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '%':
			return i > 0 // a zone follows
		case !isHex(c) && c != ':' && c != '.':
			return false
		}
	}
	return true
}

// ipValue returns the ip param of the client a whose text is text (as
// addrText takes it): a for IPv4, the prefix of WithIPv6Prefix for IPv6,
// its text cached by prefix so that a returning client costs no
// allocation.
func (x *Extractor) ipValue(a netip.Addr, text string) string {
	if !a.Is6() || x.ipv6Bits == 128 {
		return addrText(a, text)
	}
	p, _ := a.Prefix(x.ipv6Bits) // a valid address without zone and bits <= 128: no error
	key := p.Addr().As16()
	if v, ok := x.v6.load(key); ok {
		return v
	}
	return x.v6.store(key, p.String())
}

// addrText returns the text of a, using text when it is not "".
func addrText(a netip.Addr, text string) string {
	if text != "" {
		return text
	}
	return a.String()
}

// parsePrefix parses a trusted proxy: a CIDR prefix or a bare address.
func parsePrefix(s string) (netip.Prefix, bool) {
	if strings.IndexByte(s, '/') >= 0 {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, false
		}
		return normalizePrefix(p)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, false
	}
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen()), true
}

// normalizePrefix masks p and writes an IPv4-mapped IPv6 prefix as IPv4, the
// form addresses are compared in. A mapped prefix shorter than /96 mixes
// IPv4 and IPv6 addresses and is refused (false), as is the zero Prefix.
func normalizePrefix(p netip.Prefix) (netip.Prefix, bool) {
	if !p.IsValid() {
		return netip.Prefix{}, false
	}
	if a := p.Addr(); a.Is4In6() {
		if p.Bits() < 96 {
			return netip.Prefix{}, false
		}
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), true
}

// appendPrefix appends p to ps unless ps holds it already.
func appendPrefix(ps []netip.Prefix, p netip.Prefix) []netip.Prefix {
	for _, q := range ps {
		if q == p {
			return ps
		}
	}
	return append(ps, p)
}
