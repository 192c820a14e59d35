package core_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// maxExported bounds the exported identifiers of the repository's public
// packages: the surface grows only by raising it, in review. Issue 15's
// target, met (334 before the cuts of issue 15, item 2; 312 before its
// last 12).
//
// 346: +46 in issue 29, so that no module imports another's internal
// packages: core.BlockReasons, core.RTBound and RTHistogram.Explicit,
// which the exporter modules read; adapters/httpadapter (22), the code the
// HTTP adapters share, and adapters/adaptertest (21), their behaviour
// suite, both formerly internal and trimmed to what the adapters use.
//
// 379: +33 for adapters/envoy (issue 30), a module of its own: the
// Server, its two config languages (Domain, Descriptor, RateLimit, Unit and
// its seven values), the Watcher, and their options. 381: +2 so that an
// Extractor is declared once, to the Guard (Guard.ParamSources,
// extractors.ForAdapter). 383: +2 for a store's health per mode and its
// latency budget (StoreModeStatus, WithStoreLatencyBudget). 400: +17 so
// that redisstore imports no internal package (issue 29 item 3): the
// packages ratemath (3) and stripe (10), formerly internal, and
// store.Bucket (4), the bucket arithmetic formerly flow.GCRA. 403: +4
// for kind descriptors (issue 28 item 1): BlockClass and BlockedError.Class,
// which the adapters answer blocks by instead of switching on kinds, and
// Kinds and KindInfo, the kind list sluicecheck, the dashboard and the
// rules file parser read. 405: +2, KindDef and WithKind, a kind of a
// Guard's own, which the proof of issue 28 item 1 defines in one test file.
// 406: +1, Rule.Summary, a rule described by its kind's descriptor, which
// the dashboard shows. 407: +1, httpadapter.Common.HandlerExitError, so
// that a request whose client left before any answer exits as gone from the
// HTTP adapters (a new method, not a changed ExitError, which the adapters
// of an earlier version still call). 408: +1, extractors.WithClientIPHeader,
// the header a trusted proxy sets, so that a client's own X-Forwarded-For is
// not read behind a proxy that sets X-Real-IP. 409: +1, core.Quote, the one
// shortening quote of values in errors, which extractors and the Envoy
// module (no access to core's internal packages) use too. 410: +1,
// store.ErrKeyUnavailable, one key a Store cannot decide yet (not a failure
// of the store, which its breaker would count). 411: +1,
// sluiceenvoy.WithMaxDescriptors, the bound on one RLS request's
// descriptors (one request of 20,000 filled the Guard's resources). 415:
// +4, what the HTTP adapters share with the Envoy module and the Transport:
// httpadapter.AppendRateLimitFields and PathUnescape, extractors.NormalizeHost,
// and adaptertest.ErrBadGateway, a framework's own 502 in the suite. 416:
// +1, redisstore's Store.Ping, a startup check whose failure shows in the
// store's health before any request. 423: +7, httpadapter.Body (its
// type, WrapBody, and the methods Wrap, Unwrap, Read, Unread and
// ExitError), the one request body of the three HTTP middlewares that
// records a failed read, so that a client's malformed upload is its own
// failure.
const maxExported = 423

// TestExportedSurface counts what `go doc` shows of every public package of
// every module in the repository, and checks that each has a doc comment:
// exported top-level constants, variables, functions and types, and
// exported methods of exported types (not struct fields: x/time/rate has 28
// by this count). Public means not under an internal directory, not a
// command, not under examples (programs and their generated code), not
// testdata.
func TestExportedSurface(t *testing.T) {
	counts := map[string]int{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "internal", "testdata", "examples", ".git", ".ci":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		n, undocumented := exported(f)
		counts[filepath.Dir(path)] += n
		for _, name := range undocumented {
			t.Errorf("%s: %s has no doc comment", path, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	if total > maxExported {
		var lines []string
		for dir, n := range counts {
			lines = append(lines, fmt.Sprintf("%-30s %3d", dir, n))
		}
		slices.Sort(lines)
		t.Errorf("%d exported identifiers, more than %d:\n%s", total, maxExported, strings.Join(lines, "\n"))
	}
}

// exported returns the number of identifiers of f that `go doc` shows, and
// those without a doc comment (a parenthesized group's comment documents
// its constants and variables).
func exported(f *ast.File) (n int, undocumented []string) {
	add := func(name string, doc ...*ast.CommentGroup) {
		n++
		for _, d := range doc {
			if d != nil {
				return
			}
		}
		undocumented = append(undocumented, name)
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || receiverExported(d.Recv.List[0].Type)) {
				add(d.Name.Name, d.Doc)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						add(s.Name.Name, s.Doc, d.Doc)
					}
				case *ast.ValueSpec:
					for _, name := range s.Names {
						if name.IsExported() {
							add(name.Name, s.Doc, s.Comment, d.Doc)
						}
					}
				}
			}
		}
	}
	return n, undocumented
}

// receiverExported reports whether a method's receiver type is exported.
func receiverExported(t ast.Expr) bool { return ast.IsExported(receiverName(t)) }

// interfaceMethods are methods that a standard interface calls, not the
// user: encoding's and yaml's marshalers, and OpenTelemetry's producer.
var interfaceMethods = map[string]bool{
	"MarshalText": true, "MarshalJSON": true, "MarshalYAML": true,
	"UnmarshalJSON": true, "UnmarshalYAML": true, "Produce": true,
}

// TestExportedUsed checks issue 15's "every one used by an example, an
// adapter or a test from outside its package": each exported identifier of
// a public package (as TestExportedSurface counts them) is named as .Name
// in a .go file of another directory of the repository (any module, tests
// and examples included), or by name in an external test package
// (package x_test, Example functions among them) of its own directory. The
// check is textual, so a name another package also uses passes: it catches
// names nothing uses, not every unused one. Methods that only a standard
// interface calls (interfaceMethods) are exempt.
func TestExportedUsed(t *testing.T) {
	selector := regexp.MustCompile(`\.([A-Z]\w*)`)
	ident := regexp.MustCompile(`\b[A-Z]\w*\b`)
	usedFrom := map[string]map[string]bool{} // .Name -> directories naming it
	external := map[string]map[string]bool{} // directory -> names its x_test files use
	type decl struct{ dir, path, name string }
	var decls []decl
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		for _, m := range selector.FindAllSubmatch(data, -1) {
			name := string(m[1])
			if usedFrom[name] == nil {
				usedFrom[name] = map[string]bool{}
			}
			usedFrom[name][dir] = true
		}
		test := strings.HasSuffix(path, "_test.go")
		mode := parser.SkipObjectResolution
		if test || !public(path) {
			mode = parser.PackageClauseOnly
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, data, mode)
		if err != nil {
			return err
		}
		if test {
			if strings.HasSuffix(f.Name.Name, "_test") {
				if external[dir] == nil {
					external[dir] = map[string]bool{}
				}
				for _, name := range ident.FindAll(data, -1) {
					external[dir][string(name)] = true
				}
			}
			return nil
		}
		if f.Name.Name == "main" || !public(path) {
			return nil
		}
		for _, name := range exportedNames(f) {
			decls = append(decls, decl{dir, path, name})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range decls {
		name := d.name[strings.LastIndex(d.name, ".")+1:]
		if interfaceMethods[name] && strings.Contains(d.name, ".") || external[d.dir][name] {
			continue
		}
		if len(usedFrom[name]) == 0 || len(usedFrom[name]) == 1 && usedFrom[name][d.dir] {
			t.Errorf("%s: %s is used by no example, adapter or test outside its package", d.path, d.name)
		}
	}
}

// public reports whether the non-test file at path belongs to a public
// package, as TestExportedSurface counts them.
func public(path string) bool {
	for _, part := range strings.Split(filepath.ToSlash(path), "/") {
		switch part {
		case "internal", "testdata", "examples", ".ci":
			return false
		}
	}
	return true
}

// exportedNames returns the identifiers of f that `go doc` shows, methods
// as Type.Method.
func exportedNames(f *ast.File) []string {
	var names []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			} else if recv := receiverName(d.Recv.List[0].Type); ast.IsExported(recv) {
				names = append(names, recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						names = append(names, s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, name := range s.Names {
						if name.IsExported() {
							names = append(names, name.Name)
						}
					}
				}
			}
		}
	}
	return names
}

// receiverName returns the name of a method's receiver type.
func receiverName(t ast.Expr) string {
	for {
		switch e := t.(type) {
		case *ast.StarExpr:
			t = e.X
		case *ast.IndexExpr:
			t = e.X
		case *ast.IndexListExpr:
			t = e.X
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}
