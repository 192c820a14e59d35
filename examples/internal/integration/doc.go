// Package integration holds tests that join modules of the repository a
// user would join, such as the Prometheus collector over a Guard whose rules
// are kept in a real Redis: here, so that neither module requires the other.
package integration
