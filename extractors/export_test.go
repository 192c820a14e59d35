package extractors

import (
	"context"
	"net/http"
	"net/netip"

	"github.com/sluicekit/sluice/core"
)

// Unexported names the tests of package extractors_test use.
type Param = parsedParam

// ParseParam is parseParam, for the tests of package extractors_test.
var ParseParam = parseParam

// Param kinds and defaults, for the tests of package extractors_test.
const (
	KindHeader   = kindHeader
	KindMetadata = kindMetadata
	KindQuery    = kindQuery
	KindCookie   = kindCookie
	KindPath     = kindPath
	KindIP       = kindIP
	KindPeer     = kindPeer
	KindMethod   = kindMethod
	KindHost     = kindHost
	KindCustom   = kindCustom

	DefaultMaxValueLen = defaultMaxValueLen
	DefaultMaxValues   = defaultMaxValues
)

// HTTPParams returns the params of r, for the tests of package
// extractors_test.
func (x *Extractor) HTTPParams(r *http.Request, path PathParams) core.Params {
	p := new(Params)
	p.ResetHTTP(x, r, path)
	return p
}

// GRPCParams returns the params of a gRPC call, for the tests of package
// extractors_test.
func (x *Extractor) GRPCParams(call GRPCCall, ctx context.Context, fullMethod string) core.Params {
	p := new(Params)
	p.ResetGRPC(x, call, ctx, fullMethod)
	return p
}

// NormalizeRoute is normalizeRoute, for the tests of package extractors_test.
var NormalizeRoute = normalizeRoute

// OverflowValue is overflowValue, for the tests of package extractors_test.
const OverflowValue = overflowValue

// ClientIP is clientIP, for the tests of package extractors_test.
func (x *Extractor) ClientIP(r *http.Request) netip.Addr { return x.clientIP(r) }
