package worker_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/sysclock"
	"github.com/sluicekit/sluice/core/internal/testmain"
	"github.com/sluicekit/sluice/core/internal/worker"
)

func TestMain(m *testing.M) { testmain.Run(m, nil) }

// blockUntilDone is a goroutine body that counts its starts and ends and
// returns when its context ends.
type blockUntilDone struct{ started, ended atomic.Int32 }

func (b *blockUntilDone) run(ctx context.Context) {
	b.started.Add(1)
	<-ctx.Done()
	b.ended.Add(1)
}

func TestGoStartsOneUntilStop(t *testing.T) {
	var w worker.Worker
	var b blockUntilDone
	assert.True(t, w.Go(b.run))
	assert.False(t, w.Go(b.run), "one at a time")
	w.Stop()
	assert.Equal(t, int32(1), b.started.Load())
	assert.Equal(t, int32(1), b.ended.Load(), "Stop waits for it")
	assert.True(t, w.Go(b.run), "startable again after Stop")
	w.Close()
	assert.Equal(t, int32(2), b.ended.Load())
}

func TestRestartEndsThePrevious(t *testing.T) {
	var w worker.Worker
	var b blockUntilDone
	w.Restart(b.run)
	w.Restart(b.run)
	w.Restart(b.run)
	w.Close()
	assert.Equal(t, int32(3), b.started.Load())
	assert.Equal(t, int32(3), b.ended.Load())
}

func TestClosedStartsNothing(t *testing.T) {
	var w worker.Worker
	w.Close()
	w.Close() // idempotent
	run := func(context.Context) { t.Error("started after Close") }
	assert.False(t, w.Go(run))
	w.Restart(run)
	w.Wait()
}

func TestSleepOnAFakeClock(t *testing.T) {
	fc := clock.NewFake(0)
	// A fake clock's sleep is at most Poll on a timer, never a sleeper of
	// the fake clock, which would never wake without a test's Advance.
	assert.True(t, worker.Sleep(context.Background(), fc, time.Hour))
	expired, cancelExpired := context.WithCancel(context.Background())
	cancelExpired()
	assert.Error(t, fc.WaitForSleepers(expired, 1), "no sleeper on the fake clock")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, worker.Sleep(ctx, sysclock.New(), time.Hour), "a cancelled sleep returns false")
}
