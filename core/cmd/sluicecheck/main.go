// Command sluicecheck checks sluice rules files before they are deployed,
// in a CI pipeline or a pre-commit hook, as promtool check rules does for
// Prometheus:
//
//	go run github.com/sluicekit/sluice/core/cmd/sluicecheck rules.yaml [more.yaml ...]
//
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
// error.
//
// It checks what the file alone says: a store a rule names must also be
// given to the Guard (core.WithStore), which the Guard checks when it
// starts.
//
// With -params, it also refuses a hotspot rule naming a custom param that is
// not in the list: give it the custom params the service's extractors
// register (extractors.WithHTTPParam, WithGRPCParam), as in
// "-params user,tenant", to catch the rule the service would refuse.
//
// With -schema, it prints the JSON Schema of a rules file (rulesfile.Schema)
// for editors, and exits.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
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
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "usage: sluicecheck rules.yaml [more rules files]\n       sluicecheck -schema")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case *schema && flags.NArg() == 0:
		fmt.Fprint(stdout, rulesfile.Schema)
		return 0
	case *schema, flags.NArg() == 0:
		flags.Usage()
		return 2
	}
	var custom []string
	if *params != "" {
		for _, name := range strings.Split(*params, ",") {
			custom = append(custom, strings.TrimSpace(name))
		}
	}
	status := 0
	for _, path := range flags.Args() {
		if !check(path, custom, stdout, stderr) {
			status = 1
		}
	}
	return status
}

// check loads the rules file at path and reports what it holds to stdout,
// or its problems to stderr; it returns whether the file is valid. With
// custom params (-params), a rule naming another custom param is a problem.
func check(path string, custom []string, stdout, stderr io.Writer) bool {
	rules, err := rulesfile.Load(path)
	if err == nil && custom != nil {
		var rerr core.RulesError
		builtin, xerr := extractors.New() // reads the built-in params, no custom one
		if xerr != nil {
			panic(xerr) // no options: cannot fail
		}
		for i, r := range rules {
			// The file is valid: a param the Extractor cannot read is custom.
			if r.Param != "" && builtin.CheckParam(r.Param) != nil && !slices.Contains(custom, r.Param) {
				rerr.Problems = append(rerr.Problems, core.Problem{Index: i, Name: r.Name, Field: "param",
					Msg: fmt.Sprintf("%q is not among the custom params given with -params (%s)", r.Param, strings.Join(custom, ", "))})
			}
		}
		if len(rerr.Problems) > 0 {
			err = &rerr
		}
	}
	if err == nil {
		fmt.Fprintf(stdout, "%s: %s\n", path, summary(rules))
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

// unwrapped returns err without the path, which check gives already.
func unwrapped(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// summary describes a valid rule set in one line: "3 rules: 1 flow,
// 1 hotspot, 1 concurrency".
func summary(rules []core.Rule) string {
	if len(rules) == 0 {
		return "0 rules (the file removes every rule)"
	}
	var parts []string
	for _, kind := range []core.Kind{core.KindFlow, core.KindConcurrency, core.KindHotspot, core.KindBreaker, core.KindAdaptive, core.KindSystem} {
		n := 0
		for _, r := range rules {
			if r.Kind == kind {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, kind))
		}
	}
	return fmt.Sprintf("%d %s: %s", len(rules), plural(len(rules), "rule"), strings.Join(parts, ", "))
}

// plural returns word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
