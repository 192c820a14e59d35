package dashboard

import (
	"encoding/json"
	"math"
)

// The JSON of api/snapshot, for the tests to decode it.
type (
	Snapshot = snapshot
	Series   = series
	Resource = resource
	Totals   = totals
	Rule     = rule
	Breaker  = breaker
	Store    = store
)

// UnmarshalJSON reads s, null as NaN.
func (s *series) UnmarshalJSON(b []byte) error {
	var raw []*float64
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*s = make(series, len(raw))
	for i, v := range raw {
		(*s)[i] = math.NaN()
		if v != nil {
			(*s)[i] = *v
		}
	}
	return nil
}
