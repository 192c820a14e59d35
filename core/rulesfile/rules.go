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
// errors are *core.RulesError, with lines in YAML and JSON alike.
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

// UnmarshalYAML reads rs from a YAML list of rules.
func (rs *Rules) UnmarshalYAML(n *yaml.Node) error {
	p := newFileParser(core.Kinds())
	if !p.isList(n) {
		return rs.set(nil, p)
	}
	return rs.set(p.rules(n), p)
}

// set sets rs to rules, read by p, or returns p's problems.
func (rs *Rules) set(rules []core.Rule, p *fileParser) error {
	if p.problems != nil {
		return &core.RulesError{Problems: p.merge(nil)}
	}
	*rs = rules
	return nil
}
