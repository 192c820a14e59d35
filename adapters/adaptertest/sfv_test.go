package adaptertest

import (
	"testing"

	"github.com/dunglas/httpsfv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseList(t *testing.T) {
	items, err := ParseList(`"a";q=5;w=1, "b%20c";qu="concurrent-requests";tok=x;f`)
	require.NoError(t, err)
	assert.Equal(t, []Item{
		{Name: "a", Params: map[string]any{"q": int64(5), "w": int64(1)}},
		{Name: "b%20c", Params: map[string]any{"qu": "concurrent-requests", "tok": httpsfv.Token("x"), "f": true}},
	}, items)
	name, err := Decode(items[1].Name)
	require.NoError(t, err)
	assert.Equal(t, "b c", name)

	for _, bad := range []string{
		`a;q=5`,                  // a Token, not a String
		`("a" "b")`,              // an inner list
		`"a",`,                   // trailing comma
		`"a";q=1234567890123456`, // Integer of 16 digits
		`"a";Q=1`,                // upper-case key
		"\"caf\u00e9\"",          // non-ASCII in a String
		`"a" "b"`,                // no comma
	} {
		_, err := ParseList(bad)
		assert.Error(t, err, bad)
	}
}
