// Package peerbench measures the gRPC unary server interceptor next to
// go-grpc-middleware's ratelimit interceptor over golang.org/x/time/rate in
// one process, so that their ratio is measured on the same machine at the
// same time. It is a module of its own: the peers are no dependency of
// sluice. Each call carries the incoming metadata of a typical client
// (eight headers). It has benchmarks only (core/internal/peerbench's
// table command runs them):
//
//	go -C adapters/grpc/internal/peerbench test -run '^$' -bench . -benchmem .
package peerbench
