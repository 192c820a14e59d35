package store

// Len returns the number of keys a store of NewMemory keeps, for the tests
// of package store_test.
func Len(s Store) int {
	m := s.(*memory)
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.lims)
}
