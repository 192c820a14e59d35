package rulesfile

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core"
)

// FuzzParse parses arbitrary input as YAML and as JSON, from a string and
// from a file, and decodes it into Rules, directly, with encoding/json and
// with YAML:
// nothing panics, accepted rules are valid and normalized, and a rejection
// names at least one problem. Its corpus (testdata/fuzz/FuzzParse) keeps
// every crasher found, "]}[" among them.
func FuzzParse(f *testing.F) {
	addTestdataSeeds(f)
	// The seeds of the hand-written YAML rule counter's fuzz target, gone
	// with it: rules lists in block and flow style, quotes holding
	// brackets, unbalanced brackets after the list, nested lists.
	for _, s := range []string{"rules:\n  - a\n  - b\n", "rules: [{a: '}'}, {b: \"]\"}]\n", "rules: []]}[\n", "rules:\n- - x\n"} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []fileFormat{formatYAML, formatJSON} {
			rules, err := parse(data, format)
			if err != nil {
				var re *core.RulesError
				if !errors.As(err, &re) || len(re.Problems) == 0 || err.Error() == "" {
					t.Fatalf("format %d: error without problems: %#v", format, err)
				}
			} else {
				if _, err := core.NormalizeRules(rules); err != nil {
					t.Fatalf("format %d: parsed rules are invalid: %v", format, err)
				}
				for _, r := range rules {
					if r.Name == "" {
						t.Fatalf("format %d: rule without a name: %+v", format, r)
					}
				}
			}
			// Load reads a file as it is written, up to its size limit
			// and counting JSON rules as it reads: it agrees with parse.
			path := filepath.Join(dir, "rules.yaml")
			if format == formatJSON {
				path = filepath.Join(dir, "rules.json")
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			loaded, lerr := Load(path)
			if (lerr == nil) != (err == nil) || len(loaded) != len(rules) {
				t.Fatalf("format %d: Load gives %d rules, %v; parse %d, %v", format, len(loaded), lerr, len(rules), err)
			}
		}
		var rs Rules
		_ = rs.UnmarshalJSON(data)
		_ = json.Unmarshal(data, &rs)
		_ = yaml.Unmarshal(data, &rs)
	})
}

// addTestdataSeeds adds the rules files of testdata to f's seeds.
func addTestdataSeeds(f *testing.F) {
	for _, file := range testdataRulesFiles(f) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}
