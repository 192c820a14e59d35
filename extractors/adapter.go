package extractors

import (
	"errors"
	"fmt"
	"slices"

	"github.com/sluicekit/sluice/core"
)

// ForAdapter returns the Extractor an adapter of guard reads params with,
// given own, the adapter's (its WithExtractor option; nil when it was
// given none). An Extractor given to the Guard (core.WithParamSource) is
// declared once for all the Guard's adapters:
//
//   - own nil: the Guard's Extractor, or New() when the Guard has none;
//   - own not nil: own, when the Guard has no Extractor or has own.
//
// It returns an error saying what to do when own is not among the Guard's
// Extractors (the adapter would read the params, the client IP among them,
// otherwise than the program declared), and when own is nil and the Guard
// has several. The adapters call it when they are made.
func ForAdapter(guard *core.Guard, own *Extractor) (*Extractor, error) {
	var have []*Extractor
	for _, s := range guard.ParamSources() {
		if x, ok := s.(*Extractor); ok && x != nil && !slices.Contains(have, x) {
			have = append(have, x)
		}
	}
	switch {
	case own != nil && (len(have) == 0 || slices.Contains(have, own)):
		return own, nil
	case own != nil:
		return nil, errors.New("WithExtractor: the Guard was given another Extractor (core.WithParamSource), and the adapter would read params otherwise: give the Extractor once, to the Guard, or give the Guard this one too")
	case len(have) > 1:
		return nil, fmt.Errorf("the Guard was given %d Extractors (core.WithParamSource): give the adapter the one it reads params with (WithExtractor)", len(have))
	case len(have) == 1:
		return have[0], nil
	}
	return New()
}
