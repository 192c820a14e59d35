// Command sluicecheck checks sluice rules files before they are deployed,
// in a CI pipeline or a pre-commit hook, as promtool check rules does for
// Prometheus:
//
//	go run github.com/sluicekit/sluice/core/cmd/sluicecheck@latest rules.yaml [more.yaml ...]
//
// (any version in place of latest, from any directory: inside a module that
// requires sluice, the version it requires is "go run
// github.com/sluicekit/sluice/core/cmd/sluicecheck rules.yaml").
// It loads each file as a Guard would (rulesfile.Load: YAML, or JSON
// when the name ends in .json) and prints one line per valid file to
// stdout, with its rules by kind. It prints each problem of an invalid file
// to stderr, one a line, as
//
//	rules.yaml:9: rules[2] (per-user): limit must be >= 0, got -5
//
// the file and line, the rule's index and name, the field, the value and
// what is allowed. It checks every file, and exits with status 0 when all
// are valid, 1 when any is invalid or cannot be read, and 2 on a usage
// error. Flags may come before or after the files; after "--", every
// argument is a file.
//
// With -stores, it checks the stores the rules name: give it the names the
// service gives its Guard with core.WithStore, as in "-stores redis", and
// it refuses a rule naming another store, as the Guard would when it
// starts (rulesfile.Load checks the rest of a rule on a store). Without
// -stores, the summary names the stores the file uses, unchecked.
//
// With -params, it also refuses a rule naming a custom param (a hotspot
// rule's param, a system or adaptive rule's priority) that is not in the
// list: give it the custom params the service's extractors register
// (extractors.WithHTTPParam, WithGRPCParam), as in "-params user,tenant",
// to catch the rule the service would refuse.
//
// It refuses a hotspot override whose key no request can carry, as the
// adapters do with the defaults of their extractors: a key longer than 256
// bytes (extractors.WithMaxValueLen), a header value with a comma or
// spaces around it, a cookie value with a ';' or spaces at its end, an ip,
// host or method not in the form requests give.
//
// With -schema, it prints the JSON Schema of a rules file (rulesfile.Schema)
// for editors, and exits.
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/rulefields"
	"github.com/sluicekit/sluice/core/rulesfile"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/extractors"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command with args and returns its exit status.
func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("sluicecheck", flag.ContinueOnError)
	flags.SetOutput(stderr)
	schema := flags.Bool("schema", false, "print the JSON Schema of a rules file and exit")
	params := flags.String("params", "", "comma-separated custom params the service's extractors supply; others are refused")
	stores := flags.String("stores", "", "comma-separated store names the service gives its Guard (core.WithStore); others are refused")
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "usage: sluicecheck rules.yaml [more rules files]\n       sluicecheck -schema")
		flags.PrintDefaults()
	}
	// Flags may follow files, as in "sluicecheck rules.yaml -stores redis";
	// after "--" every argument is a file.
	var files []string
	for len(args) > 0 {
		if err := flags.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		rest := flags.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			files = append(files, rest...)
			break
		}
		if len(rest) > 0 {
			files, rest = append(files, rest[0]), rest[1:]
		}
		args = rest
	}
	paramList, perr := list("params", *params)
	storeList, serr := list("stores", *stores)
	var usage error
	switch {
	case *schema && len(files) == 0:
		fmt.Fprint(stdout, rulesfile.Schema)
		return 0
	case *schema:
		usage = fmt.Errorf("-schema prints the schema and takes no rules file, got %s", strings.Join(files, " "))
	case len(files) == 0:
		usage = errors.New("no rules file given")
	default:
		usage = cmp.Or(perr, serr)
	}
	if usage != nil {
		fmt.Fprintln(stderr, "sluicecheck:", usage)
		flags.Usage()
		return 2
	}
	c := checker{params: paramList, stores: storeList}
	status := 0
	for _, path := range files {
		if !c.check(path, stdout, stderr) {
			status = 1
		}
	}
	return status
}

// list returns the names of the comma-separated value of flag name, nil
// for "", or an error when a name is empty.
func list(name, value string) ([]string, error) {
	var names []string
	if value != "" {
		for _, n := range strings.Split(value, ",") {
			if n = strings.TrimSpace(n); n == "" {
				return nil, fmt.Errorf("-%s: empty name in %q; give names separated by commas", name, value)
			}
			names = append(names, n)
		}
	}
	return names, nil
}

// checker checks rules files with what the flags give: the custom params
// (-params) and the stores (-stores) of the service; nil when not given.
type checker struct {
	params, stores []string
}

// check loads the rules file at path and reports what it holds to stdout,
// or its problems to stderr; it returns whether the file is valid.
func (c checker) check(path string, stdout, stderr io.Writer) bool {
	rules, err := rulesfile.Load(path)
	if err == nil {
		err = c.names(path, rules)
	}
	if err == nil {
		fmt.Fprintf(stdout, "%s: %s\n", path, c.summary(rules))
		return true
	}
	var rerr *core.RulesError
	if !errors.As(err, &rerr) {
		fmt.Fprintf(stderr, "%s: %v\n", path, unwrapped(err))
		return false
	}
	for _, p := range rerr.Problems {
		at := path
		if p.Line > 0 {
			at = fmt.Sprintf("%s:%d", path, p.Line)
		}
		p.Line = 0 // given before
		fmt.Fprintf(stderr, "%s: %s\n", at, p)
	}
	fmt.Fprintf(stderr, "%s: invalid: %d %s\n", path, len(rerr.Problems), plural(len(rerr.Problems), "problem"))
	return false
}

// names returns a *core.RulesError of the custom params, priority ones
// included (with -params), and stores (with -stores) the valid rules name
// that the service does not supply, or nil.
func (c checker) names(path string, rules []core.Rule) error {
	var rerr core.RulesError
	builtin, err := extractors.New() // reads the built-in params, no custom one
	if err != nil {
		panic(err) // no options: cannot fail
	}
	for i, r := range rules {
		// The file is valid: a param the Extractor cannot read is custom.
		for _, f := range [...]struct{ field, param string }{{"param", r.Param}, {"priority", r.Priority}} {
			if c.params != nil && f.param != "" && builtin.CheckParam(f.param) != nil && !slices.Contains(c.params, f.param) {
				rerr.Problems = append(rerr.Problems, core.Problem{Index: i, Name: r.Name, Field: f.field,
					Msg: fmt.Sprintf("%s is not among the custom params given with -params (%s)", rulefields.Quote(f.param), strings.Join(c.params, ", "))})
			}
		}
		if c.stores != nil && r.Store != "" && !slices.Contains(c.stores, r.Store) {
			rerr.Problems = append(rerr.Problems, core.Problem{Index: i, Name: r.Name, Field: "store",
				Msg: fmt.Sprintf("%s is not among the stores given with -stores (%s)", rulefields.Quote(r.Store), strings.Join(c.stores, ", "))})
		}
	}
	rerr.Problems = append(rerr.Problems, overrideProblems(path, rules, builtin)...)
	if len(rerr.Problems) > 0 {
		return &rerr
	}
	return nil
}

// overrideProblems returns a problem, with its line, for each override key
// of a rule on a built-in param that no request can carry, as the adapters
// refuse it with their extractors (here with the defaults of
// extractors.New): it starts a Guard with the file at path, whose rules
// are rules, as the service would, its custom params and stores stood in for.
func overrideProblems(path string, rules []core.Rule, builtin *extractors.Extractor) []core.Problem {
	opts := []core.Option{core.WithLogger(slog.New(slog.DiscardHandler)),
		core.WithParamSource(builtin.HTTPSource()), core.WithParamSource(builtin.GRPCSource())}
	var custom, stores []string
	for _, r := range rules {
		for _, p := range [...]string{r.Param, r.Priority} {
			if p != "" && builtin.CheckParam(p) != nil {
				custom = append(custom, p)
			}
		}
		if r.Store != "" && !slices.Contains(stores, r.Store) {
			stores = append(stores, r.Store)
			s, _ := store.NewMemory(clock.NewFake(0), 0) // cannot fail with a clock
			opts = append(opts, core.WithStore(r.Store, s))
		}
	}
	g, err := rulesfile.NewGuard(path, append(opts, core.WithParamSource(core.CustomParams(custom...)))...)
	if err == nil {
		_ = g.Close()
	}
	var rerr *core.RulesError
	var problems []core.Problem
	if errors.As(err, &rerr) {
		for _, p := range rerr.Problems {
			if p.Field == "overrides" {
				problems = append(problems, p)
			}
		}
	}
	return problems
}

// unwrapped returns err without the path, which check gives already.
func unwrapped(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// summary describes a valid rule set in one line: "3 rules: 1 flow,
// 1 hotspot, 1 concurrency", then the stores the rules name, when any, and
// whether they were checked (-stores).
func (c checker) summary(rules []core.Rule) string {
	if len(rules) == 0 {
		return "0 rules (the file removes every rule)"
	}
	var stores []string
	for _, r := range rules {
		if r.Store != "" && !slices.Contains(stores, r.Store) {
			stores = append(stores, r.Store)
		}
	}
	suffix := ""
	switch {
	case stores != nil && c.stores != nil:
		suffix = "; stores: " + strings.Join(stores, ", ")
	case stores != nil:
		suffix = "; stores: " + strings.Join(stores, ", ") + " (not checked: give the service's with -stores)"
	}
	var parts []string
	for _, kind := range core.Kinds() {
		n := 0
		for _, r := range rules {
			if r.Kind == kind.Kind {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, kind.Kind))
		}
	}
	return fmt.Sprintf("%d %s: %s%s", len(rules), plural(len(rules), "rule"), strings.Join(parts, ", "), suffix)
}

// plural returns word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
