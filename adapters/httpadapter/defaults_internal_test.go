package httpadapter

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestDocumentedDefaults checks the default error classifier of the HTTP
// adapters as the docs of package sluicehttp and this package state it: an
// adapter configured without WithErrorClassifier counts a status as a
// failure from minFailureStatus on, and every text states that status.
func TestDocumentedDefaults(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(0)))
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Close()) }()
	var c Common
	c.Init("sluicehttp", g)
	require.NoError(t, c.FinishErr())
	require.False(t, c.Classify(minFailureStatus-1, nil), "status %d", minFailureStatus-1)
	require.True(t, c.Classify(minFailureStatus, nil), "status %d", minFailureStatus)
	status := strconv.Itoa(minFailureStatus)
	checkDocs(t,
		docPhrase{"outcome.go", `a request failed when its response status is (\d+) or more`, status},
		docPhrase{"../nethttp/doc.go", `an error when the status written is (\d+) or more`, status},
		docPhrase{"../nethttp/options.go", `The default counts statuses of (\d+) and above`, status},
		docPhrase{"../nethttp/transport.go", `\(by default a status of (\d+) and above\)`, status},
	)
}

// docPhrase is a value as one documentation file states it: the first
// group of pattern, in the file's text read as prose (comment markers and
// line breaks folded), must read want. A pattern matching nothing fails,
// so a reworded phrase is noticed. (core/internal/doctext does this for
// core's packages, which this one cannot import.)
type docPhrase struct{ path, pattern, want string }

func checkDocs(t *testing.T, phrases ...docPhrase) {
	t.Helper()
	for _, p := range phrases {
		b, err := os.ReadFile(p.path)
		require.NoError(t, err)
		prose := strings.Join(strings.Fields(regexp.MustCompile(`(?m)^\s*//`).ReplaceAllString(string(b), " ")), " ")
		ms := regexp.MustCompile(p.pattern).FindAllStringSubmatch(prose, -1)
		require.NotEmpty(t, ms, "%s states nothing matching %q", p.path, p.pattern)
		for _, m := range ms {
			require.Equal(t, p.want, m[1], "%s states %q where the code has %q", p.path, m[1], p.want)
		}
	}
}
