package httpadapter

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/internal/doctext"
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
	doctext.Check(t,
		doctext.Phrase{Path: "outcome.go", Pattern: `a request failed when its response status is (\d+) or more`, Want: status},
		doctext.Phrase{Path: "../nethttp/doc.go", Pattern: `an error when the status written is (\d+) or more`, Want: status},
		doctext.Phrase{Path: "../nethttp/options.go", Pattern: `The default counts statuses of (\d+) and above`, Want: status},
		doctext.Phrase{Path: "../nethttp/transport.go", Pattern: `\(by default a status of (\d+) and above\)`, Want: status},
	)
}
