package core

import (
	"bytes"
	"encoding/json"
	"time"

	"go.yaml.in/yaml/v3"
)

// ruleFile is a Rule in the form of the rules file: durations are Go
// duration strings and zero fields are left out, except limit, which a
// flow, concurrency or hotspot rule must give (0 blocks every request).
type ruleFile struct {
	Name        string           `json:"name,omitempty" yaml:"name,omitempty"`
	Resource    string           `json:"resource" yaml:"resource"`
	Kind        Kind             `json:"kind" yaml:"kind"`
	Limit       *int64           `json:"limit,omitempty" yaml:"limit,omitempty"`
	Window      string           `json:"window,omitempty" yaml:"window,omitempty"`
	Algorithm   string           `json:"algorithm,omitempty" yaml:"algorithm,omitempty"`
	Buckets     int              `json:"buckets,omitempty" yaml:"buckets,omitempty"`
	Burst       int64            `json:"burst,omitempty" yaml:"burst,omitempty"`
	MaxWait     string           `json:"maxWait,omitempty" yaml:"maxWait,omitempty"`
	Warmup      string           `json:"warmup,omitempty" yaml:"warmup,omitempty"`
	ColdFactor  int              `json:"coldFactor,omitempty" yaml:"coldFactor,omitempty"`
	Param       string           `json:"param,omitempty" yaml:"param,omitempty"`
	MaxKeys     int              `json:"maxKeys,omitempty" yaml:"maxKeys,omitempty"`
	Overrides   map[string]int64 `json:"overrides,omitempty" yaml:"overrides,omitempty"`
	OnMissing   OnMissing        `json:"onMissing,omitempty" yaml:"onMissing,omitempty"`
	Store       string           `json:"store,omitempty" yaml:"store,omitempty"`
	Mode        string           `json:"mode,omitempty" yaml:"mode,omitempty"`
	OnFailure   string           `json:"onFailure,omitempty" yaml:"onFailure,omitempty"`
	LocalLimit  int64            `json:"localLimit,omitempty" yaml:"localLimit,omitempty"`
	Strategy    string           `json:"strategy,omitempty" yaml:"strategy,omitempty"`
	Threshold   float64          `json:"threshold,omitempty" yaml:"threshold,omitempty"`
	MaxRT       string           `json:"maxRT,omitempty" yaml:"maxRT,omitempty"`
	MinRequests int64            `json:"minRequests,omitempty" yaml:"minRequests,omitempty"`
	OpenFor     string           `json:"openFor,omitempty" yaml:"openFor,omitempty"`
	Probes      int64            `json:"probes,omitempty" yaml:"probes,omitempty"`
}

// fileForm returns r in the form of the rules file.
func (r Rule) fileForm() ruleFile {
	var limit *int64
	if r.Kind != KindBreaker || r.Limit != 0 {
		limit = &r.Limit
	}
	return ruleFile{
		Name: r.Name, Resource: r.Resource, Kind: r.Kind, Limit: limit,
		Window: durationText(r.Window), Algorithm: string(r.Algorithm), Buckets: r.Buckets,
		Burst: r.Burst, MaxWait: durationText(r.MaxWait), Warmup: durationText(r.Warmup),
		ColdFactor: r.ColdFactor, Param: r.Param, MaxKeys: r.MaxKeys, Overrides: r.Overrides,
		OnMissing: r.OnMissing, Store: r.Store, Mode: string(r.Mode), OnFailure: string(r.OnFailure),
		LocalLimit: r.LocalLimit, Strategy: string(r.Strategy), Threshold: r.Threshold,
		MaxRT: durationText(r.MaxRT), MinRequests: r.MinRequests, OpenFor: durationText(r.OpenFor),
		Probes: r.Probes,
	}
}

// durationText returns d as a Go duration ("1s", "250ms"), or "" for 0.
func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// MarshalJSON writes r as a rule of a JSON rules file (see ParseRules):
// fields named as in the json tags, durations as Go durations ("1s",
// "250ms"), zero fields left out except resource, kind and the limit of a
// flow, concurrency or hotspot rule.
func (r Rule) MarshalJSON() ([]byte, error) {
	return json.Marshal(r.fileForm())
}

// MarshalYAML writes r as a rule of a YAML rules file, in the form of
// MarshalJSON, for go.yaml.in/yaml/v3 and gopkg.in/yaml.v3.
func (r Rule) MarshalYAML() (any, error) {
	return r.fileForm(), nil
}

// UnmarshalJSON reads r from a rule of a JSON rules file, as MarshalJSON
// writes it, with the checks of ParseRules on each field (names, types,
// durations, duplicates, limit given) but without validating or normalizing
// the rule: use ParseRules or ValidateRules for that.
func (r *Rule) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	n, err := decodeJSON(data)
	if err != nil {
		return err
	}
	return r.UnmarshalYAML(n)
}

// UnmarshalYAML reads r from a rule of a YAML rules file, as UnmarshalJSON
// does from JSON.
func (r *Rule) UnmarshalYAML(n *yaml.Node) error {
	p := fileParser{unread: map[fieldKey]bool{}}
	rule := p.rule(0, n)
	if p.problems != nil {
		return &RulesError{Problems: p.problems}
	}
	*r = rule
	return nil
}
