package history

// Bytes returns the memory the Ring holds: its values and itself.
func (r *Ring) Bytes() int { return 4*len(r.vals) + 48 }
