// Package peerbench measures sluice next to other Go rate limiters in one
// process, so that their ratios are measured on the same machine at the
// same time. It is a module of its own: the peers are no dependency of
// sluice. It has benchmarks only:
//
//	go test -run '^$' -bench . -benchmem ./core/internal/peerbench
package peerbench
