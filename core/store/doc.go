// Package store defines Store, where limits shared by several Guards are
// kept, and Memory, a Store in the process's memory.
//
// A rule opts in with its Store field (the rules file's `store:`), naming a
// Store given to the Guard with core.WithStore; package redisstore provides
// one on Redis. The Guard keeps deciding the rule's other concerns (which
// resources it matches, which param values it limits, the order of rules,
// giving reservations back) and asks the Store only for the count.
//
// When a Store fails (Take returns an error), the Guard applies the rule's
// failure policy: fail open, fail closed, or decide on a local limit. It also
// stops calling that Store for a while, so a Redis that is down costs one
// timeout, not one per request, and tries again by itself.
package store
