package throttle

// WithRandom replaces the random numbers in [0, 1) that decide a rejection
// (math/rand/v2's Float64), for the tests.
func WithRandom(f func() float64) Option {
	return func(t *Throttle) error {
		t.random = f
		return nil
	}
}

// Share returns the share of the calls to resource Allow rejects now,
// without deciding one.
func (t *Throttle) Share(resource string) float64 {
	s := t.state(resource, t.clock.Now())
	s.mu.Lock()
	defer s.mu.Unlock()
	return t.share(s, t.clock.Now())
}
