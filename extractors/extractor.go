package extractors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluicekit/sluice/core"
)

// Defaults of the caps on client-controlled param values.
const (
	// defaultMaxValueLen is the default WithMaxValueLen: the bytes kept of
	// one param value.
	defaultMaxValueLen = 256
	// defaultMaxValues is the default WithMaxValues: the values one param
	// yields per request.
	defaultMaxValues = 16
	// defaultIPv6Prefix is the default WithIPv6Prefix: the ip param of an
	// IPv6 client is its /64, the subnet one host or home is given.
	defaultIPv6Prefix = 64
)

// Unmatched is the resource of HTTP requests that matched no route, and of
// gRPC calls to methods the server does not register. They all share it,
// so random paths and method names cannot mint resources.
const Unmatched = "(unmatched)"

// overflowValue is the value a param yields, in place of all the values
// beyond the first n-1, when a request carries more than n = WithMaxValues
// values for it. Every such request shares this value, and so its limit.
const overflowValue = "(too many values)"

// Bounds of the Extractor's caches. Param strings come from rules and route
// templates from the application, so real programs stay far below them;
// beyond them, results are computed per call (allocating) but stay correct.
const (
	maxCachedParams   = 1024
	maxHotParams      = 8
	maxCachedRoutes   = 8192
	maxCachedPrefixes = 4096 // IPv6 prefixes' texts, by client: a flood fills it
)

// Extractor reads resource names and param values from HTTP requests and
// gRPC calls. It is safe for concurrent use; its options are fixed by New,
// and its caches are bounded.
type Extractor struct {
	trusted     []netip.Prefix
	ipHeaders   forwardingHeaders // read from trusted proxies
	ipv6Bits    int
	maxValueLen int
	maxValues   int
	httpCustom  map[string]func(r *http.Request) []string
	grpcCustom  map[string]func(ctx context.Context, fullMethod string) []string
	ctxParams   map[string]any // context keys by custom param name

	params cache[string, *spec]    // parsed param specs by param string
	hot    atomic.Pointer[[]*spec] // the first maxHotParams specs, searched first; written under mu
	mu     sync.Mutex
	routes cache[string, *[numMethods]string] // resource names by route, then methodIndex
	v6     cache[[16]byte, string]            // ip param values by masked IPv6 address
}

// config is what the options set; New validates it.
type config struct {
	trusted     []netip.Prefix
	ipHeader    string // WithClientIPHeader's
	ipv6Bits    int
	maxValueLen int
	maxValues   int
	httpCustom  map[string]func(r *http.Request) []string
	grpcCustom  map[string]func(ctx context.Context, fullMethod string) []string
	ctxParams   map[string]any
}

// Option configures an Extractor. Options are validated by New, which
// returns an error naming the option and the bad value.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// New returns an Extractor configured by opts. Without options it trusts no
// proxy (the client IP is the socket peer), gives IPv6 clients the ip param of
// their /64, keeps 256 bytes of a value and 16 values of a param, and
// knows no custom params.
func New(opts ...Option) (*Extractor, error) {
	c := config{ipv6Bits: defaultIPv6Prefix, maxValueLen: defaultMaxValueLen, maxValues: defaultMaxValues}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.apply(&c); err != nil {
			return nil, err
		}
	}
	if c.ipHeader != "" && len(c.trusted) == 0 {
		return nil, fmt.Errorf("extractors: WithClientIPHeader(%s): no proxy is trusted (WithTrustedProxies), so the header would never be read", core.Quote(c.ipHeader))
	}
	x := &Extractor{
		trusted:     c.trusted,
		ipHeaders:   headersOf(c.ipHeader),
		ipv6Bits:    c.ipv6Bits,
		maxValueLen: c.maxValueLen,
		maxValues:   c.maxValues,
		httpCustom:  c.httpCustom,
		grpcCustom:  c.grpcCustom,
		ctxParams:   c.ctxParams,
	}
	x.params.init(maxCachedParams)
	x.routes.init(maxCachedRoutes)
	x.v6.init(maxCachedPrefixes)
	return x, nil
}

// WithTrustedProxies makes the ip param believe forwarding headers from socket
// peers in these prefixes: CIDR prefixes ("10.0.0.0/8", "fd00::/8") or bare
// addresses ("192.168.1.7", a /32 or /128). Options add up. The error names
// the bad value.
//
// Prefixes are compared with addresses as IPv4 for IPv4 and IPv4-mapped
// IPv6 alike: "::ffff:10.0.0.0/104" is "10.0.0.0/8".
func WithTrustedProxies(prefixes ...string) Option {
	return optionFunc(func(c *config) error {
		for _, s := range prefixes {
			p, ok := parsePrefix(s)
			if !ok {
				return fmt.Errorf("extractors: WithTrustedProxies: %s is not an IP address or CIDR prefix (an IPv4-mapped prefix must be at least /96)", core.Quote(s))
			}
			c.trusted = appendPrefix(c.trusted, p)
		}
		return nil
	})
}

// WithClientIPHeader names the one header the trusted proxies
// (WithTrustedProxies) set to the client's address, as "X-Real-IP",
// "Forwarded", "X-Forwarded-For" or "CF-Connecting-IP"; on gRPC, the
// metadata of that name in lower case. The ip param of a request from a
// trusted proxy then reads that header alone, and is the proxy itself when
// the request lacks it. X-Forwarded-For and Forwarded are walked as lists of
// hops (see the package doc); any other header holds one address, its last
// line. Without it, the forwarding headers are read in their documented
// order, X-Forwarded-For first: behind a proxy that sets only X-Real-IP or
// Forwarded and passes on the client's own X-Forwarded-For, a client would
// choose its address. The name is a letter, then letters, digits, '-', '_'
// or '.'; New refuses it without a trusted proxy.
func WithClientIPHeader(name string) Option {
	return optionFunc(func(c *config) error {
		if strings.Contains(name, ":") || core.ValidateParam(name) != nil { // a custom param name's syntax
			return fmt.Errorf("extractors: WithClientIPHeader: want a header name: a letter, then letters, digits, '-', '_' or '.', got %s", core.Quote(name))
		}
		c.ipHeader = name
		return nil
	})
}

// WithIPv6Prefix sets how many leading bits of an IPv6 client's address make
// its ip param (default 64): a host is usually given a whole
// /64 (a home or a cloud instance often a /56 or /48), so its addresses are
// one client, and a limit on ip holds for all of them. The value is the
// prefix, as "2001:db8:1:2::/64"; 128 keeps each address apart, written
// without a length. IPv4 clients, IPv4-mapped IPv6 addresses among them,
// are their address. The peer param stays the exact address.
// bits must be between 1 and 128.
func WithIPv6Prefix(bits int) Option {
	return optionFunc(func(c *config) error {
		if bits < 1 || bits > 128 {
			return fmt.Errorf("extractors: WithIPv6Prefix: prefix length must be between 1 and 128 bits, got %d", bits)
		}
		c.ipv6Bits = bits
		return nil
	})
}

// WithMaxValueLen sets the bytes kept of one param value (default
// 256). A longer value is truncated to n bytes, backing off
// to the start of a UTF-8 sequence, rather than dropped, so padding a value
// never escapes its limit. n must be at least 1.
func WithMaxValueLen(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return fmt.Errorf("extractors: WithMaxValueLen: must be >= 1, got %d", n)
		}
		c.maxValueLen = n
		return nil
	})
}

// WithMaxValues sets the values one param yields per request (default
// 16). A request with more than n values yields its first n-1
// values and then overflowValue for all the rest: requests with too many
// values share one value and its limit rather than escape it. n must be at
// least 1.
func WithMaxValues(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return fmt.Errorf("extractors: WithMaxValues: must be >= 1, got %d", n)
		}
		c.maxValues = n
		return nil
	})
}

// WithHTTPParam registers a custom HTTP param: rules naming param name read
// the strings fn returns for the request (each one a value, capped like all
// values; nil or empty means absent). name is a custom param name as rules
// write it: a letter, then letters, digits, '_', '.' or '-', and not one of
// ip, method, host or peer. fn runs when Enter starts reading the param for
// a request, once for all its values (again only if another custom param
// was read in between); it must be safe for concurrent use.
func WithHTTPParam(name string, fn func(r *http.Request) []string) Option {
	return optionFunc(func(c *config) error {
		if err := checkCustomName("WithHTTPParam", name); err != nil {
			return err
		}
		if fn == nil {
			return fmt.Errorf("extractors: WithHTTPParam: %s: function is nil", core.Quote(name))
		}
		if _, dup := c.httpCustom[name]; dup || c.ctxParams[name] != nil {
			return fmt.Errorf("extractors: WithHTTPParam: %s registered twice", core.Quote(name))
		}
		if c.httpCustom == nil {
			c.httpCustom = map[string]func(r *http.Request) []string{}
		}
		c.httpCustom[name] = fn
		return nil
	})
}

// WithGRPCParam registers a custom gRPC param, like WithHTTPParam: rules
// naming param name read the strings fn returns for the call's context
// (incoming for servers, outgoing for clients) and full method.
func WithGRPCParam(name string, fn func(ctx context.Context, fullMethod string) []string) Option {
	return optionFunc(func(c *config) error {
		if err := checkCustomName("WithGRPCParam", name); err != nil {
			return err
		}
		if fn == nil {
			return fmt.Errorf("extractors: WithGRPCParam: %s: function is nil", core.Quote(name))
		}
		if _, dup := c.grpcCustom[name]; dup || c.ctxParams[name] != nil {
			return fmt.Errorf("extractors: WithGRPCParam: %s registered twice", core.Quote(name))
		}
		if c.grpcCustom == nil {
			c.grpcCustom = map[string]func(ctx context.Context, fullMethod string) []string{}
		}
		c.grpcCustom[name] = fn
		return nil
	})
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
func WithContextParam(name string, key any) Option {
	return optionFunc(func(c *config) error {
		if err := checkCustomName("WithContextParam", name); err != nil {
			return err
		}
		if key == nil || !reflect.TypeOf(key).Comparable() {
			return fmt.Errorf("extractors: WithContextParam: %s: the key must be comparable and not nil, got %T", core.Quote(name), key)
		}
		if c.httpCustom[name] != nil || c.grpcCustom[name] != nil || c.ctxParams[name] != nil {
			return fmt.Errorf("extractors: WithContextParam: %s registered twice", core.Quote(name))
		}
		if c.ctxParams == nil {
			c.ctxParams = map[string]any{}
		}
		c.ctxParams[name] = key
		return nil
	})
}

// contextStrings returns the values of v, a value stored under a
// WithContextParam key.
func contextStrings(v any) []string {
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		return []string{v}
	case []string:
		return v
	case fmt.Stringer:
		return []string{v.String()}
	}
	return []string{fmt.Sprint(v)}
}

// checkCustomName returns an error, naming the option, when name cannot
// name a custom param.
func checkCustomName(option, name string) error {
	p, err := parseParam(name)
	switch {
	case err != nil || strings.Contains(name, ":"):
		return fmt.Errorf("extractors: %s: %s is not a custom param name (want a letter, then letters, digits, '_', '.' or '-')", option, core.Quote(name))
	case p.Kind != kindCustom:
		return fmt.Errorf("extractors: %s: %s is a built-in param", option, core.Quote(name))
	}
	return nil
}

// CheckParam returns an error when this Extractor cannot read the param
// spec: when spec is malformed (see the package doc) or names a custom param
// registered neither with WithHTTPParam nor with WithGRPCParam. An
// Extractor is a core.ParamSource: give it to core.WithParamSource so that
// the Guard refuses rules naming params it cannot supply, and its adapters
// read params with it (ForAdapter). The adapters add the view of their
// protocol, HTTPSource or GRPCSource.
func (x *Extractor) CheckParam(spec string) error {
	custom := slices.Collect(maps.Keys(x.httpCustom))
	for name := range x.grpcCustom {
		if x.httpCustom[name] == nil {
			custom = append(custom, name)
		}
	}
	custom = slices.AppendSeq(custom, maps.Keys(x.ctxParams))
	return checkCustom(spec, "", "WithHTTPParam, WithGRPCParam or WithContextParam", custom)
}

// HTTPSource returns the core.ParamSource of the params this Extractor
// reads from HTTP requests: the built-in params and the custom params
// registered with WithHTTPParam or WithContextParam. The HTTP adapters add
// it to their Guard. Sources of Extractors without custom HTTP params and
// with the same caps are equal.
func (x *Extractor) HTTPSource() core.ParamSource {
	if len(x.httpCustom) == 0 && len(x.ctxParams) == 0 {
		return source{forms: valueForms{x.maxValueLen, x.ipv6Bits}, grpc: false}
	}
	return source{x: x, forms: valueForms{x.maxValueLen, x.ipv6Bits}, grpc: false}
}

// GRPCSource is HTTPSource for gRPC calls: the built-in params and the
// custom params registered with WithGRPCParam or WithContextParam.
func (x *Extractor) GRPCSource() core.ParamSource {
	if len(x.grpcCustom) == 0 && len(x.ctxParams) == 0 {
		return source{forms: valueForms{x.maxValueLen, x.ipv6Bits}, grpc: true}
	}
	return source{x: x, forms: valueForms{x.maxValueLen, x.ipv6Bits}, grpc: true}
}

// source is the view of an Extractor's params for one protocol; x is nil
// when the Extractor has no custom params for it.
type source struct {
	x     *Extractor
	forms valueForms
	grpc  bool
}

// CheckValue returns an error, saying what the param yields instead, when
// the extractor can never yield value for the param spec (core.ParamSource):
// a value longer than WithMaxValueLen; of a header or metadata (not
// "-bin"), one with a comma or with spaces or tabs around it; an ip, peer
// or host not in the form they are read in ("2001:db8::/64" for an IPv6
// client's ip param, an IPv4 address without "::ffff:", a host in lower
// case without port, a method as the protocol's requests have it).
func (s source) CheckValue(spec, value string) error {
	if p, err := parseParam(spec); err == nil && p.Kind == kindMethod {
		switch {
		case !s.grpc && standardMethod(value) != value:
			return fmt.Errorf("method yields it as %s (every method outside the standard set is OTHER)", core.Quote(standardMethod(value)))
		case s.grpc && !strings.HasPrefix(value, "/"):
			return errors.New("method yields a call's full method, as /pkg.Service/Method")
		}
	}
	return s.forms.check(spec, value)
}

func (s source) CheckParam(spec string) error {
	var custom []string
	if s.x != nil {
		if s.grpc {
			custom = slices.Collect(maps.Keys(s.x.grpcCustom))
		} else {
			custom = slices.Collect(maps.Keys(s.x.httpCustom))
		}
		custom = slices.AppendSeq(custom, maps.Keys(s.x.ctxParams))
	}
	if s.grpc {
		return checkCustom(spec, "gRPC", "WithGRPCParam or WithContextParam", custom)
	}
	return checkCustom(spec, "HTTP", "WithHTTPParam or WithContextParam", custom)
}

// valueForms is what an Extractor's options do to the values it yields.
type valueForms struct{ maxValueLen, ipv6Bits int }

// check is source.CheckValue.
func (f valueForms) check(spec, value string) error {
	p, err := parseParam(spec)
	if err != nil {
		return nil // CheckParam refuses spec
	}
	if len(value) > f.maxValueLen {
		return fmt.Errorf("the extractor keeps the first %d bytes of a value (extractors.WithMaxValueLen), got %d", f.maxValueLen, len(value))
	}
	want := value
	switch p.Kind {
	case kindHeader, kindMetadata:
		if !strings.HasSuffix(strings.ToLower(p.Name), "-bin") && (trimOWS(value) != value || strings.IndexByte(value, ',') >= 0) {
			return fmt.Errorf("%s values are split at commas, with the spaces and tabs around each removed", p)
		}
	case kindCookie:
		if strings.IndexByte(value, ';') >= 0 || strings.TrimRight(value, " \t") != value {
			return fmt.Errorf("%s values end before a ';', without the spaces and tabs before it", p)
		}
	case kindIP, kindPeer:
		host, _, _ := strings.Cut(value, "/")
		a, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("%s values are IP addresses, as 192.0.2.1 or 2001:db8::1", p)
		}
		a = a.Unmap().WithZone("")
		want = a.String()
		if p.Kind == kindIP && a.Is6() && f.ipv6Bits < 128 {
			pre, _ := a.Prefix(f.ipv6Bits)
			want = pre.String()
		}
	case kindHost:
		want = NormalizeHost(value)
	}
	if want != value {
		return fmt.Errorf("%s yields it as %s", p, core.Quote(want))
	}
	return nil
}

// checkCustom returns an error when spec is malformed or names a custom
// param not among custom, the names registered for protocol with option.
func checkCustom(spec, protocol, option string, custom []string) error {
	p, err := parseParam(spec)
	if err != nil {
		return err
	}
	if p.Kind != kindCustom || slices.Contains(custom, p.Name) {
		return nil
	}
	have := "none"
	if len(custom) > 0 {
		slices.Sort(custom)
		have = strings.Join(custom, ", ")
	}
	if protocol != "" {
		protocol += " "
	}
	return fmt.Errorf("%s is not a custom param of the %sextractor (registered: %s): register it with extractors.%s and give that Extractor to the Guard (core.WithParamSource)", core.Quote(spec), protocol, have, option)
}

// PathParams gives the route parameters of a matched HTTP request: the gin
// and echo adapters implement it over their contexts. A nil PathParams
// given to Params.ResetHTTP means r.PathValue (net/http's ServeMux).
//
// A PathParams may also give what its framework knows of the request: with
// a method ContextValue(key any) (any, bool), the values the framework
// keeps (gin's and echo's c.Get), which WithContextParam params read before
// the request's context; with a method ClientIP() string, the client's
// address by the framework's own trusted-proxy settings (gin's
// c.ClientIP, echo's c.RealIP), which the ip param then is.
type PathParams interface {
	// PathParam returns the value of route parameter name, and false when
	// the route has no such parameter.
	PathParam(name string) (string, bool)
}

// contextValues is a PathParams that gives its framework's values of the
// request.
type contextValues interface {
	ContextValue(key any) (any, bool)
}

// clientIPs is a PathParams that gives its framework's client IP.
type clientIPs interface {
	ClientIP() string
}
