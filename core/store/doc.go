// Package store defines Store, where limits shared by several Guards are
// kept, and NewMemory, a Store in the process's memory.
//
// A rule opts in with its Store field (the rules file's `store:`), naming a
// Store given to the Guard with core.WithStore; package redisstore provides
// one on Redis. The Guard keeps deciding the rule's other concerns (which
// resources it matches, which param values it limits, the order of rules,
// giving reservations back) and asks the Store only for the count.
//
// When a Store fails (Take returns an error), the Guard applies the rule's
// failure policy to that request: fail open, fail closed, or decide on a
// local limit. Only a pattern that means an outage (consecutive failed rounds
// of calls) makes it stop calling the Store for a while
// (core.WithStoreBreaker), so a Redis that is down costs a few
// timeouts, not one per request; then it probes the Store one request at a
// time and goes back to it by itself.
package store
