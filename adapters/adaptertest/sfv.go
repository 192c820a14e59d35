package adaptertest

import (
	"fmt"
	"net/url"

	"github.com/dunglas/httpsfv"
)

// Item is one member of a structured-field List (RFC 9651) as the
// RateLimit fields use them: a String naming a policy, and its parameters
// with the values github.com/dunglas/httpsfv gives them (int64 for an
// Integer, string for a String, httpsfv.Token, bool, ...).
type Item struct {
	Name   string
	Params map[string]any
}

// ParseList parses s as a structured-field List with httpsfv, and requires
// every member to be a String with parameters.
func ParseList(s string) ([]Item, error) {
	list, err := httpsfv.UnmarshalList([]string{s})
	if err != nil {
		return nil, fmt.Errorf("structured field %q: %w", s, err)
	}
	items := make([]Item, 0, len(list))
	for i, m := range list {
		it, ok := m.(httpsfv.Item)
		if !ok {
			return nil, fmt.Errorf("structured field %q: member %d is an inner list", s, i)
		}
		name, ok := it.Value.(string)
		if !ok {
			return nil, fmt.Errorf("structured field %q: member %d is %T, want a String", s, i, it.Value)
		}
		params := map[string]any{}
		for _, k := range it.Params.Names() {
			params[k], _ = it.Params.Get(k)
		}
		items = append(items, Item{Name: name, Params: params})
	}
	return items, nil
}

// Decode percent-decodes a policy name as the adapters write names with
// bytes outside printable ASCII.
func Decode(name string) (string, error) {
	return url.PathUnescape(name)
}
