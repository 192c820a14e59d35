package rulesfile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLongValuesQuotedShort: a JSON rules file whose one value or key is 1
// MB is refused with a short error naming the field (before, an unknown
// algorithm and a breaker's strategy were echoed whole), by Parse and by
// Load alike.
func TestLongValuesQuotedShort(t *testing.T) {
	big := strings.Repeat("a", 1<<20)
	rule := func(kv ...any) map[string]any {
		r := map[string]any{"resource": "GET /a", "kind": "flow", "limit": 5, "window": "1s"}
		for i := 0; i+1 < len(kv); i += 2 {
			r[kv[i].(string)] = kv[i+1]
		}
		return r
	}
	for field, file := range map[string]map[string]any{
		"algorithm":     {"rules": []any{rule("algorithm", big)}},
		"strategy":      {"rules": []any{rule("kind", "breaker", "limit", 0, "strategy", big)}},
		"window":        {"rules": []any{rule("window", big)}},
		"unknown field": {"rules": []any{rule(big, 1)}},
		"top-level key": {"rules": []any{}, big: 1},
		"overrides":     {"rules": []any{rule("kind", "hotspot", "param", "ip", "overrides", map[string]any{big: 1})}},
		"param":         {"rules": []any{rule("kind", "hotspot", "param", big+"!")}},
	} {
		t.Run(field, func(t *testing.T) {
			data, err := json.Marshal(file)
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "rules.json")
			require.NoError(t, os.WriteFile(path, data, 0o600))
			_, perr := Parse(data)
			_, lerr := Load(path)
			for _, err := range []error{perr, lerr} {
				require.Error(t, err)
				assert.Less(t, len(err.Error()), 512, "%.300s", err)
				assert.Contains(t, err.Error(), strings.Fields(field)[0])
			}
		})
	}
}
