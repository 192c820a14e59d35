package core

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/clock"
)

// syncBuffer is a bytes.Buffer safe for the reporter's goroutine and the
// test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSpace(s.b.String()), "\n")
}

func TestReporterLogIsRateLimited(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	var buf syncBuffer
	rp := newReporter(fc.Now, slog.New(slog.NewTextHandler(&buf, nil)), nil)
	// A flood: far more than the burst, at one instant.
	for range 100 {
		(&storeReport{name: "redis", err: errors.New("down")}).deliver(rp)
	}
	assert.Len(t, buf.lines(), logBurst)
	fc.Advance(time.Second / logRate) // one token back
	(&storeReport{name: "redis"}).deliver(rp)
	lines := buf.lines()
	require.Len(t, lines, logBurst+1)
	assert.Contains(t, lines[logBurst], "store works again")
	assert.Contains(t, lines[logBurst], "suppressed=80")
	// The clock stepping back refills nothing and breaks nothing.
	fc.Set(0)
	(&storeReport{name: "redis"}).deliver(rp)
	assert.Len(t, buf.lines(), logBurst+1)
}

func TestReporterDeliversInOrderAndStops(t *testing.T) {
	fc := clock.NewFake(0)
	var got []string
	var mu sync.Mutex
	listener := func(e BreakerEvent) {
		mu.Lock()
		got = append(got, e.Rule+":"+string(e.To))
		mu.Unlock()
	}
	rp := newReporter(fc.Now, slog.New(slog.DiscardHandler), []func(BreakerEvent){listener})
	for i := range 10 {
		rp.send(&breakerReport{BreakerEvent{Rule: string(rune('a' + i)), To: breaker.Closed}})
	}
	rp.stop() // delivers what was queued
	assert.Equal(t, []string{"a:closed", "b:closed", "c:closed", "d:closed", "e:closed", "f:closed", "g:closed", "h:closed", "i:closed", "j:closed"}, got)
	rp.send(&breakerReport{BreakerEvent{Rule: "late"}})
	rp.stop()
	assert.Len(t, got, 10)
	assert.Equal(t, int64(1), rp.dropped.Load())
}

func TestReporterNeverBlocksASender(t *testing.T) {
	release := make(chan struct{})
	rp := newReporter(clock.NewFake(0).Now, slog.New(slog.DiscardHandler), []func(BreakerEvent){func(BreakerEvent) { <-release }})
	done := make(chan struct{})
	go func() {
		for range reportQueue + 100 {
			rp.send(&breakerReport{BreakerEvent{}})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("send blocked on a listener that does not return")
	}
	// One report is with the listener, reportQueue are queued; the rest
	// were dropped.
	assert.GreaterOrEqual(t, rp.dropped.Load(), int64(99))
	close(release)
	rp.stop()
}

func TestBlockingRulesAreLoggedOncePerInterval(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	var buf syncBuffer
	g, err := New(WithClock(fc), WithLogger(slog.New(slog.NewTextHandler(&buf, nil))),
		WithRules(Rule{Name: "one", Resource: "r", Kind: KindFlow, Limit: 0}))
	require.NoError(t, err)
	for range 1000 {
		_, err := g.Enter(t.Context(), "r")
		require.Error(t, err)
	}
	fc.Advance(blockLogInterval)
	_, err = g.Enter(t.Context(), "r")
	require.Error(t, err)
	require.NoError(t, g.Close()) // delivers the queue
	lines := buf.lines()
	require.Len(t, lines, 2, "%q", lines)
	assert.Contains(t, lines[0], `msg="sluice: rule started blocking requests" rule=one`)
	assert.Contains(t, lines[1], `msg="sluice: rule blocked requests" rule=one resource=r blocked=1000 over=10s`)
}
