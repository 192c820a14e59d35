package core

// Unexported names the tests of package core_test use.
var (
	CanonicalResource = canonicalResource
	DefaultName       = defaultName
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
