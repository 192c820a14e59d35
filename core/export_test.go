package core

import "github.com/sluicekit/sluice/core/internal/resname"

// Unexported names the tests of package core_test use.
var (
	CanonicalResource = resname.Canonical
	DefaultName       = builtinName
)

// Unexported defaults the tests of package core_test use.
const (
	DefaultStoreBackoff = defaultStoreBackoff
	DefaultStoreTrip    = defaultStoreTrip
)

// MatchResource reports whether the resource name matches pattern as a
// rule's Resource does.
func MatchResource(pattern, name string) bool {
	return compilePattern(pattern).match(name)
}

// WithoutClass returns b without its block class, for comparing it with a
// BlockedError written in a test (BlockedError.Class reads the class).
func WithoutClass(b BlockedError) BlockedError {
	b.class = nil
	return b
}
