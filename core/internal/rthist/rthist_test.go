package rthist

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBound(t *testing.T) {
	assert.Equal(t, math.Ldexp(1, -17), Bound(0))
	assert.Equal(t, 1.0, Bound(17))
	assert.Equal(t, 32.0, Bound(22))
	assert.True(t, math.IsInf(Bound(23), 1))
}
