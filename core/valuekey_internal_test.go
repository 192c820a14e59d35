package core

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestValueKeyLongAndShortApart: a long value is kept under a hash of it; a
// client that sends the hash's text as a short value must not share its
// state (the key of the short value "sha256:HEX" was the long value's).
func TestValueKeyLongAndShortApart(t *testing.T) {
	long := strings.Repeat("v", 65)
	sum := sha256.Sum256([]byte(long))
	h := hex.EncodeToString(sum[:16])
	keys := map[string]string{}
	for _, v := range []string{long, "sha256:" + h, "#" + h, h, "=" + h, "", "\x00", "x"} {
		k := valueKey("r", v)
		if prev, ok := keys[k]; ok {
			t.Fatalf("values %q and %q share the key %q", prev, v, k)
		}
		keys[k] = v
	}
	assert.Equal(t, "r\x00=x", valueKey("r", "x"))
	assert.Len(t, valueKey("r", long), len("r\x00#")+32, "a long value's key stays short")
}
