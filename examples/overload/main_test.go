package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain runs the test binary as the load generator when run makes it
// its child (see generatorEnv).
func TestMain(m *testing.M) {
	if os.Getenv(generatorEnv) == "1" {
		if err := generator(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestRunPrintsATable(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-warmup=0s", "-duration=1s", "-load=2", "-protect=static,adaptive", "-slowdown=false"}, &out)
	require.NoError(t, err)
	if _, err := os.Stat("/proc/loadavg"); err == nil {
		assert.Contains(t, out.String(), "host load average at start: ")
		assert.Contains(t, out.String(), "host load average after the table: ")
	}
	for _, want := range []string{"backend: 10 workers x 50ms = 200 requests/s", "unloaded (0.5x", "load generator: a child process", "sched p99", "goodput/s", "static    2x", "adaptive    2x", "adaptive   critical", "adaptive  sheddable"} {
		assert.Contains(t, out.String(), want)
	}
}

func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"-workers=0", "-workers must be >= 1, got 0"},
		{"-load=2,x", `-load: "x" is not a positive number`},
		{"-load=0", `-load: "0" is not a positive number`},
		{"-protect=adaptive,magic", `-protect: unknown protection "magic" (known: none, static, adaptive, system, system-rt)`},
		{"-duration=0s", "must be > 0"},
		{"-backend=gpu", `-backend: unknown backend "gpu" (known: sleep, cpu)`},
	} {
		_, err := parse([]string{tc.args}, &bytes.Buffer{})
		assert.ErrorContains(t, err, tc.want, tc.args)
	}
}

func TestSettled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		windows []int64
		first   int
		want    time.Duration
		lo, hi  int64
	}{
		{"at once", []int64{10, 10, 10, 10, 10, 10}, 2, 0, 10, 10},
		{"after a dip", []int64{10, 10, 4, 6, 9, 10, 11, 10, 9, 10}, 2, 2 * settleWindow, 9, 11},
		{"a probe's dip is out of range", []int64{10, 10, 10, 4, 10, 10, 10, 10, 10, 10}, 0, 4 * settleWindow, 10, 10},
		{"within 10% of the range", []int64{20, 8, 9, 10, 11, 10}, 0, 2 * settleWindow, 10, 11},
	} {
		got, lo, hi := settled(tc.windows, tc.first)
		assert.Equal(t, tc.want, got, tc.name)
		assert.Equal(t, []int64{tc.lo, tc.hi}, []int64{lo, hi}, tc.name)
	}
}

func TestCPUBackendHasAWorkerPerCPU(t *testing.T) {
	c, err := parse([]string{"-backend=cpu"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, runtime.GOMAXPROCS(0), c.workers)
	c, err = parse([]string{"-backend=cpu", "-workers=3"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, 3, c.workers)
	c, err = parse(nil, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, 10, c.workers)
}

// TestRunCPUBackend runs the cpu backend; it measures the capacity first
// and busies every CPU for about 10s: not in short mode.
func TestRunCPUBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("10s of every CPU")
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"-backend=cpu", "-warmup=0s", "-duration=1s", "-load=2", "-protect=static,system", "-slowdown=false", "-priority=false"}, &out)
	require.NoError(t, err)
	t.Log(out.String())
	for _, want := range []string{"backend: cpu, ", "rounds of SHA-256", "capacity, measured closed loop", "static    2x", "system    2x"} {
		assert.Contains(t, out.String(), want)
	}
}

// TestCalibrate checks that the work scales with the time asked for. The
// scaling is checked on given probe timings: two calibrations time the
// probe apart, and a busy host can slow every probe of one of them.
func TestCalibrate(t *testing.T) {
	assert.Positive(t, calibrate(time.Millisecond))
	for _, probe := range []time.Duration{time.Microsecond, 2 * time.Millisecond, 70 * time.Millisecond} {
		short, long := scaleRounds(time.Millisecond, probe), scaleRounds(100*time.Millisecond, probe)
		assert.Positive(t, short, probe)
		assert.InDelta(t, 100*short, long, 100, "probe %s: %d and %d rounds", probe, short, long)
	}
	assert.Equal(t, int64(probeRounds), scaleRounds(time.Second, time.Second))
	assert.Equal(t, int64(1), scaleRounds(time.Nanosecond, time.Second), "at least one")
}

// TestLoadGeneratorIsAChildProcess checks that the requests come from
// another process than the server's (see generatorEnv), and that their
// outcomes come back; with -inprocess, from this one.
func TestLoadGeneratorIsAChildProcess(t *testing.T) {
	for _, inProcess := range []bool{false, true} {
		var mu sync.Mutex
		pids := map[string]int{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			pids[r.Header.Get(generatorHeader)]++
			mu.Unlock()
			_, _ = io.WriteString(w, "ok")
		}))
		outs, err := generate(context.Background(), job{URL: srv.URL, Streams: []stream{{Rate: 20}, {Rate: 10}},
			Total: 500 * time.Millisecond, Deadline: 5 * time.Second}, inProcess)
		srv.Close()
		require.NoError(t, err)
		require.Len(t, outs, 2)
		assert.Len(t, outs[0], 10, "in process %v", inProcess)
		assert.Len(t, outs[1], 5, "in process %v", inProcess)
		assert.Equal(t, ok, outs[0][3].result)
		assert.Equal(t, 150*time.Millisecond, outs[0][3].at)
		mu.Lock()
		if own := strconv.Itoa(os.Getpid()); inProcess {
			assert.Equal(t, map[string]int{own: 15}, pids)
		} else {
			assert.Len(t, pids, 1)
			assert.NotContains(t, pids, own)
			assert.NotContains(t, pids, "")
		}
		mu.Unlock()
	}
}

func TestP99Since(t *testing.T) {
	h := func(counts ...uint64) *metrics.Float64Histogram {
		return &metrics.Float64Histogram{Counts: counts, Buckets: []float64{0, 0.001, 0.01, math.Inf(1)}}
	}
	assert.Equal(t, time.Duration(0), p99Since(h(5, 5, 5), h(5, 5, 5)), "none")
	assert.Equal(t, time.Millisecond, p99Since(h(50, 0, 0), h(150, 0, 0)))
	assert.Equal(t, 10*time.Millisecond, p99Since(h(0, 0, 0), h(98, 2, 0)), "the 99th of 100 in the second bucket")
	assert.Equal(t, time.Millisecond, p99Since(h(0, 1, 0), h(99, 1, 0)), "counts before are not counted")
	assert.Equal(t, 10*time.Millisecond, p99Since(h(0, 0, 0), h(0, 0, 1)), "the unbounded bucket's lower bound")
}

func TestRunWritesATrace(t *testing.T) {
	file := t.TempDir() + "/trace.out"
	err := run(context.Background(), []string{"-trace=" + file, "-warmup=0s", "-duration=200ms", "-load=1", "-protect=static", "-slowdown=false", "-priority=false"}, io.Discard)
	require.NoError(t, err)
	info, err := os.Stat(file)
	require.NoError(t, err)
	assert.Positive(t, info.Size())
	assert.Error(t, run(context.Background(), []string{"-trace=" + t.TempDir() + "/no/such/dir/trace.out"}, io.Discard))
}

func TestRunWritesSamples(t *testing.T) {
	file := t.TempDir() + "/samples.tsv"
	err := run(context.Background(), []string{"-samples=" + file, "-warmup=0s", "-duration=500ms", "-load=1", "-protect=adaptive,system", "-slowdown=false", "-priority=false"}, io.Discard)
	require.NoError(t, err)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Greater(t, len(lines), 1, "a header and samples: %q", b)
	seen := map[string]bool{}
	assert.Equal(t, "protection\tload\tat\tlimit\tinflight\trecent_ms\tmin_ms\thost", lines[0])
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		require.Len(t, f, 8, "%q", l)
		seen[f[0]] = true
		assert.Equal(t, "1", f[1], "%q", l)
		if f[0] == "system" {
			assert.Equal(t, "-", f[3], "no bound: the sleep backend leaves the CPU idle: %q", l)
		}
	}
	assert.Equal(t, map[string]bool{"adaptive": true, "system": true}, seen)
	assert.Error(t, run(context.Background(), []string{"-samples=" + t.TempDir() + "/no/such/dir/samples.tsv"}, io.Discard))
}
