package store

// Len returns the number of keys a store of NewMemory keeps, for the tests
// of package store_test.
func Len(s Store) int { return s.(*memory).len() }
