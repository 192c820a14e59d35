package sluicegrpc

import (
	"context"
	"net"
	"net/netip"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/sluicekit/sluice/extractors"
)

// callInfo is the extractors.GRPCCall of grpc-go: it reads a call's
// metadata and peer from its context. The interceptors read params through
// it. Reading metadata allocates the copy of
// the key's value list that grpc-go makes (it offers no way to read
// metadata without one).
type callInfo struct{}

var _ extractors.GRPCCall = callInfo{}

// Metadata returns the values of key in the incoming metadata of ctx, or
// with outgoing in its outgoing metadata (extractors.GRPCCall).
func (callInfo) Metadata(ctx context.Context, key string, outgoing bool) []string {
	if outgoing {
		// Not FromOutgoingContext, which copies all the outgoing metadata.
		return metadata.ValueFromOutgoingContext(ctx, key)
	}
	return metadata.ValueFromIncomingContext(ctx, key)
}

// Peer returns the IP address of the peer of ctx (extractors.GRPCCall).
func (callInfo) Peer(ctx context.Context) netip.Addr {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return netip.Addr{}
	}
	if tcp, ok := p.Addr.(*net.TCPAddr); ok {
		a, _ := netip.AddrFromSlice(tcp.IP)
		return a.Unmap()
	}
	ap, err := netip.ParseAddrPort(p.Addr.String())
	if err != nil {
		a, _ := netip.ParseAddr(p.Addr.String())
		return a.Unmap().WithZone("")
	}
	return ap.Addr().Unmap().WithZone("")
}
