// Package history keeps fixed-size rings of samples taken once a step (a
// second, for a Guard): the memory of a Ring is allocated once, by New, and
// does not grow however long it records.
package history
