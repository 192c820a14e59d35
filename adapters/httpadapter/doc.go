// Package httpadapter is the code the net/http, gin and echo adapters of
// sluice share: the default response to a blocked request (status, Retry-After,
// the RateLimit-Policy and RateLimit fields of
// draft-ietf-httpapi-ratelimit-headers-11, and an RFC 9457 problem body), the
// RateLimit fields of admitted requests, and the classification of a
// handler's outcome as success or error for the Guard's statistics (a
// request whose handler wrote nothing after its client left is a failure
// whose client gave up: Common.HandlerExitError; so is one failing after
// the client sent its body malformed: Body).
//
// Users reach it through the adapters' options and their
// DefaultBlockHandler functions. It is exported, rather than internal,
// because the gin and echo adapters are modules of their own: a module
// that imports another module's internal package can fail to compile
// when the two are upgraded apart. It follows the root module's
// versioning, so an adapter built against one version of it compiles
// with the next.
package httpadapter
