package main

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"sync"

	"github.com/alibaba/sentinel-golang/api"
	"github.com/alibaba/sentinel-golang/core/base"
	"github.com/alibaba/sentinel-golang/core/config"
	"github.com/alibaba/sentinel-golang/core/system"
	"github.com/sluicekit/sluice/examples/overload/engine"
)

// cpuThreshold is the CPU usage over which sentinel-bbr's BBR check
// applies: that of the overload command's system protection.
const cpuThreshold = 0.8

// alwaysCPU is system-always's threshold: sluice's system rule with its
// BBR bound applying whenever the process uses more than 1% of its CPUs,
// as Sentinel's does with any threshold it accepts (see doc.go).
const alwaysCPU = 0.01

// rules returns the Sentinel system rules of a sentinel protection, nil
// for another name.
func rules(name string) []*system.Rule {
	switch name {
	case "sentinel-bbr": // as sluice's system protection: cpu, 0.8, bbr
		return []*system.Rule{{MetricType: system.CpuUsage, TriggerCount: cpuThreshold, Strategy: system.BBR}}
	case "sentinel-load": // as Sentinel's docs recommend BBR: load1 over 2.5 per CPU
		return []*system.Rule{{MetricType: system.Load, TriggerCount: 2.5 * float64(runtime.NumCPU()), Strategy: system.BBR}}
	}
	return nil
}

// sentinel is Sentinel-Go in this process, started by the first trial
// that needs it.
type sentinel struct {
	logDir  string
	once    sync.Once
	initErr error
}

// start starts Sentinel once, with its defaults (system metrics every
// second) but its logs in s.logDir.
func (s *sentinel) start() error {
	s.once.Do(func() {
		conf := config.NewDefaultConfig()
		conf.Sentinel.App.Name = "sluice-overload"
		conf.Sentinel.Log.Dir = s.logDir
		if s.initErr = api.InitWithConfig(conf); s.initErr != nil {
			s.initErr = fmt.Errorf("sentinel: init: %w", s.initErr)
			return
		}
		fmt.Fprintf(os.Stderr, "sentinel: logs in %s; system metrics every %d ms (cpu: this process's, load: the machine's load1)\n",
			config.LogBaseDir(), config.SystemStatCollectIntervalMs())
	})
	return s.initErr
}

// wrapper returns the engine.Protection Wrap of sentinel protection name:
// it loads the protection's rules, then wraps each request in an inbound
// Sentinel entry, as Sentinel's HTTP adapters (gin, echo) do; a blocked
// request is answered 503, as sluice's middleware answers a refusal.
func (s *sentinel) wrapper(name string) func(http.Handler) (http.Handler, error) {
	return func(backend http.Handler) (http.Handler, error) {
		if err := s.start(); err != nil {
			return nil, err
		}
		want := rules(name)
		if _, err := system.LoadRules(want); err != nil {
			return nil, fmt.Errorf("sentinel: rules %v: %w", want, err)
		}
		if got := system.GetRules(); len(got) != len(want) {
			return nil, fmt.Errorf("sentinel: rules %v refused (in force: %v)", want, got)
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e, blocked := api.Entry(engine.Route, api.WithResourceType(base.ResTypeWeb), api.WithTrafficType(base.Inbound))
			if blocked != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			defer e.Exit()
			backend.ServeHTTP(w, r)
		}), nil
	}
}
