package rulesfile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWatcherSaysWhyOnceTheFileHoldsStill: a Watcher reports a rules file
// that changed at each of 10 polls in a row; once the file holds still,
// Stats.Err (and OnReload) says what is wrong with the version it holds.
// It kept saying "changed at each of the last 10 polls" when the file came
// to rest on a version refused before the flapping, sending the operator
// after a writer that had stopped, not after the invalid limit.
func TestWatcherSaysWhyOnceTheFileHoldsStill(t *testing.T) {
	x := newWatched(t, "rules.yaml", rulesYAML("a", 1))
	x.run()
	bad := rulesYAML("a", -1)
	x.write(bad)
	x.poll(2)
	st := x.w.Stats()
	require.True(t, st.Failing, "the invalid limit refused")
	require.ErrorContains(t, st.Err, "limit")
	for i := range 12 {
		x.write(rulesYAML("a", 2+i))
		x.poll(1)
	}
	require.ErrorContains(t, x.w.Stats().Err, "changed at each")
	x.write(bad)
	x.poll(3)
	st = x.w.Stats()
	assert.Equal(t, []string{"a=1"}, x.ruleNames())
	assert.True(t, st.Failing)
	assert.ErrorContains(t, st.Err, "limit", "the file holds still on the invalid version: its problem, not the flapping")
	_, errs := x.reported()
	if assert.NotEmpty(t, errs) {
		assert.ErrorContains(t, errs[len(errs)-1], "limit", "OnReload told why")
	}
}
