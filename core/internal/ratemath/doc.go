// Package ratemath is the arithmetic that the flow limiters (package flow)
// and the stores (package store's Memory, package redisstore) share, so that
// a limit decided in a store agrees with the same limit decided locally.
// The GCRA of token and leaky buckets is flow.GCRA, which redisstore uses
// as is; this package holds what is written once for both sides without a
// limiter's state.
package ratemath
