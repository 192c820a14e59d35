package core

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/rulefields"
)

var updateSchema = flag.Bool("update", false, "rewrite rulesfile/rules.schema.json from the kind descriptors")

// schemaFile is the rules file's JSON Schema, which package rulesfile
// embeds.
const schemaFile = "rulesfile/rules.schema.json"

// TestRulesSchema checks that the checked-in JSON Schema of rules files is
// the one the kind descriptors give. After changing a descriptor, run
//
//	go test ./core -run TestRulesSchema -update
func TestRulesSchema(t *testing.T) {
	want, err := rulesSchema(builtinKinds())
	require.NoError(t, err)
	if *updateSchema {
		require.NoError(t, os.WriteFile(schemaFile, want, 0o644))
	}
	got, err := os.ReadFile(schemaFile)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "%s is not the descriptors' schema: go test ./core -run TestRulesSchema -update", schemaFile)
}

// jsonObject is a JSON object whose members keep their order.
type jsonObject []jsonMember

type jsonMember struct {
	key   string
	value any
}

// MarshalJSON writes o with its members in order.
func (o jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// set returns o with key set to value: replaced in place, or added last.
func (o jsonObject) set(key string, value any) jsonObject {
	for i := range o {
		if o[i].key == key {
			o[i].value = value
			return o
		}
	}
	return append(o, jsonMember{key, value})
}

// durationPattern matches a Go duration (time.ParseDuration) other than
// a bare 0, which the duration definition takes as a number or "0".
const durationPattern = `^(0|([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))*$`

// rulesSchema returns the JSON Schema (draft 2020-12) of a rules file of
// the kinds ks: the common fields, each other field with the union of its
// kinds' types, values and bounds, and per kind what it requires, refines
// and leaves unset.
func rulesSchema(ks kindSet) ([]byte, error) {
	kindDocs := make([]string, len(ks))
	kindNames := make([]string, len(ks))
	for i, k := range ks {
		kindDocs[i] = string(k.kind) + ": " + k.doc
		kindNames[i] = string(k.kind)
	}
	props := jsonObject{
		{"name", jsonObject{
			{"description", "Identifies the rule in errors, headers and metrics; unique; ASCII letters, digits and " + nameChars + ". Default: derived from kind and resource."},
			{"type", "string"}, {"maxLength", maxNameLen}, {"pattern", "^[A-Za-z0-9_.:/{}*$#()-]+$"}}},
		{"resource", jsonObject{
			{"description", `An exact resource name ("GET /items/{id}", "/pkg.Svc/Method") or a glob in which * matches any run of characters ("GET /items/*", "*").`},
			{"type", "string"}, {"minLength", 1}, {"maxLength", maxResourceLen}}},
		{"kind", jsonObject{{"description", strings.Join(kindDocs, "; ") + "."}, {"enum", kindNames}}},
	}
	fields := ruleFields()
	rt := reflect.TypeFor[Rule]()
	for i, key := range fields {
		if slices.Contains(commonFields[:], key) {
			continue
		}
		p := fieldSchema(ks, key, rt.Field(i).Type)
		if p != nil {
			props = append(props, jsonMember{key, p})
		}
	}
	props = append(props, jsonMember{"shadow", jsonObject{
		{"description", "Evaluate and count the rule as if enforced, but never enforce it: requests it would block pass, counted and logged as shadow blocks. Changing it alone keeps the rule's counts."},
		{"type", "boolean"}}})

	var allOf []any
	for _, k := range ks {
		allOf = append(allOf, kindSchema(ks, &k, fields))
		allOf = append(allOf, k.schema...)
	}
	doc := jsonObject{
		{"$schema", "https://json-schema.org/draft/2020-12/schema"},
		{"$id", "https://github.com/sluicekit/sluice/core/rulesfile/rules.schema.json"},
		{"title", "sluice rules file"},
		{"description", "A sluice rules file (YAML or JSON): the one key rules, a list of rules. rulesfile.Load and the sluicecheck command are the authority; this schema gives editors completion and catches most mistakes as you type. Generated from the kind descriptors of package core: go test ./core -run TestRulesSchema -update."},
		{"type", "object"},
		{"required", []string{"rules"}},
		{"additionalProperties", false},
		{"properties", jsonObject{{"rules", jsonObject{
			{"description", `The rules. A file with no rules says so with "rules: []": an empty file or a bare "rules:" is refused.`},
			{"type", "array"}, {"maxItems", 100_000}, {"items", jsonObject{{"$ref", "#/$defs/rule"}}}}}}},
		{"$defs", jsonObject{
			{"duration", jsonObject{
				{"description", "A Go duration such as 1s, 250ms or 1m30s, or the integer 0."},
				{"anyOf", []any{jsonObject{{"type", "string"}, {"pattern", durationPattern}}, jsonObject{{"const", 0}}}}}},
			{"unset", jsonObject{
				{"description", "Does not apply to this kind of rule: leave it out (a zero value, an empty string or null is accepted too)."},
				{"anyOf", []any{
					jsonObject{{"type", "null"}}, jsonObject{{"const", 0}}, jsonObject{{"const", ""}},
					jsonObject{{"type", "string"}, {"pattern", `^(0+(\.0*)?(ns|us|µs|μs|ms|s|m|h))+$`}},
					jsonObject{{"type", "object"}, {"maxProperties", 0}}}}}},
			{"rule", jsonObject{
				{"type", "object"},
				{"required", []string{"resource", "kind"}},
				{"additionalProperties", false},
				{"properties", props},
				{"allOf", allOf}}}}},
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// fieldSchema returns the schema of the field key, of Go type t, for a rule
// of any kind: its type, the values and bounds every kind taking it allows,
// and a description of it per kind. It returns nil for a field no kind
// takes.
func fieldSchema(ks kindSet, key string, t reflect.Type) jsonObject {
	taking := ks.taking(key)
	if len(taking) == 0 {
		return nil
	}
	var descs []string
	var kinds []string
	var enum []string
	for i, k := range taking {
		f := k.field(key)
		for _, v := range f.enum {
			if !slices.Contains(enum, v) {
				enum = append(enum, v)
			}
		}
		kinds = append(kinds, string(k.kind))
		desc := f.doc
		if f.unit != "" {
			desc += " Unit: " + f.unit + "."
		}
		if f.def != "" {
			desc += " Default " + f.def + "."
		}
		if i+1 < len(taking) {
			next := taking[i+1].field(key)
			if next.doc == f.doc && next.unit == f.unit && next.def == f.def {
				continue // said once for both
			}
		}
		descs = append(descs, strings.Join(kinds, ", ")+": "+desc)
		kinds = nil
	}
	p := jsonObject{{"description", strings.Join(descs, " ")}}
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return p.set("$ref", "#/$defs/duration")
	case t.Kind() == reflect.Map:
		return append(p, jsonMember{"type", "object"},
			jsonMember{"propertyNames", jsonObject{{"minLength", 1}, {"maxLength", maxOverrideKeyLen}}},
			jsonMember{"additionalProperties", jsonObject{{"type", "integer"}, {"minimum", 0}}})
	case enum != nil:
		return p.set("enum", enum)
	}
	p = p.set("type", map[reflect.Kind]string{reflect.String: "string", reflect.Int: "integer", reflect.Int64: "integer",
		reflect.Float64: "number", reflect.Bool: "boolean"}[t.Kind()])
	if key == "param" || key == "priority" { // a param, checked by rulefields.ParamProblem
		p = p.set("maxLength", rulefields.MaxParamLen)
	}
	for _, b := range []struct {
		name string
		of   func(*fieldSpec) any
	}{
		{"minimum", func(f *fieldSpec) any { return f.min }},
		{"exclusiveMinimum", func(f *fieldSpec) any { return f.xmin }},
		{"maximum", func(f *fieldSpec) any { return f.max }},
	} {
		if v, ok := commonBound(taking, key, b.of); ok {
			p = p.set(b.name, v)
		}
	}
	return p
}

// commonBound returns the bound of the field key that every kind of taking
// gives it, when they all give the same.
func commonBound(taking kindSet, key string, of func(*fieldSpec) any) (any, bool) {
	first := of(taking[0].field(key))
	for _, k := range taking[1:] {
		if of(k.field(key)) != first {
			return nil, false
		}
	}
	return first, first != nil
}

// kindSchema returns the conditions of a rule of kind k: the fields it
// requires, its own values and bounds where they differ from the field's,
// and the fields it does not take left unset.
func kindSchema(ks kindSet, k *kindSpec, fields []string) jsonObject {
	var required []string
	var props jsonObject
	for _, key := range fields {
		if slices.Contains(commonFields[:], key) {
			continue
		}
		f := k.field(key)
		if f == nil {
			props = append(props, jsonMember{key, jsonObject{{"$ref", "#/$defs/unset"}}})
			continue
		}
		if f.given || f.required {
			required = append(required, key)
		}
		var own jsonObject
		taking := ks.taking(key)
		var all []string
		for _, o := range taking {
			for _, v := range o.field(key).enum {
				if !slices.Contains(all, v) {
					all = append(all, v)
				}
			}
		}
		if f.enum != nil && !slices.Equal(f.enum, all) {
			own = own.set("enum", f.enum)
		}
		for _, b := range []struct {
			name string
			v    any
			of   func(*fieldSpec) any
		}{
			{"minimum", f.min, func(f *fieldSpec) any { return f.min }},
			{"exclusiveMinimum", f.xmin, func(f *fieldSpec) any { return f.xmin }},
			{"maximum", f.max, func(f *fieldSpec) any { return f.max }},
		} {
			if _, common := commonBound(taking, key, b.of); b.v != nil && !common {
				own = own.set(b.name, b.v)
			}
		}
		if own != nil {
			props = append(props, jsonMember{key, own})
		}
	}
	then := jsonObject{}
	if required != nil {
		then = then.set("required", required)
	}
	then = then.set("properties", props)
	return jsonObject{
		{"if", jsonObject{{"properties", jsonObject{{"kind", jsonObject{{"const", string(k.kind)}}}}}, {"required", []string{"kind"}}}},
		{"then", then},
	}
}

// TestDescriptorDefaultsAreApplied checks each default a kind's descriptor
// states (fieldSpec.def, which the schema and its editors show) against
// the one NormalizeRules applies to a rule of the kind that leaves the
// field out: the store fields' on a rule with a store, coldFactor's on one
// with a warmup, the others' on one without. OnMissing is left empty, which
// means its default (Rule.OnMissing).
func TestDescriptorDefaultsAreApplied(t *testing.T) {
	base := map[Kind]Rule{
		KindFlow:        {Limit: 1},
		KindConcurrency: {Limit: 1},
		KindHotspot:     {Limit: 1, Param: "ip"},
		KindBreaker:     {Strategy: "error-count", Threshold: 1},
		KindAdaptive:    {},
		KindSystem:      {Signal: SignalQPS, Threshold: 1},
	}
	storeKeys := map[string]bool{}
	for _, f := range storeFields() {
		storeKeys[f.key] = true
	}
	checked := 0
	for _, k := range builtinKinds() {
		r, ok := base[k.kind]
		require.True(t, ok, "a rule of kind %s to normalize", k.kind)
		r.Resource, r.Kind = "GET /x", k.kind
		for _, f := range k.fields {
			if f.def == "" {
				continue
			}
			in := r
			switch {
			case storeKeys[f.key]:
				in.Store = "redis"
			case f.key == "coldFactor":
				in.Warmup = time.Second
			}
			out, err := NormalizeRules([]Rule{in})
			require.NoError(t, err, "%s %s", k.kind, f.key)
			i := slices.Index(ruleFields(), f.key)
			v := reflect.ValueOf(out[0]).Field(i)
			var got string
			switch v.Kind() {
			case reflect.Float64:
				got = strconv.FormatFloat(v.Float(), 'f', -1, 64)
			default:
				got = fmt.Sprint(v.Interface())
			}
			if f.key == "onMissing" && got == "" {
				got = string(MissingSkip)
			}
			assert.Equal(t, f.def, got, "kind %s, field %s: the default the descriptor states", k.kind, f.key)
			checked++
		}
	}
	assert.Greater(t, checked, 15, "defaults checked")
}
