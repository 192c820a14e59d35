package store_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/ratemath"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/storetest"
)

// tinyStore is a Store as one is written outside this module, from
// exported names only: its buckets are store.Bucket, its sliding counters
// ratemath's arithmetic, and each admitted sliding decision keeps its
// window's index in Mark for Undo.
type tinyStore struct {
	clock clock.Clock
	mu    sync.Mutex
	keys  map[string]*tinyKey
}

// tinyKey is the state of one key: a bucket's TAT, or a sliding counter's
// window index with the counts of that window and the one before.
type tinyKey struct {
	lim            store.Limit
	bucket         *store.Bucket
	tat            atomic.Int64
	idx, prev, cur int64
}

func (s *tinyStore) key(key string, lim store.Limit) (*tinyKey, error) {
	if k, ok := s.keys[key]; ok && k.lim == lim {
		return k, nil
	}
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	k := &tinyKey{lim: lim}
	if lim.Algorithm != store.SlidingCounter {
		b, err := store.NewBucket(lim)
		if err != nil {
			return nil, err
		}
		k.bucket = b
	}
	s.keys[key] = k
	return k, nil
}

func (s *tinyStore) Take(ctx context.Context, key string, lim store.Limit, n int64) (store.Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, err := s.key(key, lim)
	if err != nil {
		return store.Decision{}, err
	}
	now := int64(s.clock.Now())
	if k.bucket != nil {
		return k.bucket.Take(&k.tat, now, n), nil
	}
	w := int64(lim.Window)
	if idx := now / w; idx != k.idx {
		if idx == k.idx+1 {
			k.prev = k.cur
		} else {
			k.prev = 0
		}
		k.idx, k.cur = idx, 0
	}
	el := now - k.idx*w
	est := ratemath.SlidingEstimate(k.prev, k.cur+n, el, w)
	if n <= lim.Limit && est <= float64(lim.Limit) {
		k.cur += n
		d := store.Decision{OK: true, Limit: lim.Limit, Remaining: int64(float64(lim.Limit) - est), Mark: [2]int64{k.idx}}
		if d.Remaining == 0 { // when a next request would pass
			d.Next = time.Duration(ratemath.SlidingWait(k.prev, k.cur, el, 1, lim.Limit, w))
		}
		return d, nil
	}
	retry := time.Duration(max(ratemath.SlidingWait(k.prev, k.cur, el, n, lim.Limit, w), 1))
	left := max(int64(float64(lim.Limit)-ratemath.SlidingEstimate(k.prev, k.cur, el, w)), 0)
	return store.Decision{Limit: lim.Limit, Remaining: left, RetryAfter: retry}, nil
}

func (s *tinyStore) Undo(ctx context.Context, key string, lim store.Limit, d store.Decision, n int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[key]
	switch {
	case !ok || !d.OK:
	case k.bucket != nil:
		k.bucket.Undo(&k.tat, d, n)
	case d.Mark[0] == k.idx: // a request of an earlier window counts no more
		k.cur -= n
	}
	return nil
}

func (s *tinyStore) Close() error { return nil }

// TestStoreFromExportedNames: a Store written from this module's exported
// names passes the suite every Store passes.
func TestStoreFromExportedNames(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		fc := clock.NewFake(time.Hour)
		return storetest.Harness{Store: &tinyStore{clock: fc, keys: map[string]*tinyKey{}}, Sleep: fc.Advance, Mode: store.Exact}
	})
}

// A Store of one's own, given to a Guard: a rule names it with its Store
// field.
func ExampleStore() {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithStore("tiny", &tinyStore{clock: fc, keys: map[string]*tinyKey{}}),
		core.WithRules(core.Rule{Name: "api", Resource: "api", Kind: core.KindFlow, Limit: 2, Window: time.Minute, Store: "tiny"}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	for range 3 {
		e, err := g.Enter(context.Background(), "api")
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println("admitted")
		e.Exit(nil)
	}
	// Output:
	// admitted
	// admitted
	// sluice: api blocked by flow rule "api": limit 2 per 1m0s, retry after 1m30s
}

// ExampleBucket: a leaky bucket of 10 a second whose requests may wait
// 300ms paces them 100ms apart.
func ExampleBucket() {
	b, err := store.NewBucket(store.Limit{Algorithm: store.LeakyBucket, Limit: 10, Window: time.Second, MaxWait: 300 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	var tat atomic.Int64
	for range 5 {
		d := b.Take(&tat, 0, 1)
		fmt.Println(d.OK, d.Wait)
	}
	// Output:
	// true 0s
	// true 100ms
	// true 200ms
	// true 300ms
	// false 0s
}
