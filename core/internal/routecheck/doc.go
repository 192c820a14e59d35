// Package routecheck warns about HTTP rules that match none of the routes a
// service serves (core.Guard.CheckRoutes): a Checker holds the routes the
// adapters give and the HTTP rules in force, and logs the rules no route
// matches, in one record per check, each rule once per rule set. It runs
// no goroutine: it checks on the caller's, at Check and at SetRules once
// Check was called.
package routecheck
