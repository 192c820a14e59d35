package extractors

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/internal/doctext"
)

// TestDocumentedDefaults checks each default of the options that the
// package documentation and the options' doc comments state: an Extractor
// built without options has the constant, and every text states it.
func TestDocumentedDefaults(t *testing.T) {
	x, err := New()
	require.NoError(t, err)
	for _, d := range []struct {
		name      string
		want, got any
		docs      []doctext.Phrase
	}{
		{"WithMaxValueLen", defaultMaxValueLen, x.maxValueLen, []doctext.Phrase{
			{Path: "doc.go", Pattern: `longer than WithMaxValueLen bytes \(default (\d+)\)`, Want: strconv.Itoa(defaultMaxValueLen)},
			{Path: "extractor.go", Pattern: `bytes kept of one param value \(default (\d+)\)`, Want: strconv.Itoa(defaultMaxValueLen)},
		}},
		{"WithMaxValues", defaultMaxValues, x.maxValues, []doctext.Phrase{
			{Path: "doc.go", Pattern: `more than WithMaxValues values \(default (\d+)\)`, Want: strconv.Itoa(defaultMaxValues)},
			{Path: "extractor.go", Pattern: `one param yields per request \(default (\d+)\)`, Want: strconv.Itoa(defaultMaxValues)},
		}},
		{"WithIPv6Prefix", defaultIPv6Prefix, x.ipv6Bits, []doctext.Phrase{
			{Path: "doc.go", Pattern: `for IPv6, its /(\d+) \(WithIPv6Prefix\)`, Want: strconv.Itoa(defaultIPv6Prefix)},
			{Path: "extractor.go", Pattern: `make its ip param \(default (\d+)\)`, Want: strconv.Itoa(defaultIPv6Prefix)},
		}},
		{"WithTrustedProxies", 0, len(x.trusted), []doctext.Phrase{
			{Path: "doc.go", Pattern: `\(WithTrustedProxies; (\w+) by default`, Want: "none"},
		}},
		{"net/http header bytes", 1 << 20, http.DefaultMaxHeaderBytes, []doctext.Phrase{
			{Path: "values.go", Pattern: `net/http reads at most (\d+) MiB of headers by default`, Want: strconv.Itoa(http.DefaultMaxHeaderBytes >> 20)},
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			require.EqualValues(t, d.want, d.got, "the code's default")
			doctext.Check(t, d.docs...)
		})
	}
}
