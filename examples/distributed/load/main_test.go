package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/examples/distributed/internal/server"
	"github.com/sluicekit/sluice/examples/internal/exampletest"
)

func TestMain(m *testing.M) {
	exampletest.QuietRedisLogs()
	os.Exit(m.Run())
}

var (
	admittedLine = regexp.MustCompile(`(?m)^admitted: (\d+) in (\d+) s .*; blocked (\d+); failed (\d+)$`)
	fallbackLine = regexp.MustCompile(`(?m)^decided by the rules' failure policy \(Redis did not answer in time\): (\d+);`)
)

// TestInProcess starts 3 instances and drives them at 4.5x GET /hello's
// limit of 20 per second for 2 seconds: the table has a row per second, and
// the instances together admit what the sliding counter allows while the
// requests ran: at most a window more than their span's worth of windows.
// The span is 2 seconds and the time the last requests took to be answered,
// which a busy host stretches (a request sent late in the last second can
// be admitted well after it). A busy host can also keep Redis from
// answering within the store's timeout (50 ms): the rule's failure policy
// (local) decides those requests, and the summary counts them; each may
// have been admitted on top.
func TestInProcess(t *testing.T) {
	addr, _ := exampletest.Redis(t) // run picks a key prefix of its own
	out := &timedWriter{}
	err := run(context.Background(), []string{"-redis", addr, "-duration", "2s", "-rate", "90"}, out)
	require.NoError(t, err, out.String())
	text := out.String()
	t.Log("\n" + text)
	for _, want := range []string{"instance a on 127.0.0.1:", "instance c on", "3 instances sharing the Redis at " + addr,
		"rule hello-global: 20 per 1s for all instances together (sliding-counter, exact)",
		" sec     a     b     c   total   limit  blocked\n"} {
		assert.Contains(t, text, want)
	}
	assert.Regexp(t, `(?m)^   1(\s+\d+){4}      20\s+\d+$`, text)
	assert.Regexp(t, `(?m)^   2(\s+\d+){4}      20\s+\d+$`, text)
	m := admittedLine.FindStringSubmatch(text)
	require.NotNil(t, m, "the summary")
	admitted, _ := strconv.Atoi(m[1])
	failed, _ := strconv.Atoi(m[4])
	assert.Equal(t, "2", m[2])
	assert.Zero(t, failed)
	assert.GreaterOrEqual(t, admitted, 20)
	// The requests were sent after the "driving" line, and all answered
	// before the summary.
	span := out.between("driving GET ", "admitted: ")
	require.Positive(t, span, "the driving line, then the summary")
	fallbacks := 0
	if m := fallbackLine.FindStringSubmatch(text); m != nil {
		fallbacks, _ = strconv.Atoi(m[1])
		require.Positive(t, fallbacks)
	}
	assert.LessOrEqual(t, float64(admitted), 20*(span.Seconds()+1)+float64(fallbacks), "admitted within %s, %d decided by the failure policy", span, fallbacks)
}

// timedWriter is a buffer that notes when each write was made.
type timedWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes []timedWrite
}

type timedWrite struct {
	at   time.Time
	text string
}

func (w *timedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, timedWrite{time.Now(), string(p)})
	return w.buf.Write(p)
}

func (w *timedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// between returns the time from the first write that contains first to
// the last write that contains last; 0 when either is missing.
func (w *timedWriter) between(first, last string) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var from, to time.Time
	for _, wr := range w.writes {
		if from.IsZero() && strings.Contains(wr.text, first) {
			from = wr.at
		}
		if strings.Contains(wr.text, last) {
			to = wr.at
		}
	}
	if from.IsZero() || to.IsZero() {
		return 0
	}
	return to.Sub(from)
}

// TestTargets drives instances that are already running, by address.
func TestTargets(t *testing.T) {
	redisAddr, prefix := exampletest.Redis(t)
	ctx, cancel := context.WithCancel(context.Background())
	var addrs []string
	done := make(chan error, 2)
	for _, name := range []string{"left", "right"} {
		ready := make(chan string, 1)
		go func() {
			done <- server.Run(ctx, server.Config{Addr: "127.0.0.1:0", Redis: redisAddr, Name: name, Prefix: prefix, Logf: t.Logf},
				func(addr string) { ready <- addr })
		}()
		addrs = append(addrs, <-ready)
	}
	defer func() {
		cancel()
		for range 2 {
			assert.NoError(t, <-done)
		}
	}()
	var out bytes.Buffer
	err := run(ctx, []string{"-targets", strings.Join(addrs, ","), "-duration", "1s", "-rate", "50", "-path", "/search?q=x"}, &out)
	require.NoError(t, err, out.String())
	text := out.String()
	t.Log("\n" + text)
	assert.NotContains(t, text, "instances sharing", "no instance started")
	assert.Contains(t, text, "driving GET /search?q=x on 2 instances at 50 requests/s for 1s; rule search-global: 100 per 1s for all instances together (sliding-counter, approximate)")
	assert.Contains(t, text, " sec  left  right   total   limit  blocked\n")
	m := admittedLine.FindStringSubmatch(text)
	require.NotNil(t, m)
	assert.Equal(t, "0", m[3], "50 a second is under the limit of 100")
	assert.NotEqual(t, "0", m[1])
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-rate", "0"}, "-rate must be between 1 and 10000, got 0"},
		{[]string{"-duration", "10ms"}, "-duration must be between 1s and 1h, got 10ms"},
		{[]string{"-path", "hello"}, `-path must start with /, got "hello"`},
		{[]string{"-instances", "30"}, "-instances must be between 1 and 26, got 30"},
		{[]string{"extra"}, `unexpected arguments ["extra"]`},
		{[]string{"-nope"}, "flag provided but not defined: -nope"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), tc.args, &out)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestLimitOf(t *testing.T) {
	rules := []core.Rule{
		{Name: "hotspot", Resource: "GET /hello", Kind: core.KindHotspot, Store: "redis", Limit: 1, Window: time.Second},
		{Name: "local", Resource: "GET /hello", Kind: core.KindFlow, Limit: 2, Window: time.Second},
		{Name: "hello", Resource: "GET /hello", Kind: core.KindFlow, Store: "redis", Limit: 20, Window: time.Second},
		{Name: "any", Resource: "/search", Kind: core.KindFlow, Store: "redis", Limit: 50, Window: 500 * time.Millisecond},
	}
	for _, tc := range []struct {
		path, rule string
		perSec     float64
	}{
		{"/hello", "hello", 20},
		{"/hello?x=1", "hello", 20},
		{"/search", "any", 100},
		{"/hello/", "", 0},
	} {
		perSec, desc := limitOf(rules, tc.path)
		assert.Equal(t, tc.perSec, perSec, tc.path)
		if tc.rule != "" {
			assert.True(t, strings.HasPrefix(desc, "rule "+tc.rule+":"), desc)
		}
	}
}
