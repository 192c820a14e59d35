package extractors

import (
	"context"
	"net/netip"
)

// GRPCCall reads what Params needs of a gRPC call from its context:
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

// ResetGRPC readies p to give the params of the gRPC call of fullMethod
// whose context is ctx, read with x through call (sluicegrpc.CallInfo{}),
// forgetting the request or call it read before. ctx is the server's
// context in a server interceptor, the outgoing context in a client
// interceptor; the call's resource is its full method
// ("/pkg.Service/Method") as is. ResetGRPC(nil, nil, nil, "") drops every
// reference p holds. p then reads:
//
//   - metadata:NAME and header:NAME: the metadata values of NAME (any case)
//     in the incoming metadata of ctx, or, when those have none, in its
//     outgoing metadata; each value split on commas like HTTP headers,
//     except binary "-bin" keys;
//   - peer: the peer's IP (absent on the client side, before the call has a
//     peer);
//   - ip: the peer, or, when the peer is a trusted proxy, the client behind
//     it from the incoming "x-forwarded-for" metadata (then "forwarded", then
//     "x-real-ip"; or the one WithClientIPHeader names), walked as ClientIP
//     walks HTTP headers;
//   - method: the full method;
//   - host: the incoming ":authority", normalized like the HTTP Host;
//   - custom params registered with WithGRPCParam, and those of
//     WithContextParam, from ctx.Value.
//
// query, cookie and path params are absent on gRPC. The first ResetGRPC of
// a Params allocates a holder for the call, which later resets reuse, so
// an interceptor reuses its Params (the gRPC adapter pools them). Reading a
// metadata param allocates what call.Metadata does (with grpc-go, a copy
// of the key's value list, once per param and call); ip and peer allocate
// the text of the address.
func (p *Params) ResetGRPC(x *Extractor, call GRPCCall, ctx context.Context, fullMethod string) {
	// Field by field: a composite literal would build a copy first.
	p.x, p.r, p.path = x, nil, nil
	p.cur = cursor{}
	h := p.held
	if h == nil {
		if call == nil && ctx == nil {
			return
		}
		h = &held{}
		p.held = h
	}
	h.sp, h.vs = nil, nil
	h.call, h.ctx, h.method = call, ctx, fullMethod
	h.ipDone, h.ip = false, ""
}

// grpcParam is Param for a gRPC call.
func (p *Params) grpcParam(param string, i int) (string, bool) {
	x, h := p.x, p.held
	if x == nil || h == nil || h.call == nil || h.ctx == nil {
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
			h.vs = h.metadata(sp.md)
		case codeCustom:
			h.vs = nil
			if fn := x.grpcCustom[sp.name]; fn != nil {
				h.vs = fn(h.ctx, h.method)
			} else if key := x.ctxParams[sp.name]; key != nil {
				h.vs = contextStrings(h.ctx.Value(key))
			}
		}
	}
	switch sp.code {
	case codeHeader:
		if sp.bin {
			return x.value(&p.cur, h.vs, modePlain, i)
		}
		return x.value(&p.cur, h.vs, modeList, i)
	case codeCustom:
		return x.value(&p.cur, h.vs, modePlain, i)
	}
	if i != 0 {
		return "", false
	}
	var v string
	switch sp.code {
	case codePeer:
		if a := h.call.Peer(h.ctx); a.IsValid() {
			v = a.String()
		}
	case codeIP:
		if !h.ipDone {
			if a, text := h.clientIP(x); a.IsValid() {
				h.ip = x.ipValue(a, text)
			}
			h.ipDone = true
		}
		v = h.ip
	case codeMethod:
		v = h.method
	case codeHost:
		if vs := h.call.Metadata(h.ctx, ":authority", false); len(vs) > 0 {
			v = NormalizeHost(vs[len(vs)-1])
		}
	}
	if v == "" {
		return "", false
	}
	return truncate(v, x.maxValueLen), true
}

// metadata returns the values of the lower-case key in the incoming
// metadata of the call, or, when those have none, in its outgoing metadata.
func (h *held) metadata(key string) []string {
	if vs := h.call.Metadata(h.ctx, key, false); len(vs) > 0 {
		return vs
	}
	return h.call.Metadata(h.ctx, key, true)
}

// clientIP returns the client of the call: the peer, or, when it is a
// trusted proxy, the client its incoming forwarding metadata name, as x
// trusts proxies.
func (h *held) clientIP(x *Extractor) (netip.Addr, string) {
	a := h.call.Peer(h.ctx)
	if !x.isTrusted(a) {
		return a, ""
	}
	return x.forwarded(a, "", func(key string) []string { return h.call.Metadata(h.ctx, key, false) }, &x.ipHeaders.grpc)
}
