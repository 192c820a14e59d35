package rulesfile

import (
	"bytes"

	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core"
)

// Rules is a list of rules that decodes from the form of a rules file's
// rules list (see Parse; core.Rule marshals to it), for rules kept in
// another configuration file: with encoding/json, go.yaml.in/yaml/v3 or
// gopkg.in/yaml.v3. It checks the name and type of each field, durations,
// duplicate keys and that limit is given, as Parse does, but neither
// validates nor normalizes the rules: core.New and Guard.SetRules do. Its
// errors are *core.RulesError, with lines (but for gopkg.in/yaml.v3, see
// UnmarshalYAML).
type Rules []core.Rule

// UnmarshalJSON reads rs from a JSON list of rules as a JSON rules file's
// list is read, one rule at a time within the same bounds; null leaves rs
// as it is.
func (rs *Rules) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	p := newFileParser(core.Kinds())
	out, err := readJSON(data, true, p)
	if err != nil {
		return err
	}
	return rs.set(out, p)
}

// UnmarshalYAML reads rs from a YAML list of rules, as go.yaml.in/yaml/v3
// and gopkg.in/yaml.v3 both call it: the first hands it the list's node, its
// problems with lines; the other values, read encoded again, without.
func (rs *Rules) UnmarshalYAML(unmarshal func(any) error) error {
	var n node
	lines := unmarshal(&n) == nil && n.n != nil
	if !lines {
		var v any
		if err := unmarshal(&v); err != nil {
			return err
		}
		if text, err := yaml.Marshal(v); err != nil || yaml.Unmarshal(text, &n) != nil || n.n == nil {
			return err // nil for null
		}
	}
	p := newFileParser(core.Kinds())
	var rules []core.Rule
	if p.isList(n.n) {
		rules = p.rules(n.n)
	}
	err := rs.set(rules, p)
	rerr, _ := err.(*core.RulesError)
	for i := 0; !lines && rerr != nil && i < len(rerr.Problems); i++ {
		rerr.Problems[i].Line = 0
	}
	return err
}

type node struct{ n *yaml.Node } // a node as go.yaml.in/yaml/v3 decodes it

func (n *node) UnmarshalYAML(v *yaml.Node) error { n.n = v; return nil }

// set sets rs to rules, read by p, or returns p's problems.
func (rs *Rules) set(rules []core.Rule, p *fileParser) error {
	if p.problems != nil {
		return &core.RulesError{Problems: p.merge(nil)}
	}
	*rs = rules
	return nil
}
