package rulesfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core"
)

// fileFormat is the syntax of a rules file.
type fileFormat int

// The rules file formats. Both have the same fields.
const (
	// formatYAML is the format of every rules file not named *.json.
	formatYAML fileFormat = iota
	// formatJSON is the format of a rules file named *.json, in any case.
	formatJSON
)

// Bounds of a rules file (see the package documentation, Errors).
const (
	maxFileSize = 16 << 20
	maxYAMLSize = 512 << 10
	maxRules    = 100_000
	// maxJSONDepth bounds the nesting of a JSON file; a rules file needs 4.
	maxJSONDepth = 64
)

// Load reads and parses the rules file at path (see Parse): a file whose
// name ends in ".json", in any case, is JSON; any other is YAML. It stops
// reading at the first byte over the size limit. Its errors start with the
// path. To start a Guard with the rules of a file, use NewGuard, which
// validates them once.
func Load(path string) ([]core.Rule, error) {
	rules, p, err := readFile(path)
	if err == nil {
		rules, err = p.normalized(rules)
	}
	if err != nil {
		return nil, fmt.Errorf("rules file %s: %w", path, err)
	}
	return rules, nil
}

// NewGuard returns core.New(opts...) with the rules of the file at path
// (read as Load reads it) after any that opts give with core.WithRules. It
// returns an error, naming the path, when the file cannot be read or is
// invalid; the problems of its rules, found by core.New, give their lines
// in the file.
func NewGuard(path string, opts ...core.Option) (*core.Guard, error) {
	rules, p, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("rules file %s: %w", path, err)
	}
	g, err := core.New(append(slices.Clip(opts), core.WithRules(rules...))...)
	if _, ok := err.(*core.RulesError); ok {
		// The file's rules follow those of opts: count these.
		g0, err0 := core.New(opts...)
		if err0 != nil {
			return nil, err0
		}
		first := len(g0.Rules())
		_ = g0.Close()
		return nil, fmt.Errorf("rules file %s: %w", path, p.withLines(err, first))
	}
	return g, err
}

// Parse parses a rules file, YAML or JSON (data that is valid JSON is read
// as JSON, with JSON's errors; see the package documentation, Grammar). It
// returns the rules normalized (see core.NormalizeRules), or a
// *core.RulesError listing every problem of the file, each with its line:
// syntax, unknown fields (with the field meant, when close), values of the
// wrong type, duplicate keys, YAML aliases, a file that may have been cut
// short, and every problem core.NormalizeRules finds. The package
// documentation (Errors) gives its bounds of size, rules, problems and
// memory. No input makes Parse panic (FuzzParse).
func Parse(data []byte) ([]core.Rule, error) {
	if len(data) <= maxFileSize && json.Valid(withoutBOM(data)) {
		return parse(data, formatJSON)
	}
	return parse(data, formatYAML)
}

// withoutBOM returns data without the UTF-8 byte order mark (U+FEFF) some
// editors write first, which a JSON file may start with, as a YAML file may.
func withoutBOM(data []byte) []byte {
	if len(data) >= 3 && string(data[:3]) == "\uFEFF" {
		return data[3:]
	}
	return data
}

// parse is Parse of data in format.
func parse(data []byte, format fileFormat) ([]core.Rule, error) {
	rules, p, err := read(data, format)
	if err != nil {
		return nil, err
	}
	return p.normalized(rules)
}

// read reads the rules file data, as written, with the parser that knows
// their lines, without validating them. When the file has problems of its
// own (see Parse), it returns a *core.RulesError of those and of every
// problem core.NormalizeRules finds in the fields it could read.
func read(data []byte, format fileFormat) ([]core.Rule, *fileParser, error) {
	if len(data) > maxFileSize {
		return nil, nil, problem(-1, "", 0, "a rules file must be at most 16 MiB (%d bytes), got more", maxFileSize)
	}
	if format == formatYAML && len(data) > maxYAMLSize {
		return nil, nil, problem(-1, "", 0, "a YAML rules file must be at most 512 KiB (%d bytes), got more; a larger rule set goes in a JSON file (up to 16 MiB)", maxYAMLSize)
	}
	p := newFileParser(core.Kinds())
	var rules []core.Rule
	var err error
	switch format {
	case formatJSON:
		rules, err = readJSON(withoutBOM(data), false, p)
	case formatYAML:
		var root *yaml.Node
		if root, err = decodeYAML(data); err == nil {
			rules = p.document(root)
		}
	default:
		err = fmt.Errorf("unknown rules file format %d", format)
	}
	if err != nil {
		return nil, nil, syntaxProblem(err)
	}
	if format == formatYAML && p.problems == nil {
		p.checkEnd(data)
	}
	if p.problems != nil {
		return nil, nil, &core.RulesError{Problems: p.merge(validated(rules))}
	}
	return rules, p, nil
}

// validated returns the problems core.NormalizeRules finds in rules.
func validated(rules []core.Rule) []core.Problem {
	var rerr *core.RulesError
	if _, err := core.NormalizeRules(rules); errors.As(err, &rerr) {
		return rerr.Problems
	}
	return nil
}

// tooManyRulesMsg is the problem of over maxRules rules, on rules[maxRules]'s line.
func tooManyRulesMsg() string {
	return fmt.Sprintf("must hold at most %d rules, got more: rules[%d] starts on this line", maxRules, maxRules)
}

// normalized returns rules, read by p, validated and normalized
// (core.NormalizeRules), or their problems with their lines.
func (p *fileParser) normalized(rules []core.Rule) ([]core.Rule, error) {
	rules, err := core.NormalizeRules(rules)
	if err != nil {
		return nil, p.withLines(err, 0)
	}
	return rules, nil
}

// formatOf returns the format of the rules file at path, by its extension.
func formatOf(path string) fileFormat {
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return formatJSON
	}
	return formatYAML
}

// readFile reads the rules file at path (readLimited) and its rules (read).
func readFile(path string) ([]core.Rule, *fileParser, error) {
	data, _, err := readLimited(path, formatOf(path))
	if err != nil {
		return nil, nil, err
	}
	return read(data, formatOf(path))
}

// regular returns an error, as os.Open's, unless info, path's, is a
// regular file's (a symbolic link's target): opening a named pipe that no
// process writes to blocks for ever (a Watcher's Run with it), and a
// device may never end.
func regular(path string, info os.FileInfo) error {
	if m := info.Mode(); !m.IsRegular() {
		what := "a file of mode " + m.Type().String()
		switch {
		case m.IsDir():
			what = "a directory"
		case m&os.ModeNamedPipe != 0:
			what = "a named pipe"
		case m&os.ModeDevice != 0:
			what = "a device"
		}
		return &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("a rules file must be a regular file, got %s", what)}
	}
	return nil
}

// readLimited reads the rules file at path, a regular file (see regular),
// and returns its FileInfo: it stops after the first byte over the size
// limit of format, so that read refuses what it returns without parsing
// it. It allocates the file's size once.
func readLimited(path string, format fileFormat) ([]byte, os.FileInfo, error) {
	// Checked once open, opened without blocking: a named pipe swapped in
	// after a check by path would wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	limit := int64(maxFileSize)
	if format == formatYAML {
		limit = maxYAMLSize
	}
	info, err := f.Stat()
	if err == nil {
		err = regular(path, info)
	}
	if err != nil {
		return nil, nil, err
	}
	// Room to see the end: one byte over the limit, and ReadFrom's.
	b := bytes.NewBuffer(make([]byte, 0, min(info.Size(), limit)+1+bytes.MinRead))
	_, err = b.ReadFrom(io.LimitReader(f, limit+1))
	return b.Bytes(), info, err
}

// splitLine returns the line a syntax error's text names, "yaml: line 3:
// msg" (go.yaml.in/yaml's) or "line 3: msg" (readJSON's), and the text
// without it; 0 and the text when it names none.
func splitLine(text string) (int, string) {
	prefix, rest, ok := strings.Cut(text, "line ")
	if !ok || prefix != "" && prefix != "yaml: " {
		return 0, text
	}
	num, msg, ok := strings.Cut(rest, ": ")
	line, err := strconv.Atoi(num)
	if !ok || err != nil || line <= 0 {
		return 0, text
	}
	return line, prefix + msg
}

// syntaxProblem returns err, a syntax error, as a *core.RulesError with
// the line its text names; nil and *core.RulesError as they are.
func syntaxProblem(err error) error {
	if _, ok := err.(*core.RulesError); ok || err == nil {
		return err
	}
	line, msg := splitLine(err.Error())
	return problem(-1, "", line, "%s", msg)
}

// decodeYAML parses a YAML document into its node tree: nil when it is empty
// or only comments; a second document is an error.
func decodeYAML(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, next yaml.Node
	if err := decodeNode(dec, &doc); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, locateYAMLError(data, err)
	}
	if err := decodeNode(dec, &next); err != io.EOF {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("line %d: a rules file must be one YAML document, found a second", next.Line)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// decodeNode decodes the next document of dec into n. The parser reports
// bad input as errors; decodeNode turns any bug of it that hostile input
// might reach into one too.
func decodeNode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: cannot parse: %v", r)
		}
	}()
	return dec.Decode(n)
}

// maxLocated is the size of the largest YAML file whose syntax errors
// locateYAMLError places: it parses the file about 20 times more.
const maxLocated = 1 << 20

// locateYAMLError returns err, the syntax error of the YAML file data, as
// "line N: yaml: msg, at column C", with the line and column where the
// parser met the problem. go.yaml.in/yaml/v3 gives the line before the
// start of the enclosing list or mapping instead (line 1 for a misindented
// field of the first rule), or no line at all. The parser itself finds
// the place: the shortest prefix of the file that fails with the same
// message ends on it (a prefix cut before it is valid YAML, or fails
// otherwise; in a flow collection, whose prefixes all fail, it can be the
// line where the collection starts). Errors of files over maxLocated, or
// other errors, are returned as they are.
func locateYAMLError(data []byte, err error) error {
	var msg string
	if _, ok := err.(*yaml.TypeError); ok || len(data) > maxLocated {
		return err
	}
	if _, msg = splitLine(err.Error()); !strings.HasPrefix(msg, "yaml: ") {
		return err
	}
	fails := func(n int) bool {
		var doc yaml.Node
		if perr := decodeNode(yaml.NewDecoder(bytes.NewReader(data[:n])), &doc); perr != nil && perr != io.EOF {
			_, m := splitLine(perr.Error())
			return m == msg
		}
		return false
	}
	// The ends of lines, then the bytes of the line found.
	ends := []int{}
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
	}
	line := sort.Search(len(ends), func(i int) bool { return fails(ends[i]) })
	if line == len(ends) {
		return err // the whole file fails otherwise when cut: keep the parser's word
	}
	start := 0
	if line > 0 {
		start = ends[line-1]
	}
	col := sort.Search(ends[line]-start, func(i int) bool { return fails(start + i + 1) })
	return fmt.Errorf("line %d: %s, at column %d", line+1, msg, min(col, ends[line]-start-1)+1)
}
