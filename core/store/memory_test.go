package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		fc := clock.NewFake(time.Hour)
		m, err := store.NewMemory(fc, 0)
		require.NoError(t, err)
		return storetest.Harness{Store: m, Sleep: fc.Advance, Mode: store.Exact}
	})
}

func TestMemoryBounded(t *testing.T) {
	m, err := store.NewMemory(clock.NewFake(0), 10)
	require.NoError(t, err)
	lim := store.Limit{Algorithm: store.TokenBucket, Limit: 1, Window: time.Second}
	for i := range 1000 {
		_, err := m.Take(context.Background(), string(rune('a'+i%26))+time.Duration(i).String(), lim, 1)
		require.NoError(t, err)
	}
	assert.Equal(t, 10, store.Len(m))
}

func TestNewMemoryRejectsBadArguments(t *testing.T) {
	_, err := store.NewMemory(nil, 0)
	assert.ErrorContains(t, err, "clock is nil")
	_, err = store.NewMemory(clock.NewFake(0), -1)
	assert.ErrorContains(t, err, "maxKeys must be >= 0, got -1")
}
