package rulesfile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestHugeIntegersSayWhatIsAllowed: a limit beyond 64 bits is an integer
// too large, and the problem says what is allowed, as one within 64 bits
// does ("limit must be <= 4503599627370496, got 9999999999999999"). YAML
// said "limit must be an integer, got 99999999999999999999" (the YAML
// parser reads it as a float) and JSON "limit is out of range", neither
// naming the bound.
func TestHugeIntegersSayWhatIsAllowed(t *testing.T) {
	for name, doc := range map[string]string{
		"yaml":          "rules:\n  - name: a\n    resource: x\n    kind: flow\n    limit: 99999999999999999999\n",
		"yaml negative": "rules:\n  - name: a\n    resource: x\n    kind: flow\n    limit: -9223372036854775809\n",
		"json":          `{"rules": [{"name": "a", "resource": "x", "kind": "flow", "limit": 9223372036854775808}]}`,
	} {
		_, err := rulesfile.Parse([]byte(doc))
		assert.ErrorContains(t, err, "limit must be", name)
		assert.NotContains(t, err.Error(), "must be an integer", name)
		assert.Regexp(t, `limit must be (<=|>=|between) `, err.Error(), name)
	}
}
