package core

import (
	"context"
	"errors"
)

var errPanicked = errors.New("sluice: the guarded function panicked") // Do's outcome of a panic

// Do runs fn under the rules of resource: it enters resource with ctx and
// opts, and returns Enter's error without calling fn when there is one;
// otherwise it calls fn with ctx, exits with fn's error, so that failures
// count for breakers, and returns that error. A panic of fn counts as a
// failure too, and goes on.
//
//	err := guard.Do(ctx, "inventory", func(ctx context.Context) error {
//		return inventory.Reserve(ctx, order)
//	})
func (g *Guard) Do(ctx context.Context, resource string, fn func(context.Context) error, opts ...EnterOption) error {
	if fn == nil {
		return errors.New("sluice: Do: fn is nil")
	}
	e, err := g.Enter(ctx, resource, opts...)
	if err != nil {
		return err
	}
	defer e.Exit(errPanicked) // a no-op once Exit below ran
	err = fn(ctx)
	e.Exit(err)
	return err
}
