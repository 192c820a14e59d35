package browsertest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/dashboard"
)

// findChromium returns the path of a Chromium or Chrome binary, or "".
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

// browser is a headless Chromium with one page, driven by chromedp.
type browser struct {
	ctx context.Context // the page's chromedp context

	mu       sync.Mutex
	requests []string          // URLs the page requested
	problems []string          // exceptions, console errors, failed loads
	csp      map[string]string // the Content-Security-Policy of each response, by URL
}

// output keeps the last lines Chromium wrote, for a failure message.
type output struct {
	mu   sync.Mutex
	tail []string
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for line := range strings.Lines(string(p)) {
		o.tail = append(o.tail[max(0, len(o.tail)-19):], strings.TrimSuffix(line, "\n"))
	}
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.tail, "\n")
}

// startBrowser starts headless Chromium with one page (none loaded yet),
// and stops it, with every process it started, when the test ends.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	bin := findChromium()
	if bin == "" {
		if os.Getenv("SLUICE_REQUIRE_BROWSER") == "1" {
			t.Fatal("no chromium, chromium-browser or google-chrome on PATH, and SLUICE_REQUIRE_BROWSER=1 (Debian: apt-get install chromium)")
		}
		t.Skip("no chromium, chromium-browser or google-chrome on PATH: skipping the browser test (Debian: apt-get install chromium; SLUICE_REQUIRE_BROWSER=1 fails instead)")
	}
	// Its profile, and its crash handler's database, which Chromium keeps
	// in the user's config directory, go to a directory of this test: no
	// file outside it, and every process of this browser names it.
	dir := t.TempDir()
	var out output
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Env("HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache")),
		chromedp.CombinedOutput(&out),
	}
	for _, flag := range []string{"disable-quic", "disable-background-networking", "disable-component-update", "disable-sync",
		"disable-extensions", "disable-default-apps", "disable-crash-reporter", "disable-breakpad", "disable-dev-shm-usage",
		"mute-audio", "hide-scrollbars"} {
		opts = append(opts, chromedp.Flag(flag, true))
	}
	allocCtx, stopAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{csp: map[string]string{}}
	ctx, stopPage := chromedp.NewContext(allocCtx, chromedp.WithListener(b.event))
	b.ctx = ctx
	t.Cleanup(func() { b.stop(t, stopPage, stopAlloc, dir) })

	// The first action starts the browser, and the page lives as long as
	// the context it gets: this one, cancelled should the start hang.
	hung := time.AfterFunc(60*time.Second, stopPage)
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900))
	if !hung.Stop() {
		t.Fatalf("chromium did not start within 60s; its output ends:\n%s", out.String())
	}
	require.NoError(t, err, "starting chromium; its output ends:\n%s", out.String())
	return b
}

// stop closes the browser, kills what is left of it and checks that no
// process naming dir, its crash handlers too (they leave its process
// group), survives.
func (b *browser) stop(t *testing.T, stopPage, stopAlloc context.CancelFunc, dir string) {
	// Politely first (Browser.close): Chromium then stops its helpers
	// itself. Then the allocator kills what is left and waits for it.
	_ = chromedp.Cancel(b.ctx)
	stopPage()
	stopAlloc()
	var left []int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left = processesNaming(dir)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if len(left) > 0 {
		t.Errorf("chromium processes left running: %v", left)
	}
}

// processesNaming returns the live processes whose command line names dir.
func processesNaming(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(dir)) { // a zombie's is empty
			pids = append(pids, pid)
		}
	}
	return pids
}

// event records the page's requests, its responses' policies, and
// anything that went wrong in it (errors: a warning may be a new
// Chromium's deprecation notice). chromedp calls it for every event of the
// page, on the goroutine that reads them.
func (b *browser) event(ev any) {
	detail := func(v any) string {
		j, _ := json.Marshal(v)
		return string(j)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, ev.Request.URL)
	case *network.EventResponseReceived:
		if csp, ok := ev.Response.Headers["Content-Security-Policy"].(string); ok {
			b.csp[ev.Response.URL] = csp
		}
	case *network.EventLoadingFailed:
		if !ev.Canceled {
			b.problems = append(b.problems, "loading failed: "+detail(ev))
		}
	case *runtime.EventExceptionThrown:
		b.problems = append(b.problems, "exception: "+detail(ev.ExceptionDetails))
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			b.problems = append(b.problems, "console: "+detail(ev))
		}
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			b.problems = append(b.problems, "log: "+detail(ev.Entry))
		}
	}
}

// run runs a on the page, within 60s, and returns its value; it fails the
// test, saying what it was doing, on an error.
func run[T any](t *testing.T, b *browser, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	require.NoError(t, err, "%s", what)
	return v
}

// eval evaluates a JavaScript expression in the page and returns its
// value, JSON-encoded ("null" for null and undefined).
func (b *browser) eval(t *testing.T, expr string) string {
	t.Helper()
	v := run(t, b, "evaluating "+expr, chromedp.Evaluate[[]byte](expr))
	if len(v) == 0 {
		return "null"
	}
	return string(v)
}

// text returns the text the page shows in the cell of field of the item
// whose data-ATTR is name (for a badge, its data-value), or "" when there
// is no such cell. name may hold any character.
func (b *browser) text(t *testing.T, attr, name, field string) string {
	t.Helper()
	args, _ := json.Marshal([]string{"data-" + attr, name, field})
	v := b.eval(t, fmt.Sprintf(`(function([attr, name, field]) {
		for (const e of document.querySelectorAll("[" + attr + "]")) {
			if (e.getAttribute(attr) === name && e.dataset.field === field) return e.dataset.value || e.textContent;
		}
		return "";
	})(%s)`, args))
	var s string
	require.NoError(t, json.Unmarshal([]byte(v), &s), "%s", v)
	return s
}

// number returns the number the page shows in the cell of field of the
// item named name, and false when it shows none (yet).
func (b *browser) number(t *testing.T, attr, name, field string) (int64, bool) {
	t.Helper()
	n, err := strconv.ParseInt(b.text(t, attr, name, field), 10, 64)
	return n, err == nil
}

// waitFor calls cond, in the test's goroutine, until it returns true, and
// fails the test with what cond last said when timeout passes first.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (%s)", what, timeout, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// hostileName is a resource name (rule names are restricted to a safe
// charset; resource names given to Enter are not) that would run script if
// the page wrote it as HTML.
const hostileName = `<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>`

// TestDashboardInBrowser serves the dashboard of a Guard under real HTTP
// traffic and reads, in headless Chromium, the numbers the page shows.
func TestDashboardInBrowser(t *testing.T) {
	const helloLimit = 5
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)), core.WithUnmatchedAfter(time.Second), core.WithTopBlockedValues(5), core.WithRules(
		core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: helloLimit},
		core.Rule{Name: "typo", Resource: "GET /helo", Kind: core.KindFlow, Limit: helloLimit},
		core.Rule{Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 3},
		core.Rule{Name: "fail-breaker", Resource: "GET /fail", Kind: core.KindBreaker, Strategy: "error-ratio", Threshold: 0.5,
			MinRequests: 3, Window: 5 * time.Second, OpenFor: 2 * time.Second},
		core.Rule{Name: "inflight", Resource: "*", Kind: core.KindConcurrency, Limit: 50},
		core.Rule{Name: "hostile", Resource: hostileName, Kind: core.KindConcurrency, Limit: 1},
	))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	dash, err := dashboard.New(g, dashboard.WithTitle("sluice demo"), dashboard.WithHistory(30))
	require.NoError(t, err)

	// The application: each route enters the Guard under its pattern.
	mux := http.NewServeMux()
	mux.Handle("/debug/sluice/", http.StripPrefix("/debug/sluice", dash))
	route := func(resource string, status int, param string) {
		mux.HandleFunc(resource, func(w http.ResponseWriter, r *http.Request) {
			var opts []core.EnterOption
			if param != "" {
				opts = append(opts, core.WithParams(core.ParamMap{param: r.Header.Values("X-User-ID")}))
			}
			e, err := g.Enter(r.Context(), resource, opts...)
			if err != nil {
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			time.Sleep(time.Duration(1+rand.IntN(3)) * time.Millisecond)
			w.WriteHeader(status)
			if status >= 500 {
				e.Exit(errors.New(http.StatusText(status)))
			} else {
				e.Exit(nil)
			}
		})
	}
	route("GET /hello", http.StatusOK, "")
	route("GET /fail", http.StatusInternalServerError, "")
	route("GET /items/{id}", http.StatusOK, "header:X-User-ID")
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// Traffic until the test ends: GET /hello at 20/s, 4 times its limit;
	// GET /fail at 5/s, every request failing; GET /items/{id}, one user
	// at 10/s (over 3/s) and one at 2/s.
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	var helloOK, helloBlocked atomic.Int64
	drive := func(path string, every time.Duration, user string) {
		wg.Go(func() {
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
				if user != "" {
					req.Header.Set("X-User-ID", user)
				}
				res, err := srv.Client().Do(req)
				if err != nil {
					continue
				}
				res.Body.Close()
				if path == "/hello" {
					switch res.StatusCode {
					case http.StatusOK:
						helloOK.Add(1)
					case http.StatusTooManyRequests:
						helloBlocked.Add(1)
					}
				}
			}
		})
	}
	drive("/hello", 50*time.Millisecond, "")
	drive("/fail", 200*time.Millisecond, "")
	drive("/items/1", 100*time.Millisecond, "mallory")
	drive("/items/2", 500*time.Millisecond, "alice")
	drive("/items/3", 200*time.Millisecond, hostileName) // 5/s, over 3/s

	// The page opens after the Guard recorded some history: its charts are
	// full at once, from the first snapshot.
	const before = 5
	start := g.History(0).End
	waitFor(t, 60*time.Second, "the Guard recording history", func() (bool, string) {
		end := g.History(0).End
		return end >= start+before*time.Second, fmt.Sprintf("%s recorded", end-start)
	})

	b := startBrowser(t)
	pageURL := srv.URL + "/debug/sluice/"
	run(t, b, "navigating to the page", chromedp.Navigate(pageURL))
	polls := func() int64 {
		n, _ := strconv.ParseInt(strings.Trim(b.eval(t, `document.getElementById("updated")?.dataset.polls ?? ""`), `"`), 10, 64)
		return n
	}
	waitFor(t, 60*time.Second, "the page showing a snapshot", func() (bool, string) {
		return polls() > 0, "status " + b.eval(t, `document.getElementById("status")?.textContent`)
	})
	assert.JSONEq(t, `"sluice demo"`, b.eval(t, `document.title`))

	// Full charts on open: after the first snapshot, GET /hello's chart of
	// requests already has the seconds the Guard recorded, and a limit line
	// (hello-rate, 5 per second), with axes labelled.
	chart := func(attr, name, id string) string {
		args, _ := json.Marshal([]string{"data-" + attr, name, id})
		return fmt.Sprintf(`(function([attr, name, id]) {
			for (const e of document.querySelectorAll("[" + attr + "]")) {
				if (e.getAttribute(attr) === name && e.dataset.field === "charts") return e.querySelector('[data-chart="' + id + '"]');
			}
			return null;
		})(%s)`, args)
	}
	helloChart := chart("resource", "GET /hello", "requests")
	// A page drawing only its own polls would have at most a point per
	// poll.
	var drawn struct{ Polls, Points int }
	waitFor(t, 30*time.Second, "GET /hello's chart drawn", func() (bool, string) {
		v := b.eval(t, `({polls: +document.getElementById("updated").dataset.polls, points: +((`+helloChart+`)?.dataset.points ?? 0)})`)
		require.NoError(t, json.Unmarshal([]byte(v), &drawn))
		return drawn.Points > 0, v
	})
	assert.GreaterOrEqual(t, drawn.Points, drawn.Polls+2, "the chart has the Guard's history: %+v", drawn)
	assert.GreaterOrEqual(t, drawn.Points, before-1)
	points := b.eval(t, `(`+helloChart+`).querySelector('path[data-series="pass"]').getAttribute("d").split("L").length`)
	n, _ := strconv.Atoi(points)
	assert.GreaterOrEqual(t, n, before, "points of the passed line")
	assert.JSONEq(t, `"limit hello-rate"`, b.eval(t, `(`+helloChart+`).querySelector("path.limit").dataset.limit`))
	limitY := b.eval(t, `(`+helloChart+`).querySelector("path.limit").getAttribute("d")`)
	assert.Regexp(t, `^"M[0-9.]+,[0-9.]+(L[0-9.]+,[0-9.]+)+"$`, limitY, "the limit line")
	assert.Equal(t, "3", b.eval(t, `(`+helloChart+`).querySelectorAll("text.ylabel").length`), "value labels")
	xlabels, _ := strconv.Atoi(b.eval(t, `(`+helloChart+`).querySelectorAll("text.xlabel").length`))
	assert.GreaterOrEqual(t, xlabels, 2, "time labels")
	assert.Regexp(t, `^"\d\d:\d\d(:\d\d)?"$`, b.eval(t, `(`+helloChart+`).querySelector("text.xlabel").textContent`))
	assert.Regexp(t, `^"\d+/s"$`, b.eval(t, `(`+helloChart+`).querySelectorAll("text.ylabel")[2].textContent`), "the top of the axis")
	// The limit line is flat at 5/s: its height is 5/top of the plot's.
	var limit struct {
		Top            float64   `json:"top"`
		Ys             []float64 `json:"ys"`
		Bottom, Height float64
	}
	require.NoError(t, json.Unmarshal([]byte(b.eval(t, `(function(c) {
		const ys = c.querySelector("path.limit").getAttribute("d").split(/[ML]/).filter(Boolean).map((p) => +p.split(",")[1]);
		const axis = c.querySelector("line.axis");
		const top = c.querySelectorAll("line.tick")[1]; // the line at the top of the axis
		return {top: +c.dataset.top, ys: ys, bottom: +axis.getAttribute("y1"), height: +axis.getAttribute("y1") - +top.getAttribute("y1")};
	})(`+helloChart+`)`)), &limit))
	require.NotEmpty(t, limit.Ys)
	for _, y := range limit.Ys {
		assert.InDelta(t, limit.Bottom-float64(helloLimit)/limit.Top*limit.Height, y, 0.2, "the limit line at 5/s: %+v", limit)
	}
	rtPoints := b.eval(t, `(`+chart("resource", "GET /hello", "rt")+`)?.dataset.points ?? ""`)
	assert.NotEqual(t, `""`, rtPoints, "a chart of response times")
	inflight := chart("rule", "inflight", "use")
	assert.NotEqual(t, "null", b.eval(t, inflight), "the in-flight chart of a concurrency rule")
	assert.JSONEq(t, `"limit"`, b.eval(t, `(`+inflight+`).querySelector("path.limit").dataset.limit`))

	// First reading.
	firstPolls := polls()
	firstPass, ok := b.number(t, "resource", "GET /hello", "totalPass")
	if !ok { // the first poll may come before the first request
		waitFor(t, 30*time.Second, "GET /hello on the page", func() (bool, string) {
			firstPass, ok = b.number(t, "resource", "GET /hello", "totalPass")
			return ok, ""
		})
	}

	// Second reading, a few polls later: the numbers moved, and agree with
	// the traffic. Every poll in between shows GET /hello passing at most
	// its limit per second.
	var sawPass, sawBlock bool
	var last string
	waitFor(t, 60*time.Second, "GET /hello passing and blocked on the page, over 3 polls", func() (bool, string) {
		pass, ok1 := b.number(t, "resource", "GET /hello", "pass")
		block, ok2 := b.number(t, "resource", "GET /hello", "block")
		require.True(t, ok1 && ok2, "GET /hello shows no numbers")
		require.LessOrEqual(t, pass, int64(helloLimit), "passed/s of GET /hello on the page above its limit")
		sawPass = sawPass || pass > 0
		sawBlock = sawBlock || block > 0
		last = fmt.Sprintf("passed/s %d, blocked/s %d, polls %d", pass, block, polls())
		return sawPass && sawBlock && polls() >= firstPolls+3, last
	})
	secondPass, _ := b.number(t, "resource", "GET /hello", "totalPass")
	assert.Greater(t, secondPass, firstPass, "the passed total of GET /hello did not move")
	secondBlock, _ := b.number(t, "resource", "GET /hello", "totalBlock")
	assert.Positive(t, secondBlock)
	// The page's totals are the Guard's of a moment ago, which the clients
	// saw as 200s and 429s (a request counts in the Guard before its client
	// sees its answer).
	st, ok := g.Stats("GET /hello")
	require.True(t, ok)
	assert.LessOrEqual(t, secondPass, st.Total.Pass)
	assert.LessOrEqual(t, secondBlock, st.Total.Block)
	assert.LessOrEqual(t, helloOK.Load(), st.Total.Pass)
	assert.LessOrEqual(t, helloBlocked.Load(), st.Total.Block)
	ruleBlocked, ok := b.number(t, "rule", "hello-rate", "blockedTotal")
	require.True(t, ok)
	assert.Positive(t, ruleBlocked)

	// The breaker on GET /fail opens under its failures, and the page says so.
	waitFor(t, 30*time.Second, "the breaker shown open", func() (bool, string) {
		state := b.text(t, "rule", "fail-breaker", "state")
		return state == "open", "state " + state
	})
	trips, ok := b.number(t, "rule", "fail-breaker", "trips")
	assert.True(t, ok && trips >= 1, "trips %d", trips)
	assert.JSONEq(t, `"badge open"`, b.eval(t, `document.querySelector('[data-rule="fail-breaker"][data-field="state"] span').className`))
	assert.JSONEq(t, `"rgb(198, 40, 40)"`, b.eval(t, `getComputedStyle(document.querySelector('[data-rule="fail-breaker"][data-field="state"] span')).backgroundColor`), "open is red")

	// What each rule applies to, and how many requests it evaluated; a
	// rule that matched nothing for WithUnmatchedAfter is flagged.
	assert.Equal(t, "GET /hello", b.text(t, "rule", "hello-rate", "applies"))
	evaluated, ok := b.number(t, "rule", "hello-rate", "evaluated")
	assert.True(t, ok && evaluated >= secondPass+secondBlock, "evaluated %d", evaluated)
	assert.Contains(t, b.text(t, "rule", "inflight", "applies"), "GET /hello")
	waitFor(t, 30*time.Second, "the typo rule flagged unmatched", func() (bool, string) {
		text := b.text(t, "rule", "typo", "applies")
		return text == "unmatched", text
	})
	assert.JSONEq(t, `"badge unmatched"`, b.eval(t, `document.querySelector('[data-rule="typo"][data-field="applies"] span').className`))
	unmatched, _ := strconv.Atoi(strings.Trim(b.eval(t, `document.getElementById("sum-unmatched").textContent`), `"`))
	assert.GreaterOrEqual(t, unmatched, 1)

	// The values the hotspot rule blocked most: mallory first, the hostile
	// one as text.
	top := chart("rule", "per-user", "top")
	waitFor(t, 30*time.Second, "the values blocked most", func() (bool, string) {
		v := b.eval(t, `Array.from((`+top+`)?.querySelectorAll("td.value") ?? []).map((e) => e.textContent)`)
		var values []string
		require.NoError(t, json.Unmarshal([]byte(v), &values))
		return len(values) == 2 && values[0] == "mallory" && values[1] == hostileName, v
	})

	// The hostile resource name is shown as it is, as text.
	assert.Equal(t, hostileName, b.text(t, "rule", "hostile", "resource"))
	assert.Equal(t, "null", b.eval(t, `window.pwned`))
	assert.Equal(t, "0", b.eval(t, `document.querySelectorAll("img, main script").length`))

	// The summary tiles and the charts.
	tile := b.eval(t, `document.getElementById("sum-pass").textContent`)
	assert.Regexp(t, `^"\d+"$`, tile)
	waitFor(t, 30*time.Second, "the chart growing by the polls", func() (bool, string) {
		v := b.eval(t, `(`+helloChart+`).dataset.points`)
		m, _ := strconv.Atoi(strings.Trim(v, `"`))
		return m >= n+2, v + " points"
	})
	assert.JSONEq(t, `"live"`, b.eval(t, `document.getElementById("status").textContent`))

	// The page renders at the window's size. (The README's picture is
	// taken from the demo instead: see the README.)
	img := run(t, b, "capturing a screenshot", chromedp.CaptureScreenshot())
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	require.NoError(t, err)
	assert.Equal(t, [2]int{1280, 900}, [2]int{cfg.Width, cfg.Height})

	// The page asked for nothing but the handler's own URLs, and nothing
	// went wrong in it: no exception, no console error, no refused load.
	b.mu.Lock()
	requests, problems, csp := slices.Clone(b.requests), slices.Clone(b.problems), b.csp[pageURL]
	b.mu.Unlock()
	// The browser got the page's Content-Security-Policy, which allows
	// nothing inline: a refused load or script would be a problem below.
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'"} {
		assert.Contains(t, csp, want)
	}
	assert.Contains(t, requests, pageURL+"api/snapshot")
	assert.Contains(t, requests, pageURL+"dashboard.js")
	for _, u := range requests {
		assert.True(t, strings.HasPrefix(u, srv.URL+"/debug/sluice/") || strings.HasPrefix(u, "data:"), "the page requested %s", u)
	}
	assert.Empty(t, problems)
}
