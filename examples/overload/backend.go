package main

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// backend is a service of fixed capacity: workers requests at a time, each
// taking service (a sleep, so that the host's CPUs stay free for the load
// generator), the others waiting their turn in a queue, which a request
// leaves when its client gives up. A request being served is served to
// its end, as a real backend's would.
type backend struct {
	slots   chan struct{}
	service atomic.Int64 // time.Duration
}

func newBackend(workers int, service time.Duration) *backend {
	b := &backend{slots: make(chan struct{}, workers)}
	b.service.Store(int64(service))
	return b
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case b.slots <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	time.Sleep(time.Duration(b.service.Load()))
	<-b.slots
	_, _ = io.WriteString(w, "ok")
}
