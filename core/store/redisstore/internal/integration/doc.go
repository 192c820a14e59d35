// Package integration holds tests that join modules of the repository a
// user would join, such as the Prometheus collector over a Guard whose rules
// are kept in a real Redis (package redistest's): a test-only module of its
// own, so that neither redisstore nor prometheus requires the other.
package integration
