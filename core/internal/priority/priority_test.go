package priority_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core/internal/priority"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]int{
		"critical": priority.Critical, "Critical": priority.Critical, "SHEDDABLE": priority.Sheddable,
		"sheddable": priority.Sheddable, "default": priority.Default, "": priority.Default, "high": priority.Default,
	} {
		assert.Equal(t, want, priority.Parse(in), "%q", in)
	}
}

func TestRateReserve(t *testing.T) {
	sec := int64(time.Second)
	tr := priority.New(nil)
	for i := range int64(50) { // 50 critical requests over the first second
		tr.Admitted(i*sec/50, priority.Critical, 1)
		tr.Done(priority.Critical, 1)
	}
	// In that second: critical passed 50, none the second before.
	assert.Equal(t, int64(10), tr.RateReserve(sec-1, priority.Default, 100), "headroom only")
	// A second later it passed 10: it keeps the 40 it may come back with.
	for i := range int64(10) {
		tr.Admitted(sec+i*sec/10, priority.Critical, 1)
	}
	assert.Equal(t, int64(40+10), tr.RateReserve(2*sec-1, priority.Default, 100))
	assert.Equal(t, int64(40+10), tr.RateReserve(2*sec-1, priority.Sheddable, 100), "default had none")
	assert.Zero(t, tr.RateReserve(2*sec-1, priority.Critical, 100))
	// Long after, nothing is kept.
	assert.Zero(t, tr.RateReserve(4*sec, priority.Default, 100), "none passed in the last two seconds")
}

func TestFraction(t *testing.T) {
	tr := priority.New(nil)
	assert.Equal(t, 1.0, tr.Fraction(0, priority.Sheddable))
	tr.Admitted(0, priority.Default, 1)
	assert.InDelta(t, 0.9, tr.Fraction(0, priority.Sheddable), 1e-9)
	tr.Admitted(0, priority.Critical, 1)
	assert.InDelta(t, 0.8, tr.Fraction(0, priority.Sheddable), 1e-9)
	assert.InDelta(t, 0.9, tr.Fraction(0, priority.Default), 1e-9)
	assert.Equal(t, 1.0, tr.Fraction(0, priority.Critical))
	tr.Done(priority.Critical, 1)
	tr.Done(priority.Default, 1)
	assert.Equal(t, 1.0, tr.Fraction(int64(2*time.Second), priority.Sheddable), "none in the last second")
}
