package throttle

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/doctext"
)

// TestDocumentedDefaults checks each default of the options that the
// package documentation and the options' doc comments state: a Throttle
// built without options has the constant, and every text states it.
func TestDocumentedDefaults(t *testing.T) {
	th, err := New(clock.NewFake(0))
	require.NoError(t, err)
	for _, d := range []struct {
		name      string
		want, got any
		docs      []doctext.Phrase
	}{
		{"WithK", defaultK, th.k, []doctext.Phrase{
			{Path: "doc.go", Pattern: `K \(WithK, default ([\d.]+)\)`, Want: strconv.FormatFloat(defaultK, 'g', -1, 64)},
			{Path: "throttle.go", Pattern: `before the client throttles \(default ([\d.]+)\)`, Want: strconv.FormatFloat(defaultK, 'g', -1, 64)},
		}},
		{"WithWindow", defaultWindow, th.window, []doctext.Phrase{
			{Path: "doc.go", Pattern: `\(WithWindow, default (\d+) seconds\)`, Want: strconv.Itoa(int(defaultWindow / time.Second))},
			{Path: "throttle.go", Pattern: `calls are counted over \(default (\S+)\)`, Want: doctext.Duration(defaultWindow)},
		}},
		{"WithMaxPause", defaultMaxPause, th.maxPause, []doctext.Phrase{
			{Path: "throttle.go", Pattern: `pauses a resource \(default (\S+)\)`, Want: doctext.Duration(defaultMaxPause)},
		}},
		{"WithMaxResources", defaultMaxResources, th.maxRes, []doctext.Phrase{
			{Path: "throttle.go", Pattern: `resources counted apart \(default (\d+)\)`, Want: strconv.Itoa(defaultMaxResources)},
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			require.EqualValues(t, d.want, d.got, "the code's default")
			doctext.Check(t, d.docs...)
		})
	}
}
