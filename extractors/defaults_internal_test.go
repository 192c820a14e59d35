package extractors

import (
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
		docs      []docPhrase
	}{
		{"WithMaxValueLen", defaultMaxValueLen, x.maxValueLen, []docPhrase{
			{"doc.go", `longer than WithMaxValueLen bytes \(default (\d+)\)`, strconv.Itoa(defaultMaxValueLen)},
			{"extractor.go", `bytes kept of one param value \(default (\d+)\)`, strconv.Itoa(defaultMaxValueLen)},
		}},
		{"WithMaxValues", defaultMaxValues, x.maxValues, []docPhrase{
			{"doc.go", `more than WithMaxValues values \(default (\d+)\)`, strconv.Itoa(defaultMaxValues)},
			{"extractor.go", `one param yields per request \(default (\d+)\)`, strconv.Itoa(defaultMaxValues)},
		}},
		{"WithIPv6Prefix", defaultIPv6Prefix, x.ipv6Bits, []docPhrase{
			{"doc.go", `for IPv6, its /(\d+) \(WithIPv6Prefix\)`, strconv.Itoa(defaultIPv6Prefix)},
			{"extractor.go", `make its ip param \(default (\d+)\)`, strconv.Itoa(defaultIPv6Prefix)},
		}},
		{"WithTrustedProxies", 0, len(x.trusted), []docPhrase{
			{"doc.go", `\(WithTrustedProxies; (\w+) by default`, "none"},
		}},
		{"net/http header bytes", 1 << 20, http.DefaultMaxHeaderBytes, []docPhrase{
			{"values.go", `net/http reads at most (\d+) MiB of headers by default`, strconv.Itoa(http.DefaultMaxHeaderBytes >> 20)},
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			require.EqualValues(t, d.want, d.got, "the code's default")
			checkDocs(t, d.docs...)
		})
	}
}

// docPhrase is a value as one documentation file states it: the first
// group of pattern, in the file's text read as prose (comment markers and
// line breaks folded), must read want. A pattern matching nothing fails,
// so a reworded phrase is noticed. (core/internal/doctext does this for
// core's packages, which this one cannot import.)
type docPhrase struct{ path, pattern, want string }

func checkDocs(t *testing.T, phrases ...docPhrase) {
	t.Helper()
	for _, p := range phrases {
		b, err := os.ReadFile(p.path)
		require.NoError(t, err)
		prose := strings.Join(strings.Fields(regexp.MustCompile(`(?m)^\s*//`).ReplaceAllString(string(b), " ")), " ")
		ms := regexp.MustCompile(p.pattern).FindAllStringSubmatch(prose, -1)
		require.NotEmpty(t, ms, "%s states nothing matching %q", p.path, p.pattern)
		for _, m := range ms {
			require.Equal(t, p.want, m[1], "%s states %q where the code has %q", p.path, m[1], p.want)
		}
	}
}
