package main

import (
	"testing"

	"github.com/sluicekit/sluice/examples/internal/exampletest"
)

func TestRun(t *testing.T) { exampletest.Run(t, run) }
