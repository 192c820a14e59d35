// Package engine is the overload command (examples/overload, whose doc
// tells what it measures and how): Program.Main runs it. A Program may add
// protections to the built-in ones, a rule set or a handler in front of the
// backend, and trace each trial, so that a module with dependencies the
// examples module does not take can compare them in the same run:
// examples/overload/sentinel adds Sentinel-Go's system rule so.
package engine
