package sluiceecho_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestDocumentedFailureStatus: without WithErrorClassifier, a request
// counts as an error in the Guard's statistics from the status the package
// documentation and WithErrorClassifier's doc state on, written or
// returned as an *echo.HTTPError, and not below it.
func TestDocumentedFailureStatus(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(0)))
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Close()) }()
	mw, err := sluiceecho.New(g)
	require.NoError(t, err)
	e := echo.New()
	e.Use(mw)
	e.GET("/status/:code", func(c echo.Context) error {
		code, _ := strconv.Atoi(c.Param("code"))
		if c.QueryParam("as") == "error" {
			return echo.NewHTTPError(code)
		}
		return c.NoContent(code)
	})
	errorsAt := func(code int, query string) int64 {
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/status/"+strconv.Itoa(code)+query, nil))
		for _, r := range g.Snapshot().Resources {
			if r.Resource == "GET /status/{code}" {
				return r.Total.Error
			}
		}
		t.Fatal("no statistics for GET /status/{code}")
		return 0
	}

	const failure = http.StatusInternalServerError
	require.Zero(t, errorsAt(failure-1, ""), "status %d", failure-1)
	require.Zero(t, errorsAt(failure-1, "?as=error"), "*echo.HTTPError %d", failure-1)
	require.EqualValues(t, 1, errorsAt(failure, ""), "status %d", failure)
	require.EqualValues(t, 2, errorsAt(failure, "?as=error"), "*echo.HTTPError %d", failure)
	for _, p := range [][2]string{
		{"doc.go", `or the status is (\d+) or more`},
		{"options.go", `The default counts a status of (\d+) and above`},
		{"options.go", `except an \*echo\.HTTPError below (\d+), which`},
	} {
		text, err := os.ReadFile(p[0])
		require.NoError(t, err)
		// The comment as prose: no "//" at line starts, one space for each run of white space.
		prose := strings.Join(strings.Fields(regexp.MustCompile(`(?m)^\s*//`).ReplaceAllString(string(text), " ")), " ")
		m := regexp.MustCompile(p[1]).FindStringSubmatch(prose)
		require.NotNil(t, m, "%s states nothing matching %q", p[0], p[1])
		require.Equal(t, strconv.Itoa(failure), m[1], "%s's failure status", p[0])
	}
}
