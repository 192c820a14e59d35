// Package exampletest is the test the net/http, gin and echo examples
// share: it runs an example's server on 127.0.0.1:0 and exercises every
// route with a real client, and rewrites its rules file while it serves.
// Redis gives the distributed example's tests the Redis at
// SLUICE_REDIS_ADDR (.ci/test starts one), and DeadRedis one that is down.
package exampletest
