package extractors_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// TestCookieOverrideKeysNoRequestCarriesAreRefused: the Extractor reads a
// cookie's value up to the next ';', without the spaces and tabs after it
// ("tier=gold ; theme=dark" yields "gold"). An override key with a ';', or
// ending in a space or tab, can never apply; as for header keys with a
// comma or spaces around them, the Guard must refuse it, naming rule and
// key, rather than accept a rule that silently never applies (the
// package doc: a rule applies or is refused loudly). Keys cookies can
// carry stay accepted.
func TestCookieOverrideKeysNoRequestCarriesAreRefused(t *testing.T) {
	x, err := extractors.New()
	require.NoError(t, err)
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Cookie", "tier=gold ; theme=dark")
	var p extractors.Params
	p.ResetHTTP(x, r, nil)
	v, ok := p.Param("cookie:tier", 0)
	require.True(t, ok)
	require.Equal(t, "gold", v)

	rule := core.Rule{Name: "per-tier", Resource: "GET /a", Kind: core.KindHotspot, Param: "cookie:tier", Limit: 5, Window: time.Second,
		Overrides: map[string]int64{"gold ": 10, "a;b": 10, "silver\t": 10, " platinum": 10, "gold": 10, `"quoted"`: 10}}
	_, err = core.New(core.WithParamSource(x.HTTPSource()), core.WithRules(rule))
	require.Error(t, err)
	for _, key := range []string{`"gold "`, `"a;b"`, `"silver\t"`} {
		assert.Contains(t, err.Error(), "overrides key "+key+" can never apply", key)
	}
	for _, key := range []string{`" platinum"`, `"gold"`, `"\"quoted\""`} {
		assert.NotContains(t, err.Error(), "key "+key, key)
	}
}
