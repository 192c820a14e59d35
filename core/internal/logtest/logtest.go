// Package logtest is a slog.Handler for tests that check what was logged.
package logtest

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// Record is one record logged: its level, message and attributes (as
// text).
type Record struct {
	Level slog.Level
	Msg   string
	Attrs map[string]string
}

// Recorder is a slog.Handler that keeps every record it is given. It is
// safe for concurrent use; the zero Recorder is ready.
type Recorder struct {
	mu   sync.Mutex
	recs []Record
}

// Enabled reports true: every level is kept.
func (h *Recorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps r.
func (h *Recorder) Handle(_ context.Context, r slog.Record) error {
	rec := Record{Level: r.Level, Msg: r.Message, Attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = fmt.Sprint(a.Value.Any())
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, rec)
	return nil
}

// WithAttrs returns h: attributes given that way are not kept.
func (h *Recorder) WithAttrs([]slog.Attr) slog.Handler { return h }

// WithGroup returns h.
func (h *Recorder) WithGroup(string) slog.Handler { return h }

// Records returns a copy of the records kept so far.
func (h *Recorder) Records() []Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Record(nil), h.recs...)
}
