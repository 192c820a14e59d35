package extractors_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

func TestParseParam(t *testing.T) {
	ok := []struct {
		spec string
		want extractors.Param
	}{
		{"header:X-User-ID", extractors.Param{Kind: "header", Name: "X-User-ID"}},
		{"header:x-user-id", extractors.Param{Kind: "header", Name: "x-user-id"}},
		{"metadata:x-api-key", extractors.Param{Kind: "metadata", Name: "x-api-key"}},
		{"query:tenant", extractors.Param{Kind: "query", Name: "tenant"}},
		{"query:a:b", extractors.Param{Kind: "query", Name: "a:b"}},
		{"cookie:sid", extractors.Param{Kind: "cookie", Name: "sid"}},
		{"path:id", extractors.Param{Kind: "path", Name: "id"}},
		{"path:*", extractors.Param{Kind: "path", Name: "*"}},
		{"ip", extractors.Param{Kind: "ip"}},
		{"peer", extractors.Param{Kind: "peer"}},
		{"method", extractors.Param{Kind: "method"}},
		{"host", extractors.Param{Kind: "host"}},
		{"tenant", extractors.Param{Kind: "custom", Name: "tenant"}},
		{"api.key-v2_x", extractors.Param{Kind: "custom", Name: "api.key-v2_x"}},
	}
	for _, tc := range ok {
		t.Run(tc.spec, func(t *testing.T) {
			p, err := extractors.ParseParam(tc.spec)
			require.NoError(t, err)
			assert.Equal(t, tc.want, p)
			assert.Equal(t, tc.spec, p.String(), "String gives the spec back")
		})
	}

	bad := []struct{ spec, msg string }{
		{"", `param is required`},
		{"header:", `"header:" needs a name after the colon`},
		{"header: X", "must not contain spaces"},
		{"header:X\x00", "control characters"},
		{"form:x", `unknown kind "form"`},
		{":x", `unknown kind ""`},
		{"1abc", `got "1abc"`},
		{"a b", `got "a b"`},
		{"ip:x", `unknown kind "ip"`},
	}
	for _, tc := range bad {
		t.Run(tc.spec, func(t *testing.T) {
			_, err := extractors.ParseParam(tc.spec)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// TestParseParamAgreesWithCore checks that ParseParam accepts exactly the
// params core accepts in hotspot rules, so a rule never loads with a param
// the extractors cannot read, nor the other way round.
func TestParseParamAgreesWithCore(t *testing.T) {
	for _, spec := range []string{
		"header:X-User-ID", "metadata:k", "query:q", "cookie:c", "path:p", "ip", "peer", "method", "host",
		"custom1", "a.b-c_d", "", "header:", "header: x", "form:x", "1x", "x y", "ip:x", ":", "a:b:c", "query:é",
		"header:\t", "_x", "x\u00e9",
	} {
		_, coreErr := core.NormalizeRules([]core.Rule{{Resource: "*", Kind: core.KindHotspot, Param: spec, Limit: 1}})
		_, err := extractors.ParseParam(spec)
		assert.Equal(t, coreErr == nil, err == nil, "spec %q: core says %v, ParseParam says %v", spec, coreErr, err)
	}
}
