package rulesfile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWatcherReportsAFileThatNeverHoldsStill attacks "a rules file that is
// silently ignored is a limit nobody knows is not in force" (package doc,
// Logging): a writer that rewrites the rules file before every poll (a
// generator stamping the time in a comment, say) keeps every version from
// applying, since a version applies once two polls saw it. Within 100
// polls of such a file the watcher must say so: a warning, or Stats
// failing; the rules in force are kept meanwhile.
func TestWatcherReportsAFileThatNeverHoldsStill(t *testing.T) {
	x := newWatched(t, "rules.yaml", rulesYAML("a", 1))
	x.run()
	for i := range 100 {
		x.write(rulesYAML("a", 2+i))
		x.poll(1)
	}
	assert.Equal(t, []string{"a=1"}, x.ruleNames(), "no version held still: the rules in force are kept")
	st := x.w.Stats()
	assert.True(t, len(x.warnings()) > 0 || st.Failing, "100 polls saw 100 versions, none applied, and nothing said so: warnings %v, stats %+v", x.warnings(), st)
	assert.Len(t, x.warnings(), 1, "said once")
	assert.True(t, st.Failing)
	_, errs := x.reported()
	assert.Len(t, errs, 1, "OnReload told once")

	// The last version, once it holds still, applies.
	x.poll(2)
	assert.Equal(t, []string{"a=101"}, x.ruleNames())
	assert.False(t, x.w.Stats().Failing)
}
