// Package topk counts the values added most to a stream in fixed memory
// (core.WithTopBlockedValues: the values of a hotspot rule's param it
// blocked most). A Sketch of k counters holds at most k values of at most
// MaxValueLen bytes each however many values it is given; every value
// added more than a 1/k share of all is counted, no count is below the
// true one, and none is more than its Err above it, as
// `go test -run TestSketch ./core/internal/topk/` checks with a flood of
// 20000 values once each among three heavy ones, added concurrently.
// Merge adds up the counters of several Sketches (one per CPU stripe).
package topk
