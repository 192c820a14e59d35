package core_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/rulesfile"
	"github.com/sluicekit/sluice/core/store"
)

// TestReadmeRulesLoad loads every rules file the README and package
// rulesfile's documentation show, as written: a Guard with those rules
// starts (with a store named redis for the ones that name it).
func TestReadmeRulesLoad(t *testing.T) {
	for _, doc := range []struct {
		path string
		// blocks finds the rules files in the text.
		blocks func(text string) []string
	}{
		{"../README.md", markdownYAML},
		{"rulesfile/doc.go", docYAML},
	} {
		text, err := os.ReadFile(doc.path)
		require.NoError(t, err)
		blocks := doc.blocks(string(text))
		require.NotEmpty(t, blocks, "%s shows rules files", doc.path)
		t.Logf("%s: %d rules files", doc.path, len(blocks))
		for _, b := range blocks {
			rules, err := rulesfile.Parse([]byte(b))
			require.NoError(t, err, "%s:\n%s", doc.path, b)
			opts := []core.Option{core.WithClock(clock.NewFake(0)), core.WithRules(rules...)}
			if strings.Contains(b, "store: redis") {
				s, err := store.NewMemory(clock.NewFake(0), 100)
				require.NoError(t, err)
				opts = append(opts, core.WithStore("redis", s))
			}
			g, err := core.New(opts...)
			require.NoError(t, err, "%s:\n%s", doc.path, b)
			require.NoError(t, g.Close())
		}
	}
}

// markdownYAML returns the yaml code blocks of a Markdown text.
func markdownYAML(text string) []string {
	var blocks []string
	for _, m := range regexp.MustCompile("(?ms)^```yaml\n(.*?)^```\n").FindAllStringSubmatch(text, -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

// docYAML returns the rules files of a doc comment: its indented blocks
// that start with "rules:".
func docYAML(text string) []string {
	var blocks []string
	var cur []string
	for line := range strings.SplitSeq(text, "\n") {
		body, indented := strings.CutPrefix(line, "//\t")
		switch {
		case indented && (len(cur) > 0 || body == "rules:"):
			cur = append(cur, body)
		case len(cur) > 0:
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
			cur = nil
		}
	}
	return blocks
}
