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

// TestREADMERulesLoad loads every rules file the README shows, as written:
// a Guard with those rules starts (with a store named redis for the ones
// that name it, as the README's Go code gives one).
func TestREADMERulesLoad(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```\n").FindAllSubmatch(readme, -1)
	n := 0
	for _, b := range blocks {
		text := string(b[1])
		if strings.Contains(text, "  - ...") {
			continue // an outline, not a file
		}
		n++
		rules, err := rulesfile.Parse(b[1])
		require.NoError(t, err, "%s", text)
		opts := []core.Option{core.WithClock(clock.NewFake(0)), core.WithRules(rules...)}
		if strings.Contains(text, "store: redis") {
			s, err := store.NewMemory(clock.NewFake(0), 100)
			require.NoError(t, err)
			opts = append(opts, core.WithStore("redis", s))
		}
		g, err := core.New(opts...)
		require.NoError(t, err, "%s", text)
		require.NoError(t, g.Close())
	}
	require.GreaterOrEqual(t, n, 3, "the README's rules files are found")
}
