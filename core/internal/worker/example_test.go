package worker_test

import (
	"context"
	"fmt"

	"github.com/sluicekit/sluice/core/internal/worker"
)

func ExampleWorker() {
	var w worker.Worker
	done := make(chan string, 2)
	w.Go(func(ctx context.Context) {
		<-ctx.Done()
		done <- "first ended"
	})
	w.Restart(func(ctx context.Context) {
		<-ctx.Done()
		done <- "second ended"
	})
	w.Close() // ends the second, waits for both
	fmt.Println(len(done))
	// Output: 2
}
