// Package peerbench measures sluice next to other Go rate limiters in one
// process, so that their ratios are measured on the same machine at the
// same time. It is a module of its own: the peers are no dependency of
// sluice. Its benchmarks report the process's CPU time per operation
// (cpu-ns/op) next to ns/op; one command runs them, with the gRPC
// interceptor's (adapters/grpc/internal/peerbench), in alternating rounds
// and writes their table into README.md:
//
//	go -C core/internal/peerbench run ./cmd/table
package peerbench
