package core

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

// validOf is a valid rule of each built-in kind, the least it takes.
var validOf = map[Kind]Rule{
	KindFlow:        {Resource: "*", Kind: KindFlow, Limit: 1},
	KindConcurrency: {Resource: "*", Kind: KindConcurrency, Limit: 1},
	KindHotspot:     {Resource: "*", Kind: KindHotspot, Param: "ip", Limit: 1},
	KindBreaker:     {Resource: "*", Kind: KindBreaker, Strategy: "error-count", Threshold: 1},
	KindAdaptive:    {Resource: "*", Kind: KindAdaptive},
	KindSystem:      {Resource: "*", Kind: KindSystem, Signal: SignalQPS, Threshold: 10},
}

// TestDescriptorsBoundsAreEnforced checks the descriptors against the
// validator: a value of a field out of the bounds or values its kind's
// descriptor gives (and so the JSON Schema) is a problem of that field,
// but 0, which leaves a field to its default, and a field a kind does not
// take is refused.
func TestDescriptorsBoundsAreEnforced(t *testing.T) {
	ks := kindSet(builtinKinds())
	fields := ruleFields()
	assert.Len(t, validOf, len(ks))
	for _, k := range ks {
		valid := validOf[k.kind]
		assert.NoError(t, ks.checkRules([]Rule{valid}), k.kind)
		for i, key := range fields {
			f := k.field(key)
			var bad []any
			if f != nil {
				bad = append(bad, below(f.min, 1), below(f.xmin, 0), below(f.max, -1))
				if f.enum != nil {
					bad = append(bad, "no-such-value")
				}
			} else if key != "name" && key != "resource" && key != "kind" && key != "shadow" {
				bad = append(bad, "set")
			}
			for _, v := range bad {
				if v == nil || v == 0.0 { // 0 leaves a field to its default
					continue
				}
				r := valid
				if !setField(&r, i, v) {
					continue
				}
				err := ks.checkRules([]Rule{r})
				if assert.Error(t, err, "%s: %s = %v", k.kind, key, v) {
					assert.Contains(t, err.Error(), ": "+key+" ", "%s: %s = %v", k.kind, key, v)
				}
			}
		}
	}
}

// below returns a value out of bound b: b-by for a minimum (by 1) or an
// exclusive minimum (by 0), b+1 for a maximum (by -1); nil for no bound.
func below(b any, by float64) any {
	if b == nil {
		return nil
	}
	x, _ := b.(int)
	f := float64(x)
	if v, ok := b.(float64); ok {
		f = v
	}
	if by < 0 {
		return f + 1
	}
	return f - by
}

// setField sets field i of r to v, a number, a text, or "set" for any
// value that is not zero; it reports whether it could.
func setField(r *Rule, i int, v any) bool {
	f := reflect.ValueOf(r).Elem().Field(i)
	switch f.Kind() {
	case reflect.Int, reflect.Int64:
		n, ok := v.(float64)
		if !ok {
			n = 7
		}
		f.SetInt(int64(n))
	case reflect.Float64:
		n, ok := v.(float64)
		if !ok {
			n = 7
		}
		f.SetFloat(n)
	case reflect.String:
		f.SetString(fmt.Sprint(v))
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Map:
		f.Set(reflect.ValueOf(map[string]int64{"x": 1}))
	default:
		return false
	}
	return true
}
