// Package httpadapter is the code the net/http, gin and echo adapters of
// sluice share: the default response to a blocked request (status, Retry-After,
// the RateLimit-Policy and RateLimit fields of
// draft-ietf-httpapi-ratelimit-headers-11, and an RFC 9457 problem body), the
// RateLimit fields of admitted requests, and the classification of a
// handler's outcome as success or error for the Guard's statistics.
//
// It is internal: users reach it through the adapters' options and their
// DefaultBlockHandler functions.
package httpadapter
