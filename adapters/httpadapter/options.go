package httpadapter

import (
	"errors"

	"github.com/sluicekit/sluice/extractors"
)

// The options every HTTP adapter has, written once: each adapter's option
// of the same name wraps one of these, and New returns the error prefixed
// with the adapter's name.

// WithExtractor sets the Extractor; x must not be nil. FinishErr checks it
// against the Guard's (extractors.ForAdapter).
func WithExtractor(x *extractors.Extractor) func(*Common) error {
	return func(c *Common) error {
		if x == nil {
			return errors.New("WithExtractor: nil *extractors.Extractor")
		}
		c.Extractor = (*extractors.Extractor)(x)
		return nil
	}
}

// WithErrorClassifier sets the error classifier; fn must not be nil.
func WithErrorClassifier(fn func(status int, err error) bool) func(*Common) error {
	return func(c *Common) error {
		if fn == nil {
			return errors.New("WithErrorClassifier: nil function")
		}
		c.Classify = fn
		return nil
	}
}

// WithRateLimitFields sets whether admitted responses carry the RateLimit
// fields (Common.NoQuota is its negation, so that the zero Common sends
// them).
func WithRateLimitFields(on bool) func(*Common) error {
	return func(c *Common) error {
		c.NoQuota = !on
		return nil
	}
}

// CheckFunc returns the error of an option given a nil function.
func CheckFunc(option string, isNil bool) error {
	if isNil {
		return errors.New(option + ": nil function")
	}
	return nil
}
