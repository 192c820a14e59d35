// Package ratemath is the arithmetic of limits without a limiter's state,
// written once for the Guard's limiters and for the Stores (package store's
// NewMemory, package redisstore), so that a limit decided in a Store agrees
// with the same limit decided in the process: an overflow-safe a*b/c, and a
// sliding counter's weighted count and the earliest time more requests fit
// in it. The arithmetic of token and leaky buckets is store.Bucket.
package ratemath
