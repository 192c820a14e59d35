package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore"
)

// A limit of 100 requests a second shared by every instance that uses the
// same Redis. The example needs a Redis on localhost:6379, so it is not run
// by go test.
func Example() {
	client := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"localhost:6379"}})
	defer client.Close()
	s, err := redisstore.New(client, redisstore.WithPrefix("myapp"), redisstore.WithTimeout(20*time.Millisecond))
	if err != nil {
		panic(err)
	}
	defer s.Close()

	lim := store.Limit{Algorithm: store.SlidingCounter, Limit: 100, Window: time.Second}
	d, err := s.Take(context.Background(), "api", lim, 1)
	switch {
	case errors.Is(err, store.ErrUnavailable):
		fmt.Println("Redis is unavailable: apply the failure policy")
	case err != nil:
		fmt.Println("invalid limit:", err)
	case d.OK:
		fmt.Println("admitted;", d.Remaining, "left")
	default:
		fmt.Println("rejected; retry after", d.RetryAfter)
	}
}

// Approximate limits are decided in the process and synchronized with
// Redis every sync period; Err tells whether the last sync worked.
func Example_approximate() {
	client := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"localhost:6379"}})
	defer client.Close()
	s, err := redisstore.New(client, redisstore.WithSyncPeriod(50*time.Millisecond))
	if err != nil {
		panic(err)
	}
	defer s.Close()

	lim := store.Limit{Algorithm: store.TokenBucket, Limit: 5000, Window: time.Second, Burst: 500, Mode: store.Approximate}
	for range 3 {
		d, err := s.Take(context.Background(), "search", lim, 1)
		fmt.Println(d.OK, err)
	}
	if err := s.Err(); err != nil {
		fmt.Println("deciding on local counts only:", err)
	}
}

// A busy service may tune batching and the approximate mode's memory; the
// defaults suit most.
func ExampleNew_tuning() {
	client := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"localhost:6379"}})
	defer client.Close()
	s, err := redisstore.New(client,
		redisstore.WithBatchSize(256),            // decisions per round trip (default 128)
		redisstore.WithMaxKeys(1_000_000),        // keys approximate mode tracks in the process (default 100000)
		redisstore.WithIdleExpiry(5*time.Second), // how long a key outlives its state (default 1s)
	)
	if err != nil {
		panic(err)
	}
	defer s.Close()
}
