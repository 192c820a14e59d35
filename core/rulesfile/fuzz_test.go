package rulesfile

import (
	"errors"
	"os"
	"testing"

	"github.com/sluicekit/sluice/core"
)

// FuzzParse parses arbitrary input as YAML and as JSON: parsing never
// panics, accepted rules are valid and normalized, and a rejection names
// at least one problem.
func FuzzParse(f *testing.F) {
	for _, file := range testdataRulesFiles(f) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []fileFormat{formatYAML, formatJSON} {
			rules, err := parse(data, format)
			if err != nil {
				var re *core.RulesError
				if !errors.As(err, &re) || len(re.Problems) == 0 || err.Error() == "" {
					t.Fatalf("format %d: error without problems: %#v", format, err)
				}
				continue
			}
			if _, err := core.NormalizeRules(rules); err != nil {
				t.Fatalf("format %d: parsed rules are invalid: %v", format, err)
			}
			for _, r := range rules {
				if r.Name == "" {
					t.Fatalf("format %d: rule without a name: %+v", format, r)
				}
			}
		}
	})
}
