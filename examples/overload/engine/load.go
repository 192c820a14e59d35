package engine

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// result is what became of a request.
type result uint8

const (
	ok       result = iota + 1 // 200 within the deadline
	rejected                   // 503: shed by the guard
	timedOut                   // no answer within the deadline
	failed                     // anything else
)

// outcome is one request's.
type outcome struct {
	at      time.Duration // when it was due, since the load started
	latency time.Duration
	result  result
}

// stream is a flow of requests at a fixed rate, each with Header.
type stream struct {
	Rate   float64 // per second
	Header http.Header
}

// drive sends each stream's requests to url for d, or until ctx ends,
// open loop: each at its time whether the earlier ones ended or not, each
// with deadline. It returns the outcomes of each stream's requests sent,
// once all ended.
func drive(ctx context.Context, client *http.Client, url string, streams []stream, d, deadline time.Duration) [][]outcome {
	start := time.Now()
	outs := make([][]outcome, len(streams))
	var wg sync.WaitGroup
	for i, s := range streams {
		wg.Go(func() {
			o := make([]outcome, int(s.Rate*d.Seconds()))
			sent := len(o)
			var reqs sync.WaitGroup
			defer func() {
				reqs.Wait()
				outs[i] = o[:sent]
			}()
			for j := range o {
				due := time.Duration(float64(j) * float64(time.Second) / s.Rate)
				if wait := due - time.Since(start); wait > 0 {
					select {
					case <-time.After(wait):
					case <-ctx.Done():
						sent = j
						return
					}
				}
				reqs.Go(func() { o[j] = send(client, url, s.Header, start, due, deadline) })
			}
		})
	}
	wg.Wait()
	return outs
}

// send sends one request, due at start+due, and tells what became of it.
func send(client *http.Client, url string, header http.Header, start time.Time, due, deadline time.Duration) outcome {
	at := start.Add(due)
	ctx, cancel := context.WithDeadline(context.Background(), at.Add(deadline))
	defer cancel()
	o := outcome{at: due, result: failed}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return o
	}
	req.Header = header
	res, err := client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	o.latency = time.Since(at)
	switch {
	case ctx.Err() != nil:
		o.result, o.latency = timedOut, deadline
	case err != nil:
	case res.StatusCode == http.StatusOK:
		o.result = ok
	case res.StatusCode == http.StatusServiceUnavailable:
		o.result = rejected
	}
	return o
}

// summary sums up the outcomes of the requests due in a span of time.
type summary struct {
	n                  int
	offered, goodput   float64 // per second
	p50, p99           time.Duration
	rejected, timedOut float64 // shares of the requests
}

// summarize sums up the outcomes due in [from, to); the latency
// percentiles are those of the requests admitted (not rejected), a
// request that timed out counting as the deadline.
func summarize(outs []outcome, from, to time.Duration) summary {
	var s summary
	var good, shed, late int
	var lat []time.Duration
	for _, o := range outs {
		if o.at < from || o.at >= to {
			continue
		}
		s.n++
		switch o.result {
		case ok:
			good++
		case rejected:
			shed++
			continue
		case timedOut:
			late++
		}
		lat = append(lat, o.latency)
	}
	secs := (to - from).Seconds()
	s.offered, s.goodput = float64(s.n)/secs, float64(good)/secs
	if s.n > 0 {
		s.rejected, s.timedOut = float64(shed)/float64(s.n), float64(late)/float64(s.n)
	}
	s.p50, s.p99 = percentile(lat, 0.5), percentile(lat, 0.99)
	return s
}

// percentile returns the q-quantile of ds (nearest rank), sorting ds; 0
// when ds is empty.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(int(q*float64(len(ds))), len(ds)-1)]
}
