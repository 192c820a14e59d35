package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
)

// Fake is a Clock.
var _ clock.Clock = (*clock.Fake)(nil)

// testCtx returns a context that ends the test's waits if the code under test
// never wakes up, instead of hanging until the test binary times out.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// sleep runs f.Sleep(ctx, d) in a goroutine and returns the channel its
// result arrives on, after the fake clock has registered the sleeper.
func sleep(t *testing.T, ctx context.Context, f *clock.Fake, d time.Duration) <-chan error {
	t.Helper()
	before := sleepers(f)
	done := make(chan error, 1)
	go func() { done <- f.Sleep(ctx, d) }()
	require.NoError(t, f.WaitForSleepers(testCtx(t), before+1))
	return done
}

// sleepers returns the number of goroutines blocked in f's Sleep: the
// largest n for which WaitForSleepers, given a context already done,
// returns nil.
func sleepers(f *clock.Fake) int {
	now, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	for f.WaitForSleepers(now, n+1) == nil {
		n++
	}
	return n
}

// woken reports whether the sleeper behind done has returned, and with what.
func woken(done <-chan error) (bool, error) {
	select {
	case err := <-done:
		return true, err
	default:
		return false, nil
	}
}

func TestFakeNowAdvanceSet(t *testing.T) {
	f := clock.NewFake(5 * time.Second)
	assert.Equal(t, 5*time.Second, f.Now())
	steps := []struct {
		name string
		move func()
		want time.Duration
	}{
		{"advance", func() { f.Advance(1500 * time.Millisecond) }, 6500 * time.Millisecond},
		{"advance zero", func() { f.Advance(0) }, 6500 * time.Millisecond},
		{"advance backwards", func() { f.Advance(-2 * time.Second) }, 4500 * time.Millisecond},
		{"set later", func() { f.Set(time.Minute) }, time.Minute},
		{"set earlier", func() { f.Set(-time.Second) }, -time.Second},
	}
	for _, s := range steps {
		s.move()
		assert.Equal(t, s.want, f.Now(), s.name)
	}
}

func TestFakeSleepWakesAtDeadline(t *testing.T) {
	// Sleepers registered at 0 with different durations; each row moves the
	// clock and lists which have woken by then.
	f := clock.NewFake(0)
	durs := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, time.Second}
	dones := make([]<-chan error, len(durs))
	for i, d := range durs {
		dones[i] = sleep(t, context.Background(), f, d)
	}
	steps := []struct {
		name  string
		move  func()
		awake []bool // cumulative: sleepers that have returned by now
	}{
		{"just before the first deadline", func() { f.Advance(99 * time.Millisecond) }, []bool{false, false, false}},
		{"first deadline reached exactly", func() { f.Advance(time.Millisecond) }, []bool{true, false, false}},
		{"set backwards wakes nobody", func() { f.Set(-time.Hour) }, []bool{true, false, false}},
		{"set past the second deadline", func() { f.Set(500 * time.Millisecond) }, []bool{true, true, false}},
		{"advance past the last", func() { f.Advance(time.Hour) }, []bool{true, true, true}},
	}
	returned := make([]bool, len(durs))
	for _, s := range steps {
		s.move()
		for i, want := range s.awake {
			if !returned[i] && want {
				// The wake-up is a closed channel: the result is there, or
				// about to be, without any further clock movement.
				select {
				case err := <-dones[i]:
					require.NoError(t, err, "%s: sleeper %d", s.name, i)
				case <-testCtx(t).Done():
					t.Fatalf("%s: sleeper %d did not wake", s.name, i)
				}
				returned[i] = true
			}
			if !want {
				ok, _ := woken(dones[i])
				assert.False(t, ok, "%s: sleeper %d woke early", s.name, i)
			}
		}
		assert.Equal(t, countFalse(s.awake), sleepers(f), s.name)
	}
}

func countFalse(bs []bool) int {
	n := 0
	for _, b := range bs {
		if !b {
			n++
		}
	}
	return n
}

func TestFakeSleepNonPositive(t *testing.T) {
	f := clock.NewFake(0)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, d := range []time.Duration{0, -time.Second} {
		assert.NoError(t, f.Sleep(context.Background(), d), "d=%s", d)
		assert.ErrorIs(t, f.Sleep(canceled, d), context.Canceled, "d=%s with a canceled ctx", d)
	}
	assert.Zero(t, sleepers(f))
}

func TestFakeSleepCanceled(t *testing.T) {
	f := clock.NewFake(0)
	ctx, cancel := context.WithCancel(context.Background())
	done := sleep(t, ctx, f, time.Second)
	other := sleep(t, context.Background(), f, time.Second)

	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-testCtx(t).Done():
		t.Fatal("Sleep did not return on cancellation")
	}
	// The canceled sleeper is gone; the other one still waits for the clock.
	require.NoError(t, f.WaitForSleepers(testCtx(t), 1))
	assert.Equal(t, 1, sleepers(f))
	ok, _ := woken(other)
	assert.False(t, ok)

	f.Advance(time.Second)
	require.NoError(t, <-other)
	assert.Zero(t, sleepers(f))

	// A context already done when Sleep starts: it returns at once.
	assert.ErrorIs(t, f.Sleep(ctx, time.Hour), context.Canceled)
	assert.Zero(t, sleepers(f))
}

func TestFakeWaitForSleepers(t *testing.T) {
	f := clock.NewFake(0)
	// Already satisfied.
	require.NoError(t, f.WaitForSleepers(context.Background(), 0))

	// Not satisfied: returns the context's error when it ends.
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- f.WaitForSleepers(ctx, 1) }()
	cancel()
	require.ErrorIs(t, <-res, context.Canceled)

	// Satisfied by sleepers that arrive after the wait began.
	res = make(chan error, 1)
	go func() { res <- f.WaitForSleepers(testCtx(t), 3) }()
	var dones []<-chan error
	for range 3 {
		dones = append(dones, sleep(t, context.Background(), f, time.Minute))
	}
	require.NoError(t, <-res)
	// A context already done: no wait, whether 3 are blocked now.
	now, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	assert.NoError(t, f.WaitForSleepers(now, 3))
	assert.ErrorIs(t, f.WaitForSleepers(now, 4), context.Canceled)
	f.Advance(time.Minute)
	for _, d := range dones {
		require.NoError(t, <-d)
	}
}
