// Package labels names resources as both exporters (core/prometheus,
// core/otel) report them: Prometheus refuses two series of one name, which
// names differing in invalid UTF-8 only would be (`go test ./core/otel/ -run
// AddUp` checks both exporters on them).
package labels
