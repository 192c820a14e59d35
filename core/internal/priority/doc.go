// Package priority is how core's system and adaptive rules shed requests by
// level under overload: a Tracker counts a rule's requests in flight and
// admitted per level, and tells how much of the rule's limit a level must
// leave to the levels above it, so that a level is shed only once every
// lower one is.
//
// It is internal to sluice: users name the param a level is read from
// (core.Rule.Priority) or set it in Go (core.WithPriority).
package priority
