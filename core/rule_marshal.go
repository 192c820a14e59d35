package core

import (
	"encoding/json"
	"errors"
	"reflect"
	"time"
)

// fileForm returns r in the form of the rules file (see MarshalJSON), a
// struct of Rule's fields with json and yaml names.
func (r Rule) fileForm() any {
	k := kindSet(builtinKinds()).find(r.Kind)
	rv := reflect.ValueOf(r)
	fields := make([]reflect.StructField, rv.NumField())
	values := make([]reflect.Value, rv.NumField())
	for i, name := range ruleFields() {
		f, v := rv.Type().Field(i), rv.Field(i)
		switch {
		case f.Type == reflect.TypeFor[time.Duration]():
			text := "" // left out
			if d := time.Duration(v.Int()); d != 0 {
				text = d.String()
			}
			v = reflect.ValueOf(text)
		case name == "limit":
			var limit *int64
			if r.Limit != 0 || k == nil || k.field("limit") != nil && k.field("limit").given {
				limit = &r.Limit
			}
			v = reflect.ValueOf(limit)
		}
		tag := name
		if name != "resource" && name != "kind" {
			tag += ",omitempty"
		}
		fields[i] = reflect.StructField{Name: f.Name, Type: v.Type(), Tag: reflect.StructTag(`json:"` + tag + `" yaml:"` + tag + `"`)}
		values[i] = v
	}
	out := reflect.New(reflect.StructOf(fields)).Elem()
	for i, v := range values {
		out.Field(i).Set(v)
	}
	return out.Interface()
}

// MarshalJSON writes r as a rule of a JSON rules file (see package rulesfile):
// fields named as in the json tags, durations as Go durations ("1s",
// "250ms"), zero fields left out except resource, kind and the limit of a
// flow, concurrency or hotspot rule.
func (r Rule) MarshalJSON() ([]byte, error) { return json.Marshal(r.fileForm()) }

// MarshalYAML writes r as a rule of a YAML rules file, in the form of
// MarshalJSON, for go.yaml.in/yaml/v3 and gopkg.in/yaml.v3.
func (r Rule) MarshalYAML() (any, error) { return r.fileForm(), nil }

// UnmarshalJSON refuses to read r: a rule in the form of a rules file is
// read by package rulesfile (rulesfile.Rules), which checks each field's
// name and type, as the form's durations and left-out fields need. The
// error says so, rather than decoding a misspelt field as a limit of 0.
func (r *Rule) UnmarshalJSON([]byte) error { return errNoUnmarshal }

// UnmarshalYAML refuses to read r, as UnmarshalJSON does, for
// go.yaml.in/yaml/v3, gopkg.in/yaml.v3 and gopkg.in/yaml.v2.
func (r *Rule) UnmarshalYAML(func(any) error) error { return errNoUnmarshal }

var errNoUnmarshal = errors.New("sluice: a core.Rule is not decoded directly: decode a list of rules into a rulesfile.Rules, which checks every field")
