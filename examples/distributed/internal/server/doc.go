// Package server is one instance of examples/distributed: a net/http server
// behind the sluice middleware whose limits are kept in Redis, so that they
// hold for every instance together. The example's command runs one
// instance; its load command runs several in one process.
package server
