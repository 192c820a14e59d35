package extractors

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
