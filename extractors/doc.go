// Package extractors maps requests to what the sluice engine (package core)
// limits: resource names and param values. It is framework-neutral: the
// net/http, gin and echo adapters share its HTTP side, the gRPC adapter its
// gRPC side, so one rules file reads the same way through every adapter. It
// imports no framework: gRPC calls are read through a GRPCCall, which the
// gRPC adapter provides (sluicegrpc.CallInfo).
//
// An Extractor is declared once, to the Guard (core.WithParamSource):
// core.New then refuses a rule naming a param it cannot supply, and the
// Guard's adapters read params with it (ForAdapter):
//
//	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"),
//		extractors.WithHTTPParam("user", userOf))
//	guard, err := rulesfile.NewGuard("rules.yaml", core.WithParamSource(x))
//	r.Use(sluicegin.Middleware(guard))
//
// An adapter's WithExtractor option is needed only to choose among several
// Extractors given to one Guard. An adapter given an Extractor other than
// the Guard's fails at construction, as it would read the params (the
// client IP among them) otherwise than the program declared. Given one
// when the Guard has none, it reads with its own, and the
// Guard's other adapters do not see it: a program with several adapters
// declares its Extractor to the Guard.
//
// The sluicecheck command's -params flag refuses, in CI, rules naming a
// custom param outside a list.
//
// # Resources
//
// HTTP resources are "METHOD TEMPLATE", where TEMPLATE is the matched route
// template written with {name} parameters whatever the framework
// (HTTPResource): gin and echo "/items/:id" become "/items/{id}", their
// catch-alls "/files/*path" become "/files/{path...}" as in net/http's
// ServeMux, and a ServeMux pattern "GET example.com/items/{id}" loses its
// method and host. Requests that matched no route share the resource
// Unmatched; methods outside the standard set share "OTHER". Raw paths never
// become names, so clients cannot mint resources. gRPC resources are the
// full method, "/pkg.Service/Method", as grpc reports it, for the methods the
// server registers, and Unmatched for the others.
//
// # Params
//
// A hotspot rule names the request value it limits by, its param
// (Extractor.CheckParam checks one). The Extractor reads:
//
//	header:NAME    request header NAME, in any case (X-User-ID); on gRPC, metadata NAME
//	metadata:NAME  gRPC metadata NAME, in any case; on HTTP, request header NAME
//	query:NAME     URL query parameter NAME (case-sensitive, percent-decoded)
//	cookie:NAME    cookie NAME (case-sensitive, surrounding quotes removed)
//	path:NAME      route parameter NAME (PathParams, or r.PathValue for ServeMux)
//	ip             client IP (see Client IP below; on gRPC the peer, or x-forwarded-for
//	               metadata from trusted proxies; with the gin and echo adapters'
//	               WithFrameworkClientIP, the framework's); for IPv6, its /64
//	               (WithIPv6Prefix)
//	peer           socket peer IP, never from forwarding headers
//	method         HTTP method (outside the standard set: "OTHER"); gRPC full method
//	host           HTTP Host, lower-cased, without port or trailing dot; gRPC :authority likewise
//	NAME           a custom extractor registered with WithHTTPParam or WithGRPCParam,
//	               or a value an earlier middleware stored (WithContextParam: the
//	               framework's c.Get for gin and echo, else the request's or call's
//	               context.Value)
//
// A request that lacks a param, or has only empty values for it, is not
// limited by rules naming that param. Kinds that do not exist on one side
// (query, cookie and path on gRPC; a custom name registered only for the other
// side) are absent there.
//
// # Several values
//
// A param may carry several values, and the engine limits every one:
// repeated header lines and comma-separated elements of a header (or
// metadata) value each count as one value, with surrounding spaces removed
// and empty elements skipped (binary "-bin" metadata are not split); query
// params count repeated keys (a comma inside a query value is part of the
// value); cookies count repeated cookies of the same name. ip, peer,
// method, host and path have at most one value; a custom extractor's values
// are the strings it returns.
//
// # Caps
//
// A client controls these values, so two caps bound the work and memory one
// request costs without letting a client slip past a limit:
//
//   - a value longer than WithMaxValueLen bytes (default 256) is truncated
//     to that length (at a UTF-8 boundary), not dropped: a padded value is
//     still limited, under its prefix;
//   - a param with more than WithMaxValues values (default 16) yields its
//     first n-1 values and then "(too many values)" in place of all the rest, so
//     every request with too many values shares one value, and one limit,
//     instead of escaping it.
//
// A hotspot override whose key the Extractor can never yield (longer than
// WithMaxValueLen, a header value with a comma or surrounding spaces, a
// cookie value with a ';' or spaces at its end, an ip or host not in the
// form it is read in, as "2001:db8::/64" for an IPv6 client's ip param) is
// refused by the Guard of an adapter reading params with the Extractor,
// naming rule and key, rather than never applying.
//
// # Client IP
//
// The client IP is the socket peer unless the peer lies in a trusted proxy prefix
// (WithTrustedProxies; none by default, so by default forwarding headers are
// ignored). From a trusted proxy it walks X-Forwarded-For (every line, as one
// list) from the right, skipping trusted hops, and takes the first untrusted
// address; without X-Forwarded-For it reads the for= parameters of Forwarded
// (RFC 7239) the same way, each line split from the right so that a quote a
// client leaves open cannot swallow the element its proxy appended; and
// without either, X-Real-IP. A hop that is not an
// address (garbage, "unknown", an obfuscated "_name") ends the walk at the
// last trusted hop, so a client can never choose its own address by sending a
// header through an untrusted path. A proxy that sets only X-Real-IP or
// Forwarded, passing the client's own X-Forwarded-For on, would let the client
// choose: name the header your proxies set with WithClientIPHeader, and only
// it is read (X-Real-IP, Forwarded, X-Forwarded-For, CF-Connecting-IP ...).
//
// A host on IPv6 is given a whole subnet, a /64 at least, and can send each
// request from a new address of it. So the ip param of an IPv6 client is its
// prefix, "2001:db8:1:2::/64" (WithIPv6Prefix sets the length, 1 to 128; 128
// keeps addresses apart), and a limit on ip holds for the whole subnet. IPv4
// clients, IPv4-mapped IPv6 addresses among them, are their address. The peer
// param is the exact address. An override for an IPv6 client is written as
// its prefix: overrides: {"2001:db8:1:2::/64": 100}.
//
// # Allocation
//
// A request's params are a Params, reset for each request (ResetHTTP,
// ResetGRPC). An adapter that allocates or reuses an object per
// request holds them in it: reading a header, query, cookie, path, method
// or host value then allocates nothing (see their documentation for the few
// exceptions).
//
// An Extractor is safe for concurrent use. Its caches (canonical param names,
// resource names) are bounded; beyond their bounds results are computed per
// call, and stay correct.
package extractors
