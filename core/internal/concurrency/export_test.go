package concurrency

import "github.com/sluicekit/sluice/core/stripe"

// MinLeasedLimit is the smallest limit whose Limiter lets CPUs keep free
// slots (stripe.MinLeased over the CPUs).
func MinLeasedLimit() int64 { return stripe.MinLeased(stripe.Count()) }
