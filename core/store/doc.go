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
// failure policy to that request, and leaves the Store alone for a while
// only after a pattern that means an outage, one breaker per store and mode
// ("Shared stores" in package core's documentation). A Store that keeps
// approximate limits fails their Take once it can no longer keep them
// (package redisstore: when it cannot synchronize counts for a while), so
// that their rules apply their failure policy too.
//
// NewMemory holds a bounded number of keys and never forgets one whose
// admissions still count: a flood of new keys beyond the bound has the
// failure policy decide the new ones, and every key it held keeps its count
// (go test -run TestMemoryFloodKeepsLimitedKeys ./core/store).
//
// A Store of one's own needs only exported names: Decision's Ref and Mark
// carry what its Undo needs (the Guard passes them back unchanged), Bucket
// is the arithmetic of the Guard's token and leaky buckets, package
// ratemath that of its sliding counters, and package storetest the suite a
// Store passes (see ExampleStore). Package redisstore is written so.
package store
