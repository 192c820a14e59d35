package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/alibaba/sentinel-golang/core/system"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/examples/overload/engine"
)

// TestWrapperLoadsTheRulesAndServes checks that Sentinel accepts each
// sentinel protection's rules and that an idle backend is served through
// its entry. (Sentinel's logs stay: its goroutines write them to the end.)
func TestWrapperLoadsTheRulesAndServes(t *testing.T) {
	s := &sentinel{logDir: filepath.Join(os.TempDir(), "sluice-overload-sentinel-test")}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	for _, name := range []string{"sentinel-bbr", "sentinel-load"} {
		h, err := s.wrapper(name)(ok)
		require.NoError(t, err, name)
		got := system.GetRules()
		require.Len(t, got, 1, name)
		assert.Equal(t, *rules(name)[0], got[0], name)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/work", nil))
		assert.Equal(t, http.StatusOK, rec.Code, name)
		assert.Equal(t, "ok", rec.Body.String(), name)
	}
	assert.Nil(t, rules("system-always"), "sluice's rule, not Sentinel's")
}

func TestSummary(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	var ps []point
	for i := range 30 { // 3s: half of the CPUs, the machine busy 3 ticks of 4
		ps = append(ps, point{at: time.Duration(i) * 100 * time.Millisecond, cpu: time.Duration(i*procs) * 50 * time.Millisecond,
			hostBusy: uint64(3 * i), hostTotal: uint64(4 * i)})
	}
	line := summary(engine.Trial{Protection: "adaptive", Rate: 90, Warmup: time.Second}, false, ps)
	assert.Equal(t, fmt.Sprintf("trace adaptive        90/s: process CPU 0.50 of GOMAXPROCS %d (per second 0.5 [0.5..0.5]), machine busy 0.75", procs), line)
	assert.Empty(t, summary(engine.Trial{Warmup: 3 * time.Second}, false, ps), "no point after the warmup")
}
