package sluiceotel_test

import (
	"testing"

	"github.com/sluicekit/sluice/core/internal/testmain"
)

func TestMain(m *testing.M) { testmain.Run(m, nil) }
