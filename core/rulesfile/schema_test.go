package rulesfile

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/hotspot"
	"github.com/sluicekit/sluice/core/store"
)

// schemaDoc is the part of rules.schema.json the tests read.
type schemaDoc struct {
	Properties struct {
		Rules struct {
			MaxItems int `json:"maxItems"`
		} `json:"rules"`
	} `json:"properties"`
	Defs struct {
		Rule struct {
			Required   []string                  `json:"required"`
			Properties map[string]schemaProperty `json:"properties"`
		} `json:"rule"`
	} `json:"$defs"`
}

type schemaProperty struct {
	Type                 string          `json:"type"`
	Enum                 []string        `json:"enum"`
	Ref                  string          `json:"$ref"`
	AdditionalProperties *schemaProperty `json:"additionalProperties"`
}

// TestSchemaMatchesRule checks rules.schema.json against the Go
// types: every json field of Rule is a property of a rule, of the type
// the field's Go type reads from a rules file, and every property is a
// field; the enums are the constants of their packages.
func TestSchemaMatchesRule(t *testing.T) {
	file, err := os.ReadFile("rules.schema.json")
	require.NoError(t, err)
	assert.Equal(t, string(file), Schema, "Schema embeds the file")
	var doc schemaDoc
	require.NoError(t, json.Unmarshal(file, &doc))
	props := doc.Defs.Rule.Properties
	assert.Equal(t, maxRules, doc.Properties.Rules.MaxItems)
	assert.Equal(t, []string{"resource", "kind"}, doc.Defs.Rule.Required)

	rt := reflect.TypeFor[core.Rule]()
	var fields []string
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		require.NotEmpty(t, name, "Rule.%s has a json name", f.Name)
		fields = append(fields, name)
		p, ok := props[name]
		if !assert.True(t, ok, "Rule.%s (%s) is in the schema", f.Name, name) {
			continue
		}
		switch f.Type {
		case reflect.TypeFor[time.Duration]():
			assert.Equal(t, "#/$defs/duration", p.Ref, name)
		case reflect.TypeFor[map[string]int64]():
			assert.Equal(t, "object", p.Type, name)
			if assert.NotNil(t, p.AdditionalProperties, name) {
				assert.Equal(t, "integer", p.AdditionalProperties.Type, name)
			}
		default:
			want := map[reflect.Kind]string{reflect.String: "string", reflect.Int: "integer", reflect.Int64: "integer", reflect.Float64: "number", reflect.Bool: "boolean"}[f.Type.Kind()]
			require.NotEmpty(t, want, "Rule.%s has a type the test knows", f.Name)
			if want == "string" && p.Enum != nil {
				continue // the enums are checked below
			}
			assert.Equal(t, want, p.Type, name)
		}
	}
	assert.ElementsMatch(t, fields, slices.Collect(maps.Keys(props)), "every property is a field")

	strs := func(vs ...any) []string {
		var out []string
		for _, v := range vs {
			out = append(out, reflect.ValueOf(v).String())
		}
		return out
	}
	assert.Equal(t, strs(core.KindFlow, core.KindConcurrency, core.KindHotspot, core.KindBreaker, core.KindAdaptive, core.KindSystem), props["kind"].Enum)
	algorithms := strs(flow.LeapArray, flow.FixedWindow, flow.SlidingLog, flow.SlidingCounter, flow.TokenBucket, flow.LeakyBucket)
	for _, a := range strs(hotspot.TokenBucket, hotspot.LeakyBucket, hotspot.Concurrency) {
		if !slices.Contains(algorithms, a) {
			algorithms = append(algorithms, a)
		}
	}
	assert.Equal(t, algorithms, props["algorithm"].Enum)
	assert.Equal(t, strs(store.Exact, store.Approximate), props["mode"].Enum)
	assert.Equal(t, strs(core.FailLocal, core.FailOpen, core.FailClosed), props["onFailure"].Enum)
	assert.Equal(t, strs(core.MissingSkip, core.MissingReject, core.MissingShared), props["onMissing"].Enum)
	assert.Equal(t, strs(breaker.SlowRatio, breaker.ErrorRatio, breaker.ErrorCount, core.StrategyBBR), props["strategy"].Enum)
}

// rulesSchema compiles rules.schema.json.
func rulesSchema(t testing.TB) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(Schema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("rules.schema.json", doc))
	s, err := c.Compile("rules.schema.json")
	require.NoError(t, err)
	return s
}

// schemaInstance reads a rules file as the value a JSON Schema validates:
// YAML decoded, then written as JSON and read back.
func schemaInstance(t testing.TB, path string) any {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	if formatOf(path) == formatYAML {
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return err // a syntax error: no instance
		}
		data, err = json.Marshal(v)
		require.NoError(t, err, path)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return v
}

// repoRulesFiles returns the rules files of the repository: the files
// git tracks whose name matches rules*.yaml, .yml or .json, and those of
// testdata (tracked or not yet), but the schema.
func repoRulesFiles(t testing.TB) []string {
	out, err := exec.Command("git", "-C", "../..", "ls-files").Output()
	require.NoError(t, err)
	match := regexp.MustCompile(`rules.*\.(ya?ml|json)$`)
	var files []string
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if match.MatchString(f) && !strings.HasSuffix(f, ".schema.json") {
			files = append(files, filepath.Join("..", "..", f))
		}
	}
	require.NoError(t, filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && match.MatchString(d.Name()) {
			files = append(files, filepath.Join("..", "..", "core", "rulesfile", path))
		}
		return err
	}))
	slices.Sort(files)
	return slices.Compact(files)
}

// TestRulesFilesValidateAgainstSchema validates every rules file of the
// repository against rules.schema.json with a JSON Schema validator, and
// loads it with Load: the examples and valid testdata pass both,
// the testdata files meant to be invalid (named invalid-*) fail both.
func TestRulesFilesValidateAgainstSchema(t *testing.T) {
	schema := rulesSchema(t)
	files := repoRulesFiles(t)
	var valid, invalid int
	for _, path := range files {
		_, loadErr := Load(path)
		inst := schemaInstance(t, path)
		var schemaErr error
		if err, ok := inst.(error); ok {
			schemaErr = err
		} else {
			schemaErr = schema.Validate(inst)
		}
		if strings.HasPrefix(filepath.Base(path), "invalid-") {
			invalid++
			assert.Error(t, schemaErr, "%s is meant to be invalid; the schema accepts it", path)
			assert.Error(t, loadErr, "%s is meant to be invalid; Load accepts it", path)
			continue
		}
		valid++
		assert.NoError(t, schemaErr, path)
		assert.NoError(t, loadErr, path)
	}
	t.Logf("%d valid and %d invalid rules files", valid, invalid)
	assert.GreaterOrEqual(t, valid, 7)
	assert.GreaterOrEqual(t, invalid, 5)
}
