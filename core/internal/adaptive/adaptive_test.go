package adaptive

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = int64(time.Millisecond)

// drive runs intervals of 100ms in which inFlight requests are taken and
// each ends after rts[i], and returns the limit after each interval.
func drive(k *Controller, start int64, rts []int64, inFlight func(limit int64) int64) ([]int64, int64) {
	now := start
	var limits []int64
	for _, rt := range rts {
		n := inFlight(k.Limit())
		taken := int64(0)
		for range n {
			if k.Acquire(1) {
				taken++
			}
		}
		for i := range taken {
			k.Done(now+i, rt, 1)
		}
		now += 100 * ms
		limits = append(limits, k.Limit())
	}
	return limits, now
}

func full(limit int64) int64 { return limit }

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestLimitRisesWhileLatencyStaysAtItsMinimum(t *testing.T) {
	k := New(Config{MaxLimit: 100}, nil)
	limits, _ := drive(k, 0, repeat(10*ms, 60), full)
	assert.Equal(t, int64(DefaultInitialLimit), limits[0], "the first interval only starts")
	for i := 2; i < DefaultMinRTIntervals; i++ { // up to the first probe
		assert.GreaterOrEqual(t, limits[i], limits[i-1], "interval %d", i)
	}
	assert.Equal(t, int64(100), limits[len(limits)-1], "up to maxLimit, never beyond")
}

func TestLimitDoesNotRiseWhenRequestsDoNotUseIt(t *testing.T) {
	k := New(Config{}, nil)
	limits, _ := drive(k, 0, repeat(10*ms, 30), func(int64) int64 { return 3 })
	for _, l := range limits {
		assert.Equal(t, int64(DefaultInitialLimit), l)
	}
}

func TestLimitFallsWhenLatencyGrows(t *testing.T) {
	k := New(Config{MinLimit: 2, MaxLimit: 100}, nil)
	limits, now := drive(k, 0, repeat(10*ms, 40), full)
	high := limits[len(limits)-1]
	require.Equal(t, int64(100), high)
	// Latency grows in proportion to the requests in flight beyond 20.
	var got []int64
	for range 60 {
		rt := 10 * ms * max(k.Limit(), 20) / 20
		ls, n := drive(k, now, []int64{rt}, full)
		now = n
		got = append(got, ls[0])
	}
	final := got[len(got)-1]
	assert.GreaterOrEqual(t, final, int64(20), "not below where latency is at its minimum: %v", got)
	assert.LessOrEqual(t, slicesMax(got[20:]), int64(45), "near where latency is tolerance x its minimum, "+
		"and queueing does not raise the minimum RT: %v", got)
	assert.Contains(t, got, int64(2), "probed at minLimit: %v", got)
}

func TestLimitStaysWithinBounds(t *testing.T) {
	tests := []struct {
		name     string
		min, max int64
		rts      []int64
	}{
		{"fast", 5, 30, repeat(ms, 50)},
		{"slower and slower", 5, 30, func() []int64 {
			out := make([]int64, 50)
			for i := range out {
				out[i] = int64(i+1) * 10 * ms
			}
			return out
		}()},
		{"initial above max", 1, 3, repeat(ms, 5)},
		{"initial below min", 50, 60, repeat(ms, 5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := New(Config{MinLimit: tt.min, MaxLimit: tt.max}, nil)
			assert.GreaterOrEqual(t, k.Limit(), tt.min)
			assert.LessOrEqual(t, k.Limit(), tt.max)
			limits, _ := drive(k, 0, tt.rts, full)
			for i, l := range limits {
				assert.GreaterOrEqual(t, l, tt.min, "interval %d", i)
				assert.LessOrEqual(t, l, tt.max, "interval %d", i)
			}
		})
	}
}

func TestSlowerServiceGetsANewBaseline(t *testing.T) {
	k := New(Config{MinLimit: 1, MaxLimit: 100, MinRTIntervals: 10}, nil)
	_, now := drive(k, 0, repeat(10*ms, 40), full)
	limits, _ := drive(k, now, repeat(30*ms, 60), full) // 3x slower, for good
	_, minRT := k.RT()
	assert.Equal(t, 30*time.Millisecond, minRT)
	assert.Equal(t, int64(100), limits[len(limits)-1], "recovered: %v", limits)
	assert.Less(t, slicesMin(limits), int64(100), "it shrank first: %v", limits)
}

func slicesMin(s []int64) int64 {
	m := s[0]
	for _, v := range s {
		m = min(m, v)
	}
	return m
}

func TestNewSharesTheStateOfPrev(t *testing.T) {
	k := New(Config{MaxLimit: 100}, nil)
	require.True(t, k.Acquire(3))
	k2 := New(Config{MinLimit: 1, MaxLimit: 10}, k)
	assert.Equal(t, int64(10), k2.Limit(), "brought within the new bounds")
	assert.Equal(t, int64(3), k2.InFlight())
	k.Done(0, ms, 3) // a request entered by k ends
	assert.Equal(t, int64(0), k2.InFlight())
}

func TestAcquireRespectsTheLimit(t *testing.T) {
	k := New(Config{MinLimit: 2, MaxLimit: 2}, nil)
	assert.True(t, k.Acquire(1))
	assert.True(t, k.Acquire(1))
	assert.False(t, k.Acquire(1))
	k.Release(1)
	assert.True(t, k.Acquire(1))
	assert.Equal(t, int64(2), k.InFlight())
}

func slicesMax(s []int64) int64 {
	m := s[0]
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

func TestConfigDefaults(t *testing.T) {
	for _, tc := range []struct{ in, want Config }{
		{Config{}, Config{MinLimit: 4, MaxLimit: 1000}},
		{Config{MaxLimit: 2}, Config{MinLimit: 2, MaxLimit: 2}},
		{Config{MinLimit: 2000}, Config{MinLimit: 2000, MaxLimit: 2000}},
	} {
		got := tc.in.WithDefaults()
		assert.Equal(t, tc.want, Config{MinLimit: got.MinLimit, MaxLimit: got.MaxLimit}, "%+v", tc.in)
	}
}
