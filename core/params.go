package core

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/sluicekit/sluice/core/internal/rulefields"
)

// Params gives Enter the values of a request's params, the request values
// hotspot rules limit by (Rule.Param: "header:X-User-ID", "query:tenant",
// "ip", ...). Adapters implement it over their request type. Enter asks only
// for the params a matching hotspot rule names, so a request of a resource
// without hotspot rules reads nothing.
type Params interface {
	// Param returns the i-th value (from 0) of param, and false when the
	// request has no i-th value: a param may carry several values (a
	// repeated header, a comma-separated list), and every one is limited.
	// Rule.OnMissing says what a rule does with a request without its
	// param. Enter reads at most maxParamValues (64) values of a param
	// (the extractors yield at most 16); the rest are not limited.
	Param(param string, i int) (string, bool)
}

// maxParamValues bounds the values of one param Enter reads from a request,
// so that a Params yielding values for ever costs bounded time and memory.
const maxParamValues = 64

// ParamMap is a Params holding values in a map, for callers that have them
// at hand and for tests.
type ParamMap map[string][]string

// Param returns the i-th value of param.
func (m ParamMap) Param(param string, i int) (string, bool) {
	vs := m[param]
	if i < 0 || i >= len(vs) {
		return "", false
	}
	return vs[i], true
}

// WithParams makes Enter read the request's params from p for the hotspot
// rules that apply. Enter reads p only while it runs and keeps no reference
// to it once it returns, so a caller may reuse p (from a pool, say) for
// another request afterwards.
func WithParams(p Params) EnterOption { return EnterOption{params: p} }

// ParamSource is what supplies the params of a Guard's hotspot rules: the
// extractor of an adapter (an extractors.Extractor, of which each adapter
// adds the params of its protocol), or CustomParams for params a program passes to
// Enter itself. CheckParam returns an error, saying what to do, when the
// source cannot supply param; param is well formed (see Rule.Param).
//
// A Guard without sources accepts every well-formed param. Once it has
// one (WithParamSource, Guard.AddParamSource), a rule whose param no source
// supplies is refused by New, SetRules and every reload, which keep the
// rules in force: a rule never waits for a param that never comes.
//
// A source that also has a method CheckValue(param, value string) error
// says which values it can never yield for a param it supplies: a hotspot
// override whose key each supplying source with that method refuses is
// refused too (the adapters' extractor sources have it).
type ParamSource interface {
	CheckParam(param string) error
}

// WithParamSource gives the Guard a source of params from the start, so
// that New refuses a rule naming a param s cannot supply (see ParamSource).
// An extractors.Extractor given here is declared once: the adapters of the
// Guard given no extractor of their own read params with it (they find it
// in ParamSources), and refuse to start when given another.
func WithParamSource(s ParamSource) Option {
	return option(s == nil, "WithParamSource: source is nil", func(cfg *config) { cfg.sources = append(cfg.sources, s) })
}

// CustomParams returns a ParamSource of the custom params a program passes
// to Enter itself (WithParams), for a Guard that also serves adapters:
// without it, their sources would refuse a rule naming such a param.
func CustomParams(names ...string) ParamSource {
	return &customParams{names: slices.Clone(names)}
}

type customParams struct{ names []string }

func (c *customParams) CheckParam(param string) error {
	if slices.Contains(c.names, param) {
		return nil
	}
	return fmt.Errorf("%s is not among the CustomParams %s", quote(param), quote(strings.Join(c.names, ", ")))
}

// AddParamSource adds s to the sources of the Guard's params (see
// ParamSource) and returns nil, or, when a rule in force names a param that
// none of its sources supply, a *RulesError naming it, without adding s.
// Adding a source equal to one the Guard has does nothing. Adapters call
// it with their extractor when they are made.
func (g *Guard) AddParamSource(s ParamSource) error {
	if s == nil {
		return errors.New("sluice: AddParamSource: source is nil")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, have := range g.sources {
		if t := reflect.TypeOf(have); t == reflect.TypeOf(s) && t.Comparable() && have == s { // equal values of a comparable type
			return nil
		}
	}
	sources := append(slices.Clip(g.sources), s)
	if problems := paramSourceProblems(g.Rules(), sources); len(problems) > 0 {
		return &RulesError{Problems: problems}
	}
	g.sources = sources
	return nil
}

// ParamSources returns the sources of the Guard's params (see
// ParamSource), in the order they were given: those of WithParamSource,
// then those added by AddParamSource. Adapters look there for the
// extractor the program gave the Guard.
func (g *Guard) ParamSources() []ParamSource {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.sources)
}

// paramSourceProblems returns a problem for each param or priority param
// of rules that none of sources supplies; none when sources is empty.
func paramSourceProblems(rules []Rule, sources []ParamSource) []Problem {
	if len(sources) == 0 {
		return nil
	}
	var problems []Problem
	for i, r := range rules {
		for _, f := range [...]struct{ field, param string }{{"param", r.Param}, {"priority", r.Priority}} {
			if f.param == "" || rulefields.ParamProblem(f.param) != "" {
				continue
			}
			var msgs []string
			var supply []ParamSource
			for _, s := range sources {
				if err := s.CheckParam(f.param); err == nil {
					supply = append(supply, s)
				} else if m := err.Error(); !slices.Contains(msgs, m) {
					msgs = append(msgs, m)
				}
			}
			if len(supply) == 0 {
				problems = append(problems, Problem{Index: i, Name: r.Name, Field: f.field, Msg: strings.Join(msgs, "; ")})
			} else if f.field == "param" {
				problems = append(problems, overrideKeyProblems(i, r, supply)...)
			}
		}
	}
	return problems
}

// overrideKeyProblems returns a problem for each override key of rule r (at
// index i) that each of sources with a CheckValue method refuses.
func overrideKeyProblems(i int, r Rule, sources []ParamSource) (problems []Problem) {
	for _, key := range slices.Sorted(maps.Keys(r.Overrides)) {
		var err error
		for _, s := range sources {
			if c, ok := s.(valueChecker); ok {
				if err = c.CheckValue(r.Param, key); err == nil {
					break
				}
			}
		}
		if err != nil {
			problems = append(problems, Problem{Index: i, Name: r.Name, Field: "overrides", Msg: fmt.Sprintf("key %s can never apply: %v", quote(key), err)})
		}
	}
	return problems
}

type valueChecker interface {
	CheckValue(param, value string) error
}

// ValidateParam returns an error saying what is wrong with param as the
// Param of a hotspot rule, or nil when it is well formed: KIND:NAME for the
// kinds header, query, cookie, path and metadata (NAME without spaces,
// format or control characters; of a header, cookie or metadata, ASCII
// letters, digits and !#$%&'*+-.^_`|~ only, as no request carries another),
// one of the words ip, method, host and peer, or a
// custom extractor name of letters, digits, '_', '.' and '-' starting with
// a letter.
func ValidateParam(param string) error {
	if msg := rulefields.ParamProblem(param); msg != "" {
		return fmt.Errorf("param %s", msg)
	}
	return nil
}
