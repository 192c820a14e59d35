package extractors_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// TestLongValuesQuotedShort: a rule naming a 1 MB or a 256-byte custom
// param the Extractor does not register, and a 1 MB trusted proxy or
// header name, are refused with a short error naming what is wrong
// (before, the param was echoed whole).
func TestLongValuesQuotedShort(t *testing.T) {
	big := strings.Repeat("a", 1<<20)
	x, err := extractors.New()
	require.NoError(t, err)
	_, err = core.New(core.WithParamSource(x), core.WithRules(core.Rule{
		Resource: "GET /a", Kind: core.KindHotspot, Param: big, Limit: 5, Window: time.Second}))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 1024, "%.300s", err)
	assert.Contains(t, err.Error(), "param must be at most 256 bytes")
	long := strings.Repeat("a", 256) // the longest param: quoted shortened too
	_, err = core.New(core.WithParamSource(x), core.WithRules(core.Rule{
		Resource: "GET /a", Kind: core.KindHotspot, Param: long, Limit: 5, Window: time.Second}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `: param "`+long[:64]+`"...`)
	assert.Contains(t, err.Error(), "is not a custom param")

	for _, opt := range []extractors.Option{extractors.WithTrustedProxies(big), extractors.WithClientIPHeader(big + ":")} {
		_, err := extractors.New(opt)
		require.Error(t, err)
		assert.Less(t, len(err.Error()), 512, "%.300s", err)
	}
}
