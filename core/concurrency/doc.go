// Package concurrency implements in-flight limits: at most Limit requests of
// a resource between Enter and Exit at any moment.
package concurrency
