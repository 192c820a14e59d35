package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The traffic the demo drives.
const (
	steadyRate = 20 // GET /hello per second

	burstFirst   = 1250 * time.Millisecond // first burst, after start: once steady has a full window
	burstEvery   = 2 * time.Second
	burstHello   = 80 // GET /hello per burst,
	burstWorkers = 10 // sent this many at a time
	burstSlow    = 12 // GET /slow per burst, all at once
)

// user is a client that sends X-User-ID name, rate requests per second.
type user struct {
	name string
	rate int
}

// maxBody is the most of an answer the clients read.
const maxBody = 64 << 10

// pattern is one traffic pattern.
type pattern struct {
	name  string
	desc  string
	users []user // the users it sends as
	// drive sends the pattern's requests until ctx ends; start is when the
	// run started.
	drive func(ctx context.Context, d *driver, p *patternStat, start time.Time)
}

// demoPatterns returns the traffic patterns, all driven at once.
func demoPatterns() []*pattern {
	// mallory hammers; the others stay under their limits.
	hot := []user{{"mallory", 40}, {"vip", 25}, {"alice", 5}, {"bob", 5}}
	return []*pattern{
		{
			name:  "steady",
			desc:  fmt.Sprintf("GET /hello %d/s", steadyRate),
			drive: driveSteady,
		},
		{
			name: "bursty",
			desc: fmt.Sprintf("from %s, every %s: %d GET /hello (%d at a time) and %d GET /slow at once",
				burstFirst, burstEvery, burstHello, burstWorkers, burstSlow),
			drive: driveBursty,
		},
		{
			name: "hot-user",
			desc: fmt.Sprintf("GET /items/{id} with X-User-ID %s %d/s, %s %d/s, %s and %s %d/s",
				hot[0].name, hot[0].rate, hot[1].name, hot[1].rate,
				hot[2].name, hot[3].name, hot[2].rate),
			users: hot,
			drive: driveHotUser,
		},
	}
}

func driveSteady(ctx context.Context, d *driver, p *patternStat, _ time.Time) {
	t := d.st.target(routeHello, "")
	every(ctx, time.Second/steadyRate, func() { d.get(p, t, "/hello") })
}

func driveBursty(ctx context.Context, d *driver, p *patternStat, start time.Time) {
	hello := d.st.target(routeHello, "")
	slow := d.st.target(routeSlow, "")
	for k := 0; ; k++ {
		if !sleepUntil(ctx, start.Add(burstFirst+time.Duration(k)*burstEvery)) {
			return
		}
		var wg sync.WaitGroup
		for range burstSlow {
			wg.Go(func() { d.get(p, slow, "/slow") })
		}
		for range burstWorkers {
			wg.Go(func() {
				for range burstHello / burstWorkers {
					if ctx.Err() != nil {
						return
					}
					d.get(p, hello, "/hello")
				}
			})
		}
		wg.Wait()
	}
}

func driveHotUser(ctx context.Context, d *driver, p *patternStat, _ time.Time) {
	var wg sync.WaitGroup
	for _, u := range p.def.users {
		t := d.st.target(routeItems, u.name)
		wg.Go(func() {
			id := 0
			every(ctx, time.Second/time.Duration(u.rate), func() {
				id = id%9 + 1
				d.get(p, t, "/items/"+strconv.Itoa(id))
			})
		})
	}
	wg.Wait()
}

// every calls f at once and then every interval until ctx ends. A call that
// takes longer than interval delays the next rather than piling calls up.
func every(ctx context.Context, interval time.Duration, f func()) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		f()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// driver sends the clients' requests and counts their outcomes.
type driver struct {
	ctx    context.Context // the requests' context
	client *http.Client
	base   string
	st     *stats
}

func newDriver(ctx context.Context, base string, st *stats) *driver {
	return &driver{
		ctx: ctx,
		client: &http.Client{
			Transport: &http.Transport{
				MaxIdleConns:        64,
				MaxIdleConnsPerHost: 64,
				IdleConnTimeout:     30 * time.Second,
			},
			Timeout: 10 * time.Second,
		},
		base: base,
		st:   st,
	}
}

// close closes the clients' idle connections.
func (d *driver) close() { d.client.CloseIdleConnections() }

// get sends GET path to t for pattern p and counts the outcome.
func (d *driver) get(p *patternStat, t *target, path string) {
	req, err := http.NewRequestWithContext(d.ctx, http.MethodGet, d.base+path, nil)
	if err != nil {
		d.st.fail(p, err)
		return
	}
	if t.user != "" {
		req.Header.Set(userHeader, t.user)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		if d.ctx.Err() == nil { // not interrupted
			d.st.fail(p, err)
		}
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		if d.ctx.Err() == nil {
			d.st.fail(p, fmt.Errorf("GET %s: reading the answer: %w", path, err))
		}
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody)) // so the connection is reused
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		d.st.pass(p, t)
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		rule := blockedBy(resp.Header, body)
		if rule == "" {
			d.st.fail(p, fmt.Errorf("GET %s: %s naming no rule", path, resp.Status))
			return
		}
		d.st.block(p, t, rule)
	default:
		d.st.fail(p, fmt.Errorf("GET %s: unexpected %s", path, resp.Status))
	}
}

// blockedBy returns the name of the rule that blocked a request: the rule
// member of the problem body, or else the name of the first RateLimit item.
func blockedBy(h http.Header, body []byte) string {
	var problem struct {
		Rule string `json:"rule"`
	}
	if json.Unmarshal(body, &problem) == nil && problem.Rule != "" {
		return problem.Rule
	}
	return rateLimitItem(h.Get("RateLimit"))
}

// rateLimitItem returns the name of the first item of a RateLimit field
// value, such as "hello-rate" in `"hello-rate";r=0;t=1`, or "".
func rateLimitItem(v string) string {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, `"`) {
		name, _, _ := strings.Cut(v, ";")
		name, _, _ = strings.Cut(name, ",")
		return strings.TrimSpace(name)
	}
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			i++
			if i < len(v) {
				b.WriteByte(v[i])
			}
		case '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return "" // unterminated
}
