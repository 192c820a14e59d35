package extractors

import (
	"context"
	"net"
	"net/netip"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/sluicekit/sluice/core"
)

// GRPCParams returns the params of a gRPC call for core.WithParams; the
// call's resource is fullMethod ("/pkg.Service/Method") as is. ctx is the
// server's context in a server interceptor, the outgoing context in a client
// interceptor. It reads:
//
//   - metadata:NAME and header:NAME: the metadata values of NAME (any case)
//     in the incoming metadata of ctx, or, when those have none, in its
//     outgoing metadata; each value split on commas like HTTP headers,
//     except binary "-bin" keys;
//   - peer: the peer's IP (peer.FromContext; absent on the client side,
//     before the call has a peer);
//   - ip: the peer, or, when the peer is a trusted proxy, the client behind
//     it from the incoming "x-forwarded-for" metadata (then "forwarded", then
//     "x-real-ip"), walked as ClientIP walks HTTP headers;
//   - method: fullMethod;
//   - host: the incoming ":authority", normalized like the HTTP Host;
//   - custom params registered with WithGRPCParam.
//
// query, cookie and path params are absent on gRPC. The result, a
// GRPCCallParams, must be used by one goroutine, during the call. Besides
// itself, reading a metadata param allocates the copy of its value list that
// metadata.ValueFromIncomingContext makes (grpc-go offers no way to read
// incoming metadata without a copy), once per param and call; ip and peer
// allocate the text of the address.
func (x *Extractor) GRPCParams(ctx context.Context, fullMethod string) core.Params {
	return &GRPCCallParams{x: x, ctx: ctx, method: fullMethod}
}

// GRPCCallParams is the core.Params of one gRPC call: what GRPCParams
// returns, as a type that an interceptor can embed in an object it
// allocates (or reuses) per call. Reset readies it for a call; it then
// reads that call as GRPCParams's result does.
//
// It must be used by one goroutine. Enter reads its Params only while it
// runs, so once Enter has returned a GRPCCallParams may be Reset for another
// call, or put back in a pool: Reset it with a nil Extractor first so that it
// does not keep the call's context alive. The zero GRPCCallParams, and one
// Reset with a nil Extractor, has no values.
type GRPCCallParams struct {
	x      *Extractor
	ctx    context.Context
	method string
	cur    cursor
	lines  []string // the source of the cursor's param

	ipDone bool
	ip     string // the client IP's text; "" when there is none
}

// Reset readies p to give the params of the call of fullMethod whose
// context is ctx, read with x, forgetting the call it read before.
// Reset(nil, nil, "") drops every reference p holds.
func (p *GRPCCallParams) Reset(x *Extractor, ctx context.Context, fullMethod string) {
	// Field by field: a composite literal would build a copy first.
	p.x, p.ctx, p.method = x, ctx, fullMethod
	p.cur = cursor{}
	p.lines = nil
	p.ipDone, p.ip = false, ""
}

// Param returns the i-th value of param for the call (core.Params).
func (p *GRPCCallParams) Param(param string, i int) (string, bool) {
	x := p.x
	if x == nil || p.ctx == nil {
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
			p.lines = metadataValues(p.ctx, sp.md)
		case codeCustom:
			p.lines = nil
			if fn := x.grpcCustom[sp.name]; fn != nil {
				p.lines = fn(p.ctx, p.method)
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
		if a := peerAddr(p.ctx); a.IsValid() {
			v = a.String()
		}
	case codeIP:
		if !p.ipDone {
			if a, text := x.grpcClientIP(p.ctx); a.IsValid() {
				p.ip = x.ipValue(a, text)
			}
			p.ipDone = true
		}
		v = p.ip
	case codeMethod:
		v = p.method
	case codeHost:
		if vs := metadata.ValueFromIncomingContext(p.ctx, ":authority"); len(vs) > 0 {
			v = normalizeHost(vs[len(vs)-1])
		}
	}
	if v == "" {
		return "", false
	}
	return truncate(v, x.maxValueLen), true
}

// metadataValues returns the values of the lower-case key in the incoming
// metadata of ctx, or, when those have none, in its outgoing metadata.
func metadataValues(ctx context.Context, key string) []string {
	if vs := metadata.ValueFromIncomingContext(ctx, key); len(vs) > 0 {
		return vs
	}
	// Not FromOutgoingContext, which copies all the outgoing metadata.
	return metadata.ValueFromOutgoingContext(ctx, key)
}

// peerAddr returns the IP address of the peer of ctx, unmapped and without
// zone; the zero Addr when ctx has no peer or the peer is not an IP peer.
func peerAddr(ctx context.Context) netip.Addr {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return netip.Addr{}
	}
	if tcp, ok := p.Addr.(*net.TCPAddr); ok {
		a, _ := netip.AddrFromSlice(tcp.IP)
		return a.Unmap()
	}
	a, _ := parseHop(p.Addr.String())
	return a
}

// grpcClientIP returns the client of the call in ctx: the peer, or, when it
// is a trusted proxy, the client its forwarding metadata name.
func (x *Extractor) grpcClientIP(ctx context.Context) (netip.Addr, string) {
	a := peerAddr(ctx)
	if !x.isTrusted(a) {
		return a, ""
	}
	md, _ := metadata.FromIncomingContext(ctx)
	return x.forwarded(a, "", md, "x-forwarded-for", "forwarded", "x-real-ip")
}
