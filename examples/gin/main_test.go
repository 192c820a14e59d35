package main

import (
	"os"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/sluicekit/sluice/examples/internal/exampletest"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

func TestRun(t *testing.T) { exampletest.Run(t, run) }
