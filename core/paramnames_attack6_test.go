package core_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// TestParamNamesNoRequestCarriesAreRefused: a hotspot rule's param that no
// request can carry limits nobody: with onMissing skip (the default) every
// request passes it, silently. A header, cookie or metadata name is an
// ASCII token (HTTP servers and gRPC refuse any other), and no name holds
// an invisible format character. They were accepted: "header:X-User-ID"
// followed by a zero-width space, or with a Cyrillic I, looks like the
// header in a rules file and never matched; so did "header:a:b".
func TestParamNamesNoRequestCarriesAreRefused(t *testing.T) {
	token := func(param, kind, r string) string {
		return "param name must be ASCII letters, digits and !#$%&'*+-.^_`|~ (no " + kind +
			" name has another character), got " + strconv.Quote(param) + ", with " + r
	}
	for param, want := range map[string]string{
		"header:X-User-ID\u200b":  `param name must not contain spaces, format or control characters, got "header:X-User-ID\u200b"`,
		"query:user\u2060":        `param name must not contain spaces, format or control characters, got "query:user\u2060"`,
		"header:X-User-\u0406D":   token("header:X-User-\u0406D", "header", "U+0406"),
		"cookie:s\u00e9ssion":     token("cookie:s\u00e9ssion", "cookie", "U+00E9"),
		"metadata:x-user:id":      token("metadata:x-user:id", "metadata", "U+003A"),
		"header:a:b":              token("header:a:b", "header", "U+003A"),
		"header:X/Y":              token("header:X/Y", "header", "U+002F"),
		"header:X-User-ID":        "",
		"header:X_Forwarded.For~": "",
		"metadata:x-user-bin":     "",
		"query:naïve":             "", // a query name is any text
		"path:id":                 "",
	} {
		for _, r := range []core.Rule{
			{Name: "h", Resource: "GET /x", Kind: core.KindHotspot, Param: param, Limit: 1},
			{Name: "h", Resource: "GET /x", Kind: core.KindSystem, Signal: core.SignalInFlight, Threshold: 1, Priority: param},
		} {
			_, err := core.NormalizeRules([]core.Rule{r})
			if want == "" {
				assert.NoError(t, err, param)
				continue
			}
			var rerr *core.RulesError
			require.ErrorAs(t, err, &rerr, param)
			require.Len(t, rerr.Problems, 1, param)
			field := "param"
			if r.Kind == core.KindSystem {
				field = "priority"
				want = "priority" + want[len("param"):]
			}
			assert.Equal(t, field, rerr.Problems[0].Field)
			assert.Equal(t, "rules[0] (h): "+want, rerr.Problems[0].Error(), param)
		}
	}
}
