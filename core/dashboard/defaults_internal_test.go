package dashboard

import (
	"html"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/doctext"
)

// TestDocumentedDefaults checks each default of the options that the
// package documentation and the options' doc comments state: a handler
// built without options has the constant, and every text states it.
func TestDocumentedDefaults(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(0)))
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Close()) }()
	hh, err := New(g)
	require.NoError(t, err)
	h := hh.(*handler)
	for _, d := range []struct {
		name      string
		want, got any
		docs      []doctext.Phrase
	}{
		{"WithTitle", true, strings.Contains(string(h.page), "<title>"+html.EscapeString(defaultTitle)+"</title>"), []doctext.Phrase{
			{Path: "dashboard.go", Pattern: `page's title \(default "([^"]*)"\)`, Want: defaultTitle},
		}},
		{"WithHistory", time.Duration(defaultHistory) * time.Second, h.history, []doctext.Phrase{
			{Path: "doc.go", Pattern: `charts of the last (\d+) minutes \(WithHistory\)`, Want: strconv.Itoa(defaultHistory / 60)},
			{Path: "dashboard.go", Pattern: `the page's charts show \(default (\d+),`, Want: strconv.Itoa(defaultHistory)},
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			require.EqualValues(t, d.want, d.got, "the code's default")
			doctext.Check(t, d.docs...)
		})
	}
}
