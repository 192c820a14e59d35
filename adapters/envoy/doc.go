// Package sluiceenvoy serves Envoy's rate limit service (RLS v3,
// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit) from a sluice
// Guard.
package sluiceenvoy
