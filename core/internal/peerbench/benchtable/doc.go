// Package benchtable is what the benchmark-table commands of sluice's
// benchmark modules share: it builds a package's test binary, runs one
// benchmark of it as a process of its own and parses its figures, takes
// medians, describes the machine, and writes a table between the markers
// of a README. The commands are
//
//	go -C core/internal/peerbench run ./cmd/table
//	go -C core/store/redisstore/internal/peerbench run ./cmd/table
package benchtable
