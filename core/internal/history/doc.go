// Package history keeps the history of a Guard (core.Guard.History): a
// Recorder samples the Guard's totals (its Snapshot) once a second on a
// goroutine it owns, from Start to Close, and keeps the counts of each
// second in fixed-size rings. The memory of a Ring is allocated once, by
// New, and does not grow however long it records: about 15 kB per resource
// and 12 kB per rule for 10 minutes, as
// `go test -run TestHistoryMemoryIsBounded -v ./core/` measures. A sample
// of 1000 resources and 10 rules takes about 2 ms and allocates 1.9 MB,
// once a second (`go test -run x -bench HistorySample ./core/`). Quantile
// gives the percentiles of response-time histograms.
package history
