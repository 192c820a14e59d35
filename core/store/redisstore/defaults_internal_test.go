package redisstore

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/store"
)

// TestDocumentedDefaults checks each default of the options that the
// package documentation and the options' doc comments state: a Store made
// without options has the constant, and every text states it.
func TestDocumentedDefaults(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never called
	defer client.Close()
	s, err := New(client)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	rules, err := core.NormalizeRules([]core.Rule{{Resource: "/", Kind: core.KindFlow, Limit: 1, Store: "redis"}})
	require.NoError(t, err)
	for _, d := range []struct {
		name      string
		want, got any
		docs      [][3]string // path, pattern whose first group states the value, the value as written there
	}{
		{"core.Rule.Mode", store.Exact, rules[0].Mode, [][3]string{
			{"doc.go", `(\w+) \(store\.\w+, the default\)`, strings.ToUpper(string(store.Exact[:1])) + string(store.Exact[1:])},
		}},
		{"WithPrefix", defaultPrefix, s.o.prefix, [][3]string{
			{"options.go", `Redis key the Store writes \(default "([^"]*)"\)`, defaultPrefix},
			{"doc.go", `PREFIX from WithPrefix \(default "([^"]*)"\)`, defaultPrefix},
		}},
		{"WithTimeout", defaultTimeout, s.o.timeout, [][3]string{
			{"options.go", `one call of the Store may take \(default (\S+)\):`, defaultTimeout.String()},
			{"doc.go", `\(WithTimeout, default (\S+)\)`, defaultTimeout.String()},
		}},
		{"WithMaxLag", defaultMaxLag, s.o.maxLag, [][3]string{
			{"options.go", `while the process runs late \(default (\S+),`, defaultMaxLag.String()},
			{"doc.go", `WithMaxLag \(default (\S+)\)`, defaultMaxLag.String()},
		}},
		{"WithIdleExpiry", defaultIdleExpiry, s.o.idle, [][3]string{
			{"options.go", `mattering \(default (\S+)\):`, defaultIdleExpiry.String()},
			{"doc.go", `\(WithIdleExpiry, default (\S+)\)`, defaultIdleExpiry.String()},
		}},
		{"WithBatchSize", defaultBatchSize, s.o.batch, [][3]string{
			{"options.go", `trip to Redis \(default (\d+);`, strconv.Itoa(defaultBatchSize)},
		}},
		{"WithSyncPeriod", defaultSyncPeriod, s.o.syncPeriod, [][3]string{
			{"options.go", `reads back the others' \(default (\S+),`, defaultSyncPeriod.String()},
			{"doc.go", `\(WithSyncPeriod, default (\S+)\)`, defaultSyncPeriod.String()},
		}},
		{"WithMaxKeys", defaultMaxKeys, s.o.maxKeys, [][3]string{
			{"options.go", `approximate mode tracks locally \(default (\d+)\)`, strconv.Itoa(defaultMaxKeys)},
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			require.EqualValues(t, d.want, d.got, "the code's default")
			for _, p := range d.docs {
				text, err := os.ReadFile(p[0])
				require.NoError(t, err)
				// The comment as prose: no "//" at line starts, one space for each run of white space.
				words := strings.Fields(regexp.MustCompile(`(?m)^\s*//`).ReplaceAllString(string(text), " "))
				ms := regexp.MustCompile(p[1]).FindAllStringSubmatch(strings.Join(words, " "), -1)
				require.NotEmpty(t, ms, "%s states nothing matching %q", p[0], p[1])
				for _, m := range ms {
					require.Equal(t, p[2], m[1], "%s states %q where the code has %q", p[0], m[1], p[2])
				}
			}
		})
	}
}
