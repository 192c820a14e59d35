package dashboard_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
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
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/websocket"

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

// browser is a headless Chromium driven through the DevTools protocol.
type browser struct {
	ws      *websocket.Conn
	session string
	mu      sync.Mutex
	next    int
}

var devtoolsRE = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

// startBrowser starts headless Chromium with a page target open at url,
// and stops it when the test ends.
func startBrowser(t *testing.T, url string) *browser {
	t.Helper()
	bin := findChromium()
	if bin == "" {
		if os.Getenv("SLUICE_REQUIRE_BROWSER") == "1" {
			t.Fatal("no chromium on PATH, and SLUICE_REQUIRE_BROWSER=1 (Debian: apt-get install chromium)")
		}
		t.Skip("no chromium on PATH (Debian: apt-get install chromium); set SLUICE_REQUIRE_BROWSER=1 to fail instead")
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--disable-dev-shm-usage", "--remote-debugging-port=0", "--remote-allow-origins=*",
		"--user-data-dir="+t.TempDir(), "--window-size=1280,900", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the browser and its helpers
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := devtoolsRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var wsURL string
	select {
	case wsURL = <-found:
	case <-time.After(30 * time.Second):
		t.Fatal("chromium did not report its DevTools address within 30s")
	}
	ws, err := websocket.Dial(wsURL, "", "http://127.0.0.1/")
	require.NoError(t, err)
	ws.MaxPayloadBytes = 64 << 20
	t.Cleanup(func() { _ = ws.Close() })
	b := &browser{ws: ws}
	var target struct {
		TargetID string `json:"targetId"`
	}
	b.call(t, "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	b.call(t, "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	b.session = attached.SessionID
	b.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false}, nil)
	b.call(t, "Page.navigate", map[string]any{"url": url}, nil)
	return b
}

// call sends a command (to the page's session once attached) and decodes
// its result into out; it skips the events that arrive meanwhile.
func (b *browser) call(t *testing.T, method string, params any, out any) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	msg := map[string]any{"id": b.next, "method": method, "params": params}
	if b.session != "" {
		msg["sessionId"] = b.session
	}
	require.NoError(t, websocket.JSON.Send(b.ws, msg))
	_ = b.ws.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		var reply struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, websocket.JSON.Receive(b.ws, &reply), "waiting for the reply to %s", method)
		if reply.ID != b.next {
			continue // an event, or nothing we wait for
		}
		require.Nil(t, reply.Error, "%s: %+v", method, reply.Error)
		if out != nil {
			require.NoError(t, json.Unmarshal(reply.Result, out))
		}
		return
	}
}

// eval evaluates a JavaScript expression in the page and returns its
// value as a string ("" for null or undefined).
func (b *browser) eval(t *testing.T, expr string) string {
	t.Helper()
	var res struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	b.call(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res)
	if res.Result.Value == nil {
		return ""
	}
	return fmt.Sprint(res.Result.Value)
}

// field returns the text of the cell of field for the item whose data-attr
// is name.
func (b *browser) field(t *testing.T, attr, name, field string) string {
	t.Helper()
	q, _ := json.Marshal(fmt.Sprintf(`[data-%s=%q][data-field=%q]`, attr, name, field))
	return b.eval(t, fmt.Sprintf(`(function(){const e=document.querySelector(%s); return e ? (e.dataset.value || e.textContent) : null})()`, q))
}

// number waits until the field shows a number and returns it.
func (b *browser) number(t *testing.T, attr, name, field string) int64 {
	t.Helper()
	var v int64
	require.Eventually(t, func() bool {
		n, err := strconv.ParseInt(b.field(t, attr, name, field), 10, 64)
		v = n
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "%s %s %s shows no number", attr, name, field)
	return v
}

// TestDashboardInBrowser serves the dashboard of a Guard under real traffic
// and reads, in headless Chromium, the numbers the page shows.
func TestDashboardInBrowser(t *testing.T) {
	const helloLimit = 5
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(
		core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: helloLimit},
		core.Rule{Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 3},
		core.Rule{Name: "fail-breaker", Resource: "GET /fail", Kind: core.KindBreaker, Strategy: "error-ratio", Threshold: 0.5,
			MinRequests: 3, Window: 5 * time.Second, OpenFor: 2 * time.Second},
		core.Rule{Name: "inflight", Resource: "*", Kind: core.KindConcurrency, Limit: 50},
	))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	dash, err := dashboard.New(g, dashboard.WithTitle("sluice demo"), dashboard.WithHistory(30))
	require.NoError(t, err)

	mux := http.NewServeMux()
	mux.Handle("/debug/sluice/", http.StripPrefix("/debug/sluice", dash))
	route := func(resource string, status int, params func(*http.Request) core.Params) {
		mux.HandleFunc(resource, func(w http.ResponseWriter, r *http.Request) {
			var opts []core.EnterOption
			if params != nil {
				opts = append(opts, core.WithParams(params(r)))
			}
			e, err := g.Enter(r.Context(), resource, opts...)
			if err != nil {
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
			w.WriteHeader(status)
			var failed error
			if status >= 500 {
				failed = errors.New("500")
			}
			e.Exit(failed)
		})
	}
	route("GET /hello", http.StatusOK, nil)
	route("GET /fail", http.StatusInternalServerError, nil)
	route("GET /items/{id}", http.StatusOK, func(r *http.Request) core.Params {
		return core.ParamMap{"header:X-User-ID": r.Header.Values("X-User-ID")}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// Traffic until the test ends: /hello at about 20/s (over its limit
	// of 5), /fail at 5/s, and users on /items/{id}.
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
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
				if res, err := http.DefaultClient.Do(req); err == nil {
					res.Body.Close()
				}
			}
		})
	}
	drive("/hello", 50*time.Millisecond, "")
	drive("/fail", 200*time.Millisecond, "")
	drive("/items/1", 100*time.Millisecond, "mallory")
	drive("/items/2", 500*time.Millisecond, "alice")

	b := startBrowser(t, srv.URL+"/debug/sluice/")

	// The page shows live numbers that change from one poll to the next.
	first := b.number(t, "resource", "GET /hello", "totalPass")
	require.Eventually(t, func() bool {
		return b.number(t, "resource", "GET /hello", "totalPass") > first
	}, 30*time.Second, 200*time.Millisecond, "the passed total of GET /hello on the page never moved past %d", first)
	require.Eventually(t, func() bool {
		return b.number(t, "resource", "GET /hello", "block") > 0 && b.number(t, "rule", "hello-rate", "blocked") > 0
	}, 30*time.Second, 200*time.Millisecond, "the page never showed GET /hello blocked")
	// Passed per second never above the limit (the Guard's last second).
	for range 5 {
		pass := b.number(t, "resource", "GET /hello", "pass")
		assert.LessOrEqual(t, pass, int64(helloLimit), "passed/s on the page above the limit")
		time.Sleep(300 * time.Millisecond)
	}
	// The breaker on /fail opens under its failures, and the page says so.
	require.Eventually(t, func() bool {
		return b.field(t, "rule", "fail-breaker", "state") == "open"
	}, 30*time.Second, 100*time.Millisecond, "the page never showed the breaker open (state %q)", b.field(t, "rule", "fail-breaker", "state"))
	assert.Equal(t, "live", b.eval(t, `document.getElementById("status").textContent`))
	assert.Equal(t, "sluice demo", b.eval(t, `document.title`))
	// The charts have points.
	require.Eventually(t, func() bool {
		n, _ := strconv.Atoi(b.eval(t, `String(document.querySelector('[data-resource="GET /hello"][data-field="chart"] polyline').getAttribute("points").split(" ").length)`))
		return n >= 3
	}, 30*time.Second, 200*time.Millisecond)
	// The page's numbers are the Guard's.
	fromPage := b.number(t, "resource", "GET /hello", "totalPass")
	st, ok := g.Stats("GET /hello")
	require.True(t, ok)
	assert.LessOrEqual(t, fromPage, st.Total.Pass)
	assert.Greater(t, fromPage, int64(0))

	update := os.Getenv("SLUICE_UPDATE_SCREENSHOT") == "1"
	if update {
		time.Sleep(25 * time.Second) // charts with some history for the picture
	}
	var shot struct {
		Data string `json:"data"`
	}
	b.call(t, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
	img, err := base64.StdEncoding.DecodeString(shot.Data)
	require.NoError(t, err)
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	require.NoError(t, err)
	assert.Equal(t, 1280, cfg.Width)
	if update {
		require.NoError(t, os.WriteFile("testdata/dashboard.png", img, 0o644))
	}
}
