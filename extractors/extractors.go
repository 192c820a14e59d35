package extractors

import (
	"context"
	"net/http"

	"github.com/sluicekit/sluice/internal/extract"
)

// Unmatched is the resource of HTTP requests that matched no route. They all
// share it, so random paths cannot mint resources.
const Unmatched = extract.Unmatched

// Extractor reads resource names and param values from HTTP requests and
// gRPC calls, for the adapters (their WithExtractor option). It is safe for
// concurrent use; its options are fixed by New, and its caches are bounded.
type Extractor extract.Extractor

// Option configures an Extractor. Options are validated by New, which
// returns an error naming the option and the bad value.
type Option extract.Option

// New returns an Extractor configured by opts. Without options it trusts no
// proxy (the client IP is the socket peer), gives IPv6 clients the ip param of
// their /64, keeps 256 bytes of a value and 16 values of a param, and
// knows no custom params.
func New(opts ...Option) (*Extractor, error) {
	in := make([]extract.Option, len(opts))
	for i, o := range opts {
		in[i] = o
	}
	x, err := extract.New(in...)
	return (*Extractor)(x), err
}

// WithTrustedProxies makes the client IP (the ip param; see the package
// documentation) follow forwarding headers from socket peers in these
// prefixes: CIDR prefixes ("10.0.0.0/8", "fd00::/8") or bare addresses
// ("192.168.1.7", a /32 or /128). Options add up. The error names
// the bad value.
//
// Prefixes are compared with addresses as IPv4 for IPv4 and IPv4-mapped
// IPv6 alike: "::ffff:10.0.0.0/104" is "10.0.0.0/8".
func WithTrustedProxies(prefixes ...string) Option { return extract.WithTrustedProxies(prefixes...) }

// WithIPv6Prefix sets how many leading bits of an IPv6 client's address make
// its ip param (default 64): a host is usually given a whole
// /64 (a home or a cloud instance often a /56 or /48), so its addresses are
// one client, and a limit on ip holds for all of them. The value is the
// prefix, as "2001:db8:1:2::/64"; 128 keeps each address apart, written
// without a length. IPv4 clients, IPv4-mapped IPv6 addresses among them,
// are their address. The peer param stays the exact address.
// bits must be between 1 and 128.
func WithIPv6Prefix(bits int) Option { return extract.WithIPv6Prefix(bits) }

// WithMaxValueLen sets the bytes kept of one param value (default
// 256). A longer value is truncated to n bytes, backing off
// to the start of a UTF-8 sequence, rather than dropped, so padding a value
// never escapes its limit. n must be at least 1.
func WithMaxValueLen(n int) Option { return extract.WithMaxValueLen(n) }

// WithMaxValues sets the values one param yields per request (default
// 16). A request with more than n values yields its first n-1
// values and then the value "(too many values)" for all the rest: requests
// with too many values share one value and its limit rather than escape it. n must be at
// least 1.
func WithMaxValues(n int) Option { return extract.WithMaxValues(n) }

// WithHTTPParam registers a custom HTTP param: rules naming param name read
// the strings fn returns for the request (each one a value, capped like all
// values; nil or empty means absent). name is a custom param name as rules
// write it: a letter, then letters, digits, '_', '.' or '-', and not one of
// ip, method, host or peer. fn runs when Enter starts reading the param for
// a request, once for all its values (again only if another custom param
// was read in between); it must be safe for concurrent use.
func WithHTTPParam(name string, fn func(r *http.Request) []string) Option {
	return extract.WithHTTPParam(name, fn)
}

// WithGRPCParam registers a custom gRPC param, like WithHTTPParam: rules
// naming param name read the strings fn returns for the call's context
// (incoming for servers, outgoing for clients) and full method.
func WithGRPCParam(name string, fn func(ctx context.Context, fullMethod string) []string) Option {
	return extract.WithGRPCParam(name, fn)
}

// WithContextParam registers a custom param for HTTP and gRPC alike that
// reads the value an earlier middleware stored under key for the request,
// so that an authentication middleware's user or tenant is limited by
// without being copied into the request:
//
//	extractors.WithContextParam("user", "user_id") // gin or echo: c.Set("user_id", id)
//	extractors.WithContextParam("user", auth.UserKey) // net/http, gRPC: context.WithValue(ctx, auth.UserKey, id)
//
// Rules then name the param by name ("param: user" in a rules file). The
// value is the one the framework keeps for the request (gin's and echo's
// c.Get; echo keys are strings) or, when it keeps none, the request's
// context.Value(key) (the call's context on gRPC). A string is the value,
// a []string its values, a fmt.Stringer its String(), anything else its
// fmt.Sprint; nil or "" is absent. key must be comparable and not nil, as
// for context.WithValue; name is as for WithHTTPParam.
func WithContextParam(name string, key any) Option { return extract.WithContextParam(name, key) }

// CheckParam returns an error when this Extractor cannot read the param
// spec: when spec is malformed (see the package doc) or names a custom param
// registered neither with WithHTTPParam nor with WithGRPCParam. An
// Extractor is a core.ParamSource: the adapters add the view of their
// protocol to their Guard (core.Guard.AddParamSource), which then refuses
// rules naming params the Extractor cannot supply.
func (x *Extractor) CheckParam(spec string) error { return (*extract.Extractor)(x).CheckParam(spec) }
