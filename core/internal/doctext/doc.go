// Package doctext reads the values a documentation text states, for the
// tests that check each stated default against the constant the code
// uses: a change to either fails them.
package doctext
