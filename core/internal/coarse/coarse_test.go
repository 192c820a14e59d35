package coarse_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/coarse"
	"github.com/sluicekit/sluice/core/internal/sysclock"
)

func TestNewCoarseRejectsBadArguments(t *testing.T) {
	_, err := coarse.New(nil, time.Millisecond)
	require.ErrorContains(t, err, "source clock is nil")
	_, err = coarse.New(clock.NewFake(0), 0)
	require.ErrorContains(t, err, "resolution must be > 0, got 0s")
}

// tick advances f by d and waits until the coarse goroutine has stored the
// new reading and sleeps again.
func tick(t *testing.T, f *clock.Fake, d time.Duration) {
	t.Helper()
	require.NoError(t, f.WaitForSleepers(testCtx(t), 1))
	f.Advance(d)
	require.NoError(t, f.WaitForSleepers(testCtx(t), 1))
}

func TestCoarseLagsByAtMostOneTick(t *testing.T) {
	f := clock.NewFake(5 * time.Second)
	c, err := coarse.New(f, time.Millisecond)
	require.NoError(t, err)
	defer c.Stop()

	assert.False(t, c.Running(), "starts parked")
	assert.Equal(t, 5*time.Second, c.Now(), "a parked clock reads the source")
	assert.True(t, c.Running(), "the first read starts it")
	require.NoError(t, f.WaitForSleepers(testCtx(t), 1))

	steps := []struct {
		advance time.Duration // moved on the source without a tick
		want    time.Duration
	}{
		{advance: 400 * time.Microsecond, want: 5 * time.Second},
		{advance: 500 * time.Microsecond, want: 5 * time.Second},
	}
	for _, s := range steps {
		f.Set(f.Now() + s.advance)
		assert.Equal(t, s.want, c.Now(), "no tick yet: the last reading")
	}
	// The goroutine's sleep started at 5s and ends at 5s+1ms.
	tick(t, f, 100*time.Microsecond)
	assert.Equal(t, 5*time.Second+time.Millisecond, c.Now())
	tick(t, f, time.Millisecond)
	assert.Equal(t, 5*time.Second+2*time.Millisecond, c.Now())
}

func TestCoarseParksWhenUnreadAndRestarts(t *testing.T) {
	f := clock.NewFake(0)
	c, err := coarse.New(f, time.Millisecond)
	require.NoError(t, err)
	defer c.Stop()

	c.Now()
	require.NoError(t, f.WaitForSleepers(testCtx(t), 1))
	// Ticks with a reading in between keep it running.
	for range 1500 {
		tick(t, f, time.Millisecond)
		c.Now()
	}
	require.True(t, c.Running())
	// The first tick clears the last reading; 1000 more without a reading
	// park it, and it never sleeps again.
	tick(t, f, time.Millisecond)
	for i := range 999 {
		tick(t, f, time.Millisecond)
		require.True(t, c.Running(), "tick %d", i)
	}
	f.Advance(time.Millisecond)
	require.Eventually(t, func() bool { return !c.Running() }, 10*time.Second, time.Millisecond)
	expired, cancelExpired := context.WithCancel(context.Background())
	cancelExpired()
	assert.Error(t, f.WaitForSleepers(expired, 1), "parked: no sleep")

	f.Advance(time.Hour)
	assert.Equal(t, time.Hour+2501*time.Millisecond, c.Now(), "a parked clock reads the source")
	assert.True(t, c.Running(), "and starts again")
	tick(t, f, time.Millisecond)
	assert.Equal(t, time.Hour+2502*time.Millisecond, c.Now())
}

func TestCoarseStop(t *testing.T) {
	f := clock.NewFake(0)
	c, err := coarse.New(f, time.Millisecond)
	require.NoError(t, err)
	c.Now()
	require.NoError(t, f.WaitForSleepers(testCtx(t), 1))
	c.Stop()
	c.Stop() // idempotent
	assert.False(t, c.Running())
	expired, cancelExpired := context.WithCancel(context.Background())
	cancelExpired()
	assert.Error(t, f.WaitForSleepers(expired, 1), "the goroutine has returned")
	f.Advance(3 * time.Millisecond)
	assert.Equal(t, 3*time.Millisecond, c.Now(), "a stopped clock reads the source")
	assert.False(t, c.Running(), "and does not start again")
}

// TestCoarseConcurrent reads, parks, restarts and stops the clock from many
// goroutines at once, for the race detector; readings never go past the
// source.
func TestCoarseConcurrent(t *testing.T) {
	sys := sysclock.New()
	c, err := coarse.New(sys, 10*time.Microsecond)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 2000 {
				got := c.Now()
				require.LessOrEqual(t, got, sys.Now())
			}
		})
	}
	wg.Wait()
	c.Stop()
	assert.False(t, c.Running())
}
