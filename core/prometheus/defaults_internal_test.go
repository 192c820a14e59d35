package sluiceprom

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestDocumentedDefaults checks the default namespace the package
// documentation states: a Collector made without WithNamespace names its
// metrics with the constant, as does the documentation's table of metrics,
// and the text names it as the default.
func TestDocumentedDefaults(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(0)))
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Close()) }()
	c, err := NewCollector(g)
	require.NoError(t, err)
	require.Contains(t, c.desc.requests.String(), `fqName: "`+defaultNamespace+`_requests_total"`, "the code's default")

	text, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	prose := strings.Join(strings.Fields(regexp.MustCompile(`(?m)^\s*//`).ReplaceAllString(string(text), " ")), " ")
	m := regexp.MustCompile(`namespace, "(\w+)" unless WithNamespace gives another`).FindStringSubmatch(prose)
	require.NotNil(t, m, "doc.go states the default namespace")
	require.Equal(t, defaultNamespace, m[1], "doc.go's default namespace")
	// The table of metrics: indented lines of a name, a type and a meaning.
	names := regexp.MustCompile(`(?m)^//\t(\w+_\w+) +(?:counter|gauge|histogram) `).FindAllStringSubmatch(string(text), -1)
	require.NotEmpty(t, names, "doc.go lists the metrics")
	for _, n := range names {
		require.True(t, strings.HasPrefix(n[1], defaultNamespace+"_"), "doc.go lists %s, not under the default namespace %s", n[1], defaultNamespace)
	}
}
