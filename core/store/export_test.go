package store

// Len is len, for the tests of package store_test.
func (m *Memory) Len() int { return m.len() }
