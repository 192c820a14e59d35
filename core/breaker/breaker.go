package breaker

import "time"

// Strategy is what a breaker counts as a bad outcome and how it trips. The
// values are the ones the rules file uses.
type Strategy string

// The strategies.
const (
	// SlowRatio trips when the share of requests slower than MaxRT among
	// those completed in the window reaches Threshold.
	SlowRatio Strategy = "slow-ratio"
	// ErrorRatio trips when the share of failed requests among those
	// completed in the window reaches Threshold.
	ErrorRatio Strategy = "error-ratio"
	// ErrorCount trips when the number of failed requests completed in the
	// window reaches Threshold.
	ErrorCount Strategy = "error-count"
)

// State is the state of a breaker, a word (as JSON, logs and metrics
// show it).
type State string

// The states. A closed breaker lets requests through and watches their
// outcomes; an open one rejects every request; a half-open one lets Probes
// requests through and rejects the others.
const (
	Closed   State = "closed"
	Open     State = "open"
	HalfOpen State = "half-open"
)

// Stats is the state of a breaker and the statistics it trips on.
type Stats struct {
	State         State
	Requests, Bad int64         // the requests completed in the window while closed, and the bad ones
	Trips         int64         // the times the breaker opened
	RetryAfter    time.Duration // while open, the time until it goes half-open
}
