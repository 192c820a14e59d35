package rulesfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core"
)

// worstShape is a file of jsonWorstShapes and the most reading it may
// allocate: 32 times the size limit, 512 MiB, for a file of the size limit
// (worstShapeSize: an eighth of it with -race, for 32 times that), or of
// as many rules or overrides as a file may hold, which costs the same at
// any size: reading stops there.
type worstShape struct {
	data  []byte
	limit uint64
}

// jsonWorstShapes are JSON rules files of up to size bytes, of the shapes
// that cost the most memory per byte of text: lists of one-digit values
// inside a rule (164 times its size before), overrides of one key
// repeated, unknown fields and keys set twice, top-level keys repeated
// (221 times), deep lists, a file cut short, and up to 100,000 rules:
// empty, of unknown fields (791 times), of problems, valid ones with every
// field of a flow rule or with long strings.
func jsonWorstShapes(size int) map[string]worstShape {
	shape := func(data string, most bool) worstShape {
		if most { // as many rules or overrides as a file may hold
			return worstShape{[]byte(data), 32 * maxFileSize}
		}
		return worstShape{[]byte(data), uint64(32 * size)}
	}
	fill := func(head, item, tail string) worstShape {
		n := (size - len(head) - len(tail)) / len(item)
		return shape(head+strings.Repeat(item, n)+tail, strings.HasSuffix(head, `"overrides": {`) && n > maxOverrides)
	}
	rules := func(item string) worstShape {
		n := min(maxRules, (size-32)/(len(item)+2))
		return shape(`{"rules": [`+strings.Repeat(item+",\n", n-1)+item+"]}\n", n == maxRules)
	}
	long := strings.Repeat("x", maxFileSize/maxRules-64)
	var keys []string
	for i := range maxRuleKeys - 1 {
		keys = append(keys, fmt.Sprintf(`"%c%c":1`, 'a'+i/26, 'a'+i%26))
	}
	return map[string]worstShape{
		"list in a rule":         fill(`{"rules": [{"resource": "x", "kind": "flow", "limit": 1, "tags": [`, "1,", "1]}]}"),
		"list in a field":        fill(`{"rules": [{"resource": "x", "kind": "flow", "limit": [`, "1,", "1]}]}"),
		"overrides one key":      fill(`{"rules": [{"resource": "x", "kind": "hotspot", "limit": 1, "param": "ip", "overrides": {`, `"a":1,`, `"b":1}}]}`),
		"overrides of lists":     fill(`{"rules": [{"resource": "x", "kind": "hotspot", "limit": 1, "param": "ip", "overrides": {`, `"a":[],`, `"b":1}}]}`),
		"unknown fields":         fill(`{"rules": [{"resource": "x", "kind": "flow", "limit": 1`, `,"ab":1`, `}]}`),
		"top-level keys":         fill(`{"rules": [], `, `"a":1,`, `"b":1}`),
		"deep lists":             fill(`{"rules": [{"resource": "x", "kind": "flow", "limit": 1, "tags": [`, strings.Repeat("[", 60)+strings.Repeat("]", 60)+",", "1]}]}"),
		"empty rules":            rules(`{}`),
		"rules of unknown field": rules(`{"x": 1}`),
		"rules of lists":         rules(`[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]`),
		"rules of unknown keys":  rules("{" + strings.Join(keys, ",") + "}"),
		"rules of one key":       rules("{" + strings.Repeat(`"a":1,`, maxRuleKeys-1) + `"a":1}`),
		"rules of bad values":    rules(`{"resource":"","kind":"flow","limit":-1,"window":"-1s","buckets":-1,"burst":-1,"maxWait":"1","coldFactor":-1,"warmup":"-1s"}`),
		"full rules":             rules(`{"name":"r","resource":"GET /a","kind":"flow","limit":1,"window":"1s","algorithm":"leap-array","buckets":10,"shadow":false}`),
		"list in a rule, cut":    fill(`{"rules": [{"resource": "x", "kind": "flow", "limit": 1, "tags": [`, "1,", "1"),
		"long rules":             rules(`{"resource": "/` + long + `", "kind": "flow", "limit": 1}`),
	}
}

// allocatedBy returns the bytes f allocates (runtime.MemStats.TotalAlloc:
// every allocation, freed or not, so an upper bound of its peak).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestJSONMemoryBound parses JSON files of the most a JSON file may hold,
// in the shapes that cost the most memory (jsonWorstShapes): each
// allocates at most 32 times the 16 MiB size limit, 512 MiB, or with
// -race what worstShape says (measured: up to 380 MB, 100,000 valid flow
// rules of 12.5 MB, 30 times their size; a list of digits in a rule 8
// times its size). Before, a 16 MiB file allocated up to 3.7 GB.
func TestJSONMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("parses 16 MiB files")
	}
	for name, shape := range jsonWorstShapes(worstShapeSize) {
		data := shape.data
		require.LessOrEqual(t, len(data), worstShapeSize, name)
		var err error
		start := time.Now()
		allocated := allocatedBy(func() { _, err = parse(data, formatJSON) })
		t.Logf("%s: %d bytes, allocated %d bytes (%.1fx) in %v: %.200v", name, len(data), allocated, float64(allocated)/float64(len(data)), time.Since(start), err)
		assert.LessOrEqual(t, allocated, shape.limit, name)
	}
}

// TestRulesUnmarshalJSONMemoryBound decodes the JSON files of
// jsonWorstShapes as configurations of one's own holding a Rules field,
// which encoding/json hands the rules list: each allocates at most 32
// times the 16 MiB size limit (with -race, see worstShape), as the file
// does (measured: the same as the file, up to 342 MB). Before, Rules built
// the whole list's node tree: a list of digits in a rule allocated 2.7 GB,
// 160 times its size.
func TestRulesUnmarshalJSONMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 16 MiB files")
	}
	for name, shape := range jsonWorstShapes(worstShapeSize) {
		data := shape.data
		if !json.Valid(data) {
			continue // encoding/json refuses it before Rules sees it
		}
		var config struct {
			Rules Rules `json:"rules"`
		}
		var err error
		allocated := allocatedBy(func() { err = json.Unmarshal(data, &config) })
		t.Logf("%s: %d bytes, allocated %d bytes (%.1fx): %.200v", name, len(data), allocated, float64(allocated)/float64(len(data)), err)
		assert.LessOrEqual(t, allocated, shape.limit, name)
		if err != nil {
			var rerr *core.RulesError
			assert.ErrorAs(t, err, &rerr, name)
		}
	}
}

// TestRulesUnmarshalJSONHostile calls Rules.UnmarshalJSON directly with
// what encoding/json never passes it: no value (which made it panic),
// broken or trailing syntax, values nested too deep. Each is refused with
// a *core.RulesError naming the line, and leaves rs as it was.
func TestRulesUnmarshalJSONHostile(t *testing.T) {
	deep := `[{"resource": "x", "tags": ` + strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth) + `}]`
	for data, want := range map[string]string{
		"":               "unexpected end of JSON input",
		" \n":            "unexpected end of JSON input",
		"]}[":            "line 1: invalid character ']' looking for beginning of value",
		"[{\"a\": 1},\n": "unexpected end of JSON input",
		"[]\n[]":         "line 2: unexpected data after the top-level JSON value",
		`{"rules": []}`:  "line 1: rules must be a list of rules, got a mapping",
		deep:             "line 1: values are nested more than 64 levels deep",
	} {
		rs := Rules{{Name: "kept"}}
		err := rs.UnmarshalJSON([]byte(data))
		var rerr *core.RulesError
		require.ErrorAs(t, err, &rerr, "%q", data)
		assert.EqualError(t, err, want, "%q", data)
		assert.Equal(t, Rules{{Name: "kept"}}, rs)
	}
}

// hundredThousandRules returns a JSON rules file of maxRules valid rules.
func hundredThousandRules() []byte {
	var b strings.Builder
	b.WriteString(`{"rules": [`)
	for i := range maxRules {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n{\"name\": \"r%06d\", \"resource\": \"GET /r%d\", \"kind\": \"flow\", \"limit\": 5, \"window\": \"1m\"}", i, i)
	}
	b.WriteString("]}\n")
	return []byte(b.String())
}

// TestJSONLargeRuleSet loads a JSON file of 100,000 rules, the most a file
// may hold, of 9.2 MB: it loads, allocating at most 40 times its size
// (measured: 278 MB, 30 times, 33 with -race; 447 MB, 49 times, before).
func TestJSONLargeRuleSet(t *testing.T) {
	data := hundredThousandRules()
	var rules []core.Rule
	var err error
	start := time.Now()
	allocated := allocatedBy(func() { rules, err = parse(data, formatJSON) })
	require.NoError(t, err)
	assert.Len(t, rules, maxRules)
	assert.LessOrEqual(t, allocated, uint64(40*len(data)))
	t.Logf("%d rules, %d bytes: allocated %d bytes (%.1fx) in %v", maxRules, len(data), allocated, float64(allocated)/float64(len(data)), time.Since(start))
}

// treeRead reads the JSON rules file data as Parse did before JSON files
// were read one rule at a time: into the node tree of the whole file,
// then read by fileParser.document. It returns the text of the error, ""
// when the file is valid, and false for files over the bounds of readJSON.
func treeRead(data []byte) (string, bool) {
	if _, over := jsonRulesCount(data); over > 0 {
		return "", false
	}
	text := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	root, err := decodeJSON(data)
	if err != nil {
		line, msg := splitLine(err.Error())
		return text(problem(-1, "", line, "%s", msg)), true
	}
	p := newFileParser(core.Kinds())
	rules := p.document(root)
	if p.problems != nil {
		var validated []core.Problem
		if _, err := core.NormalizeRules(rules); err != nil {
			validated = err.(*core.RulesError).Problems
		}
		return text(&core.RulesError{Problems: p.merge(validated)}), true
	}
	_, err = p.normalized(rules)
	return text(err), true
}

// decodeJSON parses a JSON document into the node tree the same YAML
// would give, keeping the order of keys, their duplicates and their line
// numbers, as Parse and Rules.UnmarshalJSON did before they read JSON one
// rule at a time. An empty document gives nil; data after it is an error.
func decodeJSON(data []byte) (*yaml.Node, error) {
	j := &jsonReader{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	j.dec.UseNumber()
	notEOF := func(err error) error {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	var value func(depth int) (*yaml.Node, error)
	value = func(depth int) (*yaml.Node, error) {
		n, err := j.open(depth)
		if err != nil || n.Kind == yaml.ScalarNode {
			return n, err
		}
		for j.dec.More() {
			child, err := value(depth + 1)
			if err != nil {
				return nil, notEOF(err)
			}
			n.Content = append(n.Content, child)
		}
		_, err = j.dec.Token()
		return n, notEOF(err)
	}
	root, err := value(0)
	if err == io.EOF {
		return nil, nil
	}
	if err == nil {
		if _, err = j.dec.Token(); err != io.EOF {
			err = fmt.Errorf("line %d: unexpected data after the top-level JSON value", j.lineAt(int(j.dec.InputOffset())))
		} else {
			err = nil
		}
	}
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se) && se.Offset <= int64(len(data)):
		return nil, fmt.Errorf("line %d: %w", 1+bytes.Count(data[:se.Offset], []byte{'\n'}), err)
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return nil, errors.New("unexpected end of JSON input")
	case err != nil:
		return nil, err
	}
	return root, nil
}

// FuzzReadJSON reads arbitrary input as a JSON rules file one rule at a
// time (readJSON) and as a node tree (treeRead): both give the same error,
// word for word (but for a context the tree reader lacked), or none.
func FuzzReadJSON(f *testing.F) {
	addTestdataSeeds(f)
	for _, s := range []string{
		"]}[", `{"rules": [{}]]}[{`, `{"a": ]]]]{{{`, "", " \n", `{"rules": [{"resource": "x"`,
		`{"rules": [{"resource": "x", "kind": "flow", "limit": 1, "tags": [[1], {"a": [2]}]}], "b": {"c": [1]}}`,
		`{"rules": [{"resource": "x", "kind": "hotspot", "param": "ip", "limit": 1, "overrides": {"a": 1, "a": [2], "b": {}}, "overrides": []}]}`,
		`{"rules": {"a": 1}, "rules": [1, [2], {"limit": "x"}]}`,
		"{\"rules\": [\n{\"resource\": \"x\",\n \"kind\": \"flow\", \"limit\": -1, \"window\": \"x\"}]}",
		`{"rules": [{"limit": ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}]}`,
		`[` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `]`,
		"{\"rules\": []}\n}",
		`{"rules": [{"resource": "x\u0000"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, ok := treeRead(data)
		if !ok || len(data) > 1<<16 {
			return
		}
		_, err := parse(data, formatJSON)
		got := ""
		if err != nil {
			got = err.Error()
		}
		// The tree reader gave no context for a character where a key of a
		// mapping's first pair goes (encoding/json's Decoder.Token does
		// not): "invalid character '0'"; readJSON gives the scanner's. For
		// an error inside a value it gave a line counted from the bytes the
		// Decoder had scanned in values, not from the start of the file:
		// the same error on an earlier line.
		gotLine, gotMsg := splitLine(got)
		wantLine, wantMsg := splitLine(want)
		if got != want && !(strings.HasSuffix(want, "'") && strings.HasPrefix(got, want+" looking for beginning of object key string")) &&
			!(gotMsg == wantMsg && gotLine > wantLine) {
			t.Fatalf("read one rule at a time:\n%s\nread as a tree:\n%s", got, want)
		}
	})
}

// TestJSONBoundsAreProblems gives JSON files over the bounds of what
// readJSON builds, and over maxProblems problems: each is refused with a
// problem naming the line, the rule and the field.
func TestJSONBoundsAreProblems(t *testing.T) {
	overrides := make([]string, maxOverrides+1)
	for i := range overrides {
		overrides[i] = fmt.Sprintf("\n\"v%d\": 1", i)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"overrides", `{"rules": [{"resource": "x", "kind": "hotspot", "param": "ip", "limit": 1, "overrides": {` + strings.Join(overrides, ",") + `}}]}`,
			"rules[0]: line 100002: overrides must hold at most 100000 values in a JSON file, got more: the next starts on this line"},
		{"rule keys", `{"rules": [{"resource": "x",` + strings.Repeat("\n\"a\": 1,", maxRuleKeys) + `"b": 1}]}`,
			"rules[0]: line 257: a rule has at most 256 keys, got more: the next starts on this line"},
		{"top-level keys", `{"rules": [],` + strings.Repeat("\n\"a\": 1,", maxTopKeys) + `"b": 1}`,
			"line 65: a rules file has the one key rules, got more than 64 keys"},
	} {
		_, err := parse([]byte(tc.data), formatJSON)
		assert.EqualError(t, err, tc.want, tc.name)
	}
	for _, format := range []fileFormat{formatJSON, formatYAML} {
		data := `{"rules": [` + strings.Repeat("\n{\"resource\": \"x\", \"kind\": \"flow\", \"limit\": 1, \"tag\": 1},", 2*maxProblems) + "\n{}]}\n"
		_, err := parse([]byte(data), format)
		lines := problemLines(t, err)
		require.Len(t, lines, maxProblems+1, "format %d", format)
		assert.Equal(t, `rules[999]: line 1001: unknown field "tag"`, lines[maxProblems-1])
		assert.Equal(t, "there are more problems, not listed: at most 1000 are", lines[maxProblems])
	}
}
