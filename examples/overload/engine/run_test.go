package engine

import (
	"bytes"
	"context"
	"errors"
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
	"sync/atomic"
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
	err := Program{}.Run(context.Background(), []string{"-warmup=0s", "-duration=1s", "-load=2", "-protect=static,adaptive", "-slowdown=false"}, &out)
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
		_, err := Program{}.parse([]string{tc.args}, &bytes.Buffer{})
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
	c, err := Program{}.parse([]string{"-backend=cpu"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, runtime.GOMAXPROCS(0), c.workers)
	c, err = Program{}.parse([]string{"-backend=cpu", "-workers=3"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, 3, c.workers)
	c, err = Program{}.parse(nil, &bytes.Buffer{})
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
	err := Program{}.Run(context.Background(), []string{"-backend=cpu", "-warmup=0s", "-duration=1s", "-load=2", "-protect=static,system", "-slowdown=false", "-priority=false"}, &out)
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
	err := Program{}.Run(context.Background(), []string{"-trace=" + file, "-warmup=0s", "-duration=200ms", "-load=1", "-protect=static", "-slowdown=false", "-priority=false"}, io.Discard)
	require.NoError(t, err)
	info, err := os.Stat(file)
	require.NoError(t, err)
	assert.Positive(t, info.Size())
	assert.Error(t, Program{}.Run(context.Background(), []string{"-trace=" + t.TempDir() + "/no/such/dir/trace.out"}, io.Discard))
}

func TestRunWritesSamples(t *testing.T) {
	file := t.TempDir() + "/samples.tsv"
	err := Program{}.Run(context.Background(), []string{"-samples=" + file, "-warmup=0s", "-duration=500ms", "-load=1", "-protect=adaptive,system", "-slowdown=false", "-priority=false"}, io.Discard)
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
	assert.Error(t, Program{}.Run(context.Background(), []string{"-samples=" + t.TempDir() + "/no/such/dir/samples.tsv"}, io.Discard))
}

// TestProgramAddsProtections runs a program with a protection of its own
// that wraps the backend, interleaved, with a trace: its wrapper serves the
// requests, the rows run load by load, and the trace sees every trial's
// load start and end, with its rate and warmup.
func TestProgramAddsProtections(t *testing.T) {
	var wrapped atomic.Int64
	var mu sync.Mutex
	var trials []Trial
	ended := 0
	p := Program{
		Protections: []Protection{{Name: "counted", Wrap: func(b http.Handler) (http.Handler, error) {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				wrapped.Add(1)
				b.ServeHTTP(w, r)
			}), nil
		}}},
		Trace: func(tr Trial) func() {
			mu.Lock()
			defer mu.Unlock()
			trials = append(trials, tr)
			return func() {
				mu.Lock()
				defer mu.Unlock()
				ended++
			}
		},
		Interleave: true,
	}
	var out bytes.Buffer
	err := p.Run(context.Background(), []string{"-warmup=100ms", "-duration=300ms", "-load=1,2", "-protect=counted,static", "-slowdown=false", "-priority=false"}, &out)
	require.NoError(t, err)
	t.Log(out.String())
	assert.Equal(t, []Trial{
		{Protection: "none", Rate: 100, Warmup: 100 * time.Millisecond}, // unloaded: 0.5x of 10 workers x 50ms
		{Protection: "counted", Rate: 200, Warmup: 100 * time.Millisecond},
		{Protection: "static", Rate: 200, Warmup: 100 * time.Millisecond},
		{Protection: "counted", Rate: 400, Warmup: 100 * time.Millisecond},
		{Protection: "static", Rate: 400, Warmup: 100 * time.Millisecond},
	}, trials)
	assert.Equal(t, len(trials), ended)
	assert.Equal(t, int64(200*0.4+400*0.4), wrapped.Load(), "every request of the counted rows went through the wrapper")
	var rows []string
	for l := range strings.Lines(out.String()) {
		if f := strings.Fields(l); len(f) > 2 && (f[0] == "counted" || f[0] == "static") {
			rows = append(rows, f[0]+" "+f[1])
		}
	}
	assert.Equal(t, []string{"counted 1x", "static 1x", "counted 2x", "static 2x"}, rows)
}

func TestProgramRejectsBadProtections(t *testing.T) {
	wrap := func(b http.Handler) (http.Handler, error) { return b, nil }
	for _, tc := range []struct {
		p    Protection
		want string
	}{
		{Protection{Wrap: wrap}, `protection 0: name "": want a name with no comma or space`},
		{Protection{Name: "a,b", Wrap: wrap}, `protection 0: name "a,b": want a name with no comma or space`},
		{Protection{Name: "static", Wrap: wrap}, `protection 0: name "static" is taken (taken: none, static, adaptive, system, system-rt)`},
		{Protection{Name: "idle"}, "protection idle: neither Rules nor Wrap set"},
	} {
		err := Program{Protections: []Protection{tc.p}}.Run(context.Background(), []string{"-protect=none"}, io.Discard)
		assert.ErrorContains(t, err, tc.want)
	}
	twice := Program{Protections: []Protection{{Name: "x", Wrap: wrap}, {Name: "x", Wrap: wrap}}}
	assert.ErrorContains(t, twice.Run(context.Background(), nil, io.Discard), `protection 1: name "x" is taken (taken: none, static, adaptive, system, system-rt, x)`)
	failing := Program{Protections: []Protection{{Name: "broken", Wrap: func(http.Handler) (http.Handler, error) { return nil, errors.New("no rules loaded") }}}}
	err := failing.Run(context.Background(), []string{"-warmup=0s", "-duration=100ms", "-load=1", "-protect=broken", "-slowdown=false", "-priority=false"}, io.Discard)
	assert.EqualError(t, err, "protection broken: no rules loaded")
}
