// Package peerbench measures the Redis store's exact decisions next to
// go-redis/redis_rate's in one process, against one Redis (a redis-server
// the benchmarks start on loopback, as package redistest chooses), so that
// their ratios are measured on the same machine at the same time. It is a
// module of its own: the peer is no dependency of sluice. It has
// benchmarks only, and the command that writes their table into README.md:
//
//	go -C core/store/redisstore/internal/peerbench run ./cmd/table
package peerbench
