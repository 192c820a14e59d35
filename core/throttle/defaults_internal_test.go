package throttle

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/internal/doctext"
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
			{"doc.go", `K \(WithK, default ([\d.]+)\)`, strconv.FormatFloat(defaultK, 'g', -1, 64)},
			{"throttle.go", `before the client throttles \(default ([\d.]+)\)`, strconv.FormatFloat(defaultK, 'g', -1, 64)},
		}},
		{"WithWindow", defaultWindow, th.window, []doctext.Phrase{
			{"doc.go", `\(WithWindow, default (\d+) seconds\)`, strconv.Itoa(int(defaultWindow / time.Second))},
			{"throttle.go", `calls are counted over \(default (\S+)\)`, doctext.Duration(defaultWindow)},
		}},
		{"WithMaxPause", defaultMaxPause, th.maxPause, []doctext.Phrase{
			{"throttle.go", `pauses a resource \(default (\S+)\)`, doctext.Duration(defaultMaxPause)},
		}},
		{"WithMaxResources", defaultMaxResources, th.maxRes, []doctext.Phrase{
			{"throttle.go", `resources counted apart \(default (\d+)\)`, strconv.Itoa(defaultMaxResources)},
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			require.EqualValues(t, d.want, d.got, "the code's default")
			doctext.Check(t, d.docs...)
		})
	}
}
