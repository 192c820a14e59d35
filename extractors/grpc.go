package extractors

import (
	"context"
	"net/netip"
)

// GRPCCall reads what GRPCCallParams needs of a gRPC call from its context:
// metadata and the peer. The gRPC adapter implements it over grpc-go
// (sluicegrpc.CallInfo), so that this package does not import grpc.
type GRPCCall interface {
	// Metadata returns the values of the lower-case key (matched in any
	// case) in the incoming metadata of ctx, or with outgoing in its
	// outgoing metadata; nil when there are none. The caller neither keeps
	// nor changes the slice.
	Metadata(ctx context.Context, key string, outgoing bool) []string
	// Peer returns the IP address of the peer of ctx, unmapped and without
	// zone; the zero Addr when ctx has no peer or it is not an IP peer.
	Peer(ctx context.Context) netip.Addr
}

// GRPCCallParams is the core.Params of one gRPC call, for core.WithParams,
// read through a GRPCCall (sluicegrpc.CallInfo{}); the call's resource is
// its full method ("/pkg.Service/Method") as is. Reset readies it for a
// call, whose context is the server's context in a server interceptor, the
// outgoing context in a client interceptor. It reads:
//
//   - metadata:NAME and header:NAME: the metadata values of NAME (any case)
//     in the incoming metadata of ctx, or, when those have none, in its
//     outgoing metadata; each value split on commas like HTTP headers,
//     except binary "-bin" keys;
//   - peer: the peer's IP (absent on the client side, before the call has a
//     peer);
//   - ip: the peer, or, when the peer is a trusted proxy, the client behind
//     it from the incoming "x-forwarded-for" metadata (then "forwarded", then
//     "x-real-ip"), walked as ClientIP walks HTTP headers;
//   - method: the full method;
//   - host: the incoming ":authority", normalized like the HTTP Host;
//   - custom params registered with WithGRPCParam, and those of
//     WithContextParam, from ctx.Value.
//
// query, cookie and path params are absent on gRPC. An interceptor embeds
// it in an object it allocates (or reuses) per call. Reading a metadata
// param allocates what call.Metadata does (with grpc-go, a copy of the
// key's value list, once per param and call); ip and peer allocate the
// text of the address.
//
// It must be used by one goroutine. Enter reads its Params only while it
// runs, so once Enter has returned a GRPCCallParams may be Reset for another
// call, or put back in a pool: Reset it with nils first so that it does
// not keep the call's context alive. The zero GRPCCallParams, and one
// Reset with a nil Extractor, has no values.
type GRPCCallParams struct {
	x      *Extractor
	call   GRPCCall
	ctx    context.Context
	method string
	cur    cursor
	lines  []string // the source of the cursor's param

	ipDone bool
	ip     string // the client IP's text; "" when there is none
}

// Reset readies p to give the params of the call of fullMethod whose
// context is ctx, read with x through call, forgetting the call it read
// before. Reset(nil, nil, nil, "") drops every reference p holds.
func (p *GRPCCallParams) Reset(x *Extractor, call GRPCCall, ctx context.Context, fullMethod string) {
	// Field by field: a composite literal would build a copy first.
	p.x, p.call, p.ctx, p.method = x, call, ctx, fullMethod
	p.cur = cursor{}
	p.lines = nil
	p.ipDone, p.ip = false, ""
}

// Param returns the i-th value of param for the call (core.Params).
func (p *GRPCCallParams) Param(param string, i int) (string, bool) {
	x := p.x
	if x == nil || p.call == nil || p.ctx == nil {
		return "", false
	}
	sp := x.lookup(&p.cur, param)
	if p.cur.sp == sp && p.cur.end && i >= int(p.cur.next) {
		return "", false // past the last value, known without a look
	}
	if p.cur.sp != sp {
		p.cur.start(sp)
		switch sp.code {
		case codeHeader:
			p.lines = p.metadata(sp.md)
		case codeCustom:
			p.lines = nil
			if fn := x.grpcCustom[sp.name]; fn != nil {
				p.lines = fn(p.ctx, p.method)
			} else if key := x.ctxParams[sp.name]; key != nil {
				p.lines = contextStrings(p.ctx.Value(key))
			}
		}
	}
	switch sp.code {
	case codeHeader:
		if sp.bin {
			return x.value(&p.cur, p.lines, modePlain, i)
		}
		return x.value(&p.cur, p.lines, modeList, i)
	case codeCustom:
		return x.value(&p.cur, p.lines, modePlain, i)
	}
	if i != 0 {
		return "", false
	}
	var v string
	switch sp.code {
	case codePeer:
		if a := p.call.Peer(p.ctx); a.IsValid() {
			v = a.String()
		}
	case codeIP:
		if !p.ipDone {
			if a, text := p.clientIP(); a.IsValid() {
				p.ip = x.ipValue(a, text)
			}
			p.ipDone = true
		}
		v = p.ip
	case codeMethod:
		v = p.method
	case codeHost:
		if vs := p.call.Metadata(p.ctx, ":authority", false); len(vs) > 0 {
			v = normalizeHost(vs[len(vs)-1])
		}
	}
	if v == "" {
		return "", false
	}
	return truncate(v, x.maxValueLen), true
}

// metadata returns the values of the lower-case key in the incoming
// metadata of the call, or, when those have none, in its outgoing metadata.
func (p *GRPCCallParams) metadata(key string) []string {
	if vs := p.call.Metadata(p.ctx, key, false); len(vs) > 0 {
		return vs
	}
	return p.call.Metadata(p.ctx, key, true)
}

// clientIP returns the client of the call: the peer, or, when it is a
// trusted proxy, the client its incoming forwarding metadata name.
func (p *GRPCCallParams) clientIP() (netip.Addr, string) {
	a := p.call.Peer(p.ctx)
	if !p.x.isTrusted(a) {
		return a, ""
	}
	return p.x.forwarded(a, "", func(key string) []string { return p.call.Metadata(p.ctx, key, false) },
		"x-forwarded-for", "forwarded", "x-real-ip")
}
