package loadtest

import "container/heap"

// Events is the event queue of a discrete-event simulation: Pop returns
// the event of the earliest time, those of one time in the order they were
// pushed, so that a run is the same for the same seed.
type Events[T any] struct {
	h   events[T]
	seq int
}

// Push adds v at time at.
func (q *Events[T]) Push(at int64, v T) {
	q.seq++
	heap.Push(&q.h, event[T]{at: at, seq: q.seq, v: v})
}

// Pop removes and returns the next event.
func (q *Events[T]) Pop() T { return heap.Pop(&q.h).(event[T]).v }

// Len is the number of events queued.
func (q *Events[T]) Len() int { return len(q.h) }

type event[T any] struct {
	at  int64
	seq int
	v   T
}

type events[T any] []event[T]

func (h events[T]) Len() int { return len(h) }
func (h events[T]) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h events[T]) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *events[T]) Push(x any)   { *h = append(*h, x.(event[T])) }
func (h *events[T]) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
