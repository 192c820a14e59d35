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
