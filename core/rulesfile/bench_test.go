package rulesfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// bigRulesFile writes a YAML rules file of n rules, of the four kinds in
// turn, and returns its path.
func bigRulesFile(b *testing.B, n int) string {
	var sb strings.Builder
	sb.WriteString("rules:\n")
	for i := range n {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&sb, "  - name: flow-%d\n    resource: GET /r%d/{id}\n    kind: flow\n    limit: 100\n    window: 1s\n", i, i)
		case 1:
			fmt.Fprintf(&sb, "  - name: conc-%d\n    resource: GET /r%d\n    kind: concurrency\n    limit: 10\n", i, i)
		case 2:
			fmt.Fprintf(&sb, "  - name: hot-%d\n    resource: GET /r%d/*\n    kind: hotspot\n    limit: 5\n    param: header:X-User-ID\n    overrides:\n      vip: 100\n", i, i)
		case 3:
			fmt.Fprintf(&sb, "  - name: brk-%d\n    resource: /pkg.Svc/M%d\n    kind: breaker\n    strategy: error-ratio\n    threshold: 0.5\n", i, i)
		}
	}
	path := filepath.Join(b.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkLoad10k measures a file of 10,000 rules on its way to a Guard:
// read and validated (Load), started in a Guard that validates each rule
// once (NewGuard), and Load then core.New, which validates twice.
func BenchmarkLoad10k(b *testing.B) {
	path := bigRulesFile(b, 10_000)
	b.Run("Load", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rulesfile.Load(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("NewGuard", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			g, err := rulesfile.NewGuard(path)
			if err != nil {
				b.Fatal(err)
			}
			_ = g.Close()
		}
	})
	b.Run("Load+New", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rules, err := rulesfile.Load(path)
			if err != nil {
				b.Fatal(err)
			}
			g, err := core.New(core.WithRules(rules...))
			if err != nil {
				b.Fatal(err)
			}
			_ = g.Close()
		}
	})
}
