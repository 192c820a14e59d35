package redistest

import (
	"errors"
	"os"
	"sync"
	"testing"
)

// Shared is one Redis for the tests of a package, started by the first
// test that asks for it and stopped by Stop, which the package's TestMain
// calls after m.Run. Tests that kill or freeze a Redis start their own
// (StartOwned). The zero Shared is ready to use; it must not be copied.
type Shared struct {
	mu          sync.Mutex
	srv         *Server
	err         error
	cluster     *Server
	clusterErr  error
	clusterDone bool
	stops       []func()
}

// Server returns the shared Redis, chosen as Start chooses
// (SLUICE_REDIS_ADDR, redis-server, or miniredis, which it logs to tb),
// starting it on the first call. A failure to start fails every test that asks.
func (sh *Shared) Server(tb testing.TB) *Server {
	tb.Helper()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.srv == nil && sh.err == nil {
		sh.srv, sh.err = sh.startLocked()
	}
	if sh.err != nil {
		tb.Fatal(sh.err)
	}
	if sh.srv.Kind == kindMiniredis {
		tb.Log(noRedis + ": testing against miniredis (in-process)")
	}
	return sh.srv
}

func (sh *Shared) startLocked() (*Server, error) {
	if addr := os.Getenv(envAddr); addr != "" {
		return external(addr)
	}
	if hasRedisServer() {
		return sh.launchLocked(false)
	}
	if required() {
		return nil, errors.New(envRequire + "=1 but " + noRedis)
	}
	s, err := startMini()
	if err == nil {
		sh.stops = append(sh.stops, s.Kill)
	}
	return s, err
}

// launchLocked starts a redis-server in a directory of its own, which Stop
// removes.
func (sh *Shared) launchLocked(cluster bool) (*Server, error) {
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, err
	}
	s, err := launch(dir, cluster, "")
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	sh.stops = append(sh.stops, func() { s.Kill(); _ = os.RemoveAll(dir) })
	return s, nil
}

// Cluster returns a shared one-node Redis Cluster that owns every slot:
// with redis-server on PATH a cluster node of its own; without it, the
// shared miniredis; false when SLUICE_REDIS_ADDR is set and redis-server is
// not on PATH.
func (sh *Shared) Cluster(tb testing.TB) (*Server, bool) {
	tb.Helper()
	if !hasRedisServer() {
		if os.Getenv(envAddr) != "" {
			return nil, false
		}
		return sh.Server(tb), true
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.clusterDone {
		sh.clusterDone = true
		sh.cluster, sh.clusterErr = sh.launchLocked(true)
	}
	if sh.clusterErr != nil {
		tb.Fatal(sh.clusterErr)
	}
	return sh.cluster, true
}

// Stop stops the servers Shared started (an external one is left alone).
// Later calls of Server start a new one.
func (sh *Shared) Stop() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for i := len(sh.stops) - 1; i >= 0; i-- {
		sh.stops[i]()
	}
	sh.stops = nil
	sh.srv, sh.err = nil, nil
	sh.cluster, sh.clusterErr, sh.clusterDone = nil, nil, false
}
