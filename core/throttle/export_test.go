package throttle

// WithRandom replaces the random numbers in [0, 1) that decide a rejection
// (math/rand/v2's Float64), for the tests.
func WithRandom(f func() float64) Option {
	return func(t *Throttle) error {
		t.random = f
		return nil
	}
}
