package core

import (
	"encoding/json"
	"errors"
	"time"
)

// ruleFile is a Rule in the form of the rules file: durations are Go
// duration strings and zero fields are left out, except limit where the
// rule's kind must give it (flow, concurrency, hotspot: 0 blocks every
// request).
type ruleFile struct {
	Name          string           `json:"name,omitempty" yaml:"name,omitempty"`
	Resource      string           `json:"resource" yaml:"resource"`
	Kind          Kind             `json:"kind" yaml:"kind"`
	Limit         *int64           `json:"limit,omitempty" yaml:"limit,omitempty"`
	Window        string           `json:"window,omitempty" yaml:"window,omitempty"`
	Algorithm     string           `json:"algorithm,omitempty" yaml:"algorithm,omitempty"`
	Buckets       int              `json:"buckets,omitempty" yaml:"buckets,omitempty"`
	Burst         int64            `json:"burst,omitempty" yaml:"burst,omitempty"`
	MaxWait       string           `json:"maxWait,omitempty" yaml:"maxWait,omitempty"`
	Warmup        string           `json:"warmup,omitempty" yaml:"warmup,omitempty"`
	ColdFactor    int              `json:"coldFactor,omitempty" yaml:"coldFactor,omitempty"`
	Param         string           `json:"param,omitempty" yaml:"param,omitempty"`
	MaxKeys       int              `json:"maxKeys,omitempty" yaml:"maxKeys,omitempty"`
	Overrides     map[string]int64 `json:"overrides,omitempty" yaml:"overrides,omitempty"`
	OnMissing     OnMissing        `json:"onMissing,omitempty" yaml:"onMissing,omitempty"`
	Store         string           `json:"store,omitempty" yaml:"store,omitempty"`
	Mode          string           `json:"mode,omitempty" yaml:"mode,omitempty"`
	OnFailure     string           `json:"onFailure,omitempty" yaml:"onFailure,omitempty"`
	LocalLimit    int64            `json:"localLimit,omitempty" yaml:"localLimit,omitempty"`
	Strategy      string           `json:"strategy,omitempty" yaml:"strategy,omitempty"`
	Threshold     float64          `json:"threshold,omitempty" yaml:"threshold,omitempty"`
	MaxRT         string           `json:"maxRT,omitempty" yaml:"maxRT,omitempty"`
	MinRequests   int64            `json:"minRequests,omitempty" yaml:"minRequests,omitempty"`
	OpenFor       string           `json:"openFor,omitempty" yaml:"openFor,omitempty"`
	Probes        int64            `json:"probes,omitempty" yaml:"probes,omitempty"`
	MinLimit      int64            `json:"minLimit,omitempty" yaml:"minLimit,omitempty"`
	MaxLimit      int64            `json:"maxLimit,omitempty" yaml:"maxLimit,omitempty"`
	Tolerance     float64          `json:"tolerance,omitempty" yaml:"tolerance,omitempty"`
	ProbeInterval string           `json:"probeInterval,omitempty" yaml:"probeInterval,omitempty"`
	Signal        Signal           `json:"signal,omitempty" yaml:"signal,omitempty"`
	Priority      string           `json:"priority,omitempty" yaml:"priority,omitempty"`
	Shadow        bool             `json:"shadow,omitempty" yaml:"shadow,omitempty"`
}

// fileForm returns r in the form of the rules file.
func (r Rule) fileForm() ruleFile {
	var limit *int64
	if k := kindSet(builtinKinds()).find(r.Kind); r.Limit != 0 || k == nil || k.field("limit") != nil && k.field("limit").given {
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
		Probes: r.Probes, MinLimit: r.MinLimit, MaxLimit: r.MaxLimit,
		Tolerance: r.Tolerance, ProbeInterval: durationText(r.ProbeInterval),
		Signal: r.Signal, Priority: r.Priority, Shadow: r.Shadow,
	}
}

// durationText returns d as a Go duration ("1s", "250ms"), or "" for 0.
func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// MarshalJSON writes r as a rule of a JSON rules file (see package rulesfile):
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

// UnmarshalJSON refuses to read r: a rule in the form of a rules file is
// read by package rulesfile (rulesfile.Rules), which checks each field's
// name and type, as the form's durations and left-out fields need. The
// error says so, rather than decoding a misspelt field as a limit of 0.
func (r *Rule) UnmarshalJSON([]byte) error { return errNoUnmarshal }

// UnmarshalYAML refuses to read r, as UnmarshalJSON does, for
// go.yaml.in/yaml/v3, gopkg.in/yaml.v3 and gopkg.in/yaml.v2.
func (r *Rule) UnmarshalYAML(func(any) error) error { return errNoUnmarshal }

var errNoUnmarshal = errors.New("sluice: a core.Rule is not decoded directly: decode a list of rules into a rulesfile.Rules, which checks every field")
