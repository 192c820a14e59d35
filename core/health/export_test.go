package health

// The JSON Handler serves, for the tests to decode it.
type (
	Report = report
	Store  = store
	Rules  = rules
)
