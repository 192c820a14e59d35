// Command sluice-rls is Envoy's rate limit service (RLS v3) on sluice: it
// serves envoy.service.ratelimit.v3.RateLimitService from config files of the
// envoyproxy/ratelimit format and sluice rules files (see package
// sluiceenvoy), reloads them when they change, and keeps its counts in its
// memory or, with -redis, in Redis, shared by every instance.
//
//	sluice-rls -config /etc/ratelimit/config -redis redis:6379
//
// Each flag can also be set by an environment variable, named in -help
// (SLUICE_RLS_LISTEN, ...); a flag given wins. -mode, -on-failure and
// -redis-timeout, set without -redis, are refused. The gRPC port also serves
// gRPC health checking (grpc.health.v1, service "" and
// "envoy.service.ratelimit.v3.RateLimitService"); the HTTP port serves
// /healthz, Prometheus metrics at /metrics, the dashboard at /dashboard/
// and, with -pprof, Go's profiles at /debug/pprof/. A gRPC connection
// stays open while idle unless -grpc-max-connection-idle is set; one whose
// client stops answering pings is closed within -grpc-keepalive-time plus
// -grpc-keepalive-timeout (1m20s by default). On SIGTERM or SIGINT
// it reports NOT_SERVING, finishes the calls in flight (for at most -grace)
// and exits. Unless $GOGC is set, it runs Go's garbage collector at
// GOGC=400 (see gcPercent).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/dashboard"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore"
)

func main() {
	setGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil))
}

// gcPercent is the garbage collector's target (GOGC) unless $GOGC sets
// one. The live heap of sluice-rls is a few megabytes while each call
// allocates some kilobytes (most in grpc-go), so that at Go's default of
// 100 the collector runs dozens of times a second under load, and the
// stacks it shrinks grow again; at 400 the heap stays within five times the
// live heap (peak RSS 41 MB instead of 30 under rlsbench's load) and a call
// costs 12-36% less server CPU (see the module's README).
const gcPercent = 400

// setGC sets the garbage collector's target to gcPercent, unless getenv
// gives $GOGC.
func setGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

type settings struct {
	listen, httpAddr, config, redisAddr, mode, onFailure string
	poll, grace, redisTimeout                            time.Duration
	httpRead, httpWrite, httpIdle                        time.Duration
	grpcIdle, grpcPing, grpcPingTimeout, grpcMinPing     time.Duration
	maxDescriptors, maxOverrides                         int
	xHeaders, unknownOK, pprof                           bool
}

// parse reads the flags of args, each defaulting to its environment
// variable when set.
func parse(args []string, getenv func(string) string, out io.Writer) (settings, error) {
	var s settings
	var envErr error
	fs := flag.NewFlagSet("sluice-rls", flag.ContinueOnError)
	fs.SetOutput(out)
	str := func(p *string, name, env, def, usage string) {
		if v := getenv(env); v != "" {
			def = v
		}
		fs.StringVar(p, name, def, usage+" ($"+env+")")
	}
	dur := func(p *time.Duration, name, env string, def time.Duration, usage string) {
		fs.Func(name, usage+" ($"+env+", default "+def.String()+")", func(v string) (err error) { *p, err = time.ParseDuration(v); return err })
		*p = def
		if v := getenv(env); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				envErr = fmt.Errorf("$%s: %w", env, err)
			}
			*p = d
		}
	}
	integer := func(p *int, name, env string, def int, usage string) {
		if v := getenv(env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				envErr = fmt.Errorf("$%s must be an integer, got %s", env, core.Quote(v))
			}
			def = n
		}
		fs.IntVar(p, name, def, usage+" ($"+env+")")
	}
	boolean := func(p *bool, name, env, usage string) {
		switch v := getenv(env); v {
		case "", "false", "0":
		case "true", "1":
			*p = true
		default:
			envErr = fmt.Errorf("$%s must be true, false, 1 or 0, got %s", env, core.Quote(v))
		}
		fs.BoolVar(p, name, *p, usage+" ($"+env+")")
	}
	str(&s.listen, "listen", "SLUICE_RLS_LISTEN", ":8081", "gRPC address of the rate limit service and its health checking")
	str(&s.httpAddr, "http", "SLUICE_RLS_HTTP", ":8080", "HTTP address of /healthz, /metrics and /dashboard/; empty: none")
	str(&s.config, "config", "SLUICE_RLS_CONFIG", "", "config files and directories, comma-separated: envoyproxy/ratelimit YAML files and sluice rules files")
	str(&s.redisAddr, "redis", "SLUICE_RLS_REDIS", "", "Redis: host:port, several comma-separated for a Cluster, or a URL (redis://user:password@host:port/db, rediss:// for TLS); empty: counts in memory")
	str(&s.mode, "mode", "SLUICE_RLS_MODE", "exact", "with -redis: exact (a round trip per decision) or approximate (local decisions, synchronized)")
	str(&s.onFailure, "on-failure", "SLUICE_RLS_ON_FAILURE", "local", "with -redis, while Redis fails: local, open or closed")
	dur(&s.poll, "poll", "SLUICE_RLS_POLL", time.Second, "how often the config files are checked for changes")
	dur(&s.grace, "grace", "SLUICE_RLS_GRACE", 10*time.Second, "longest wait for calls in flight at stop")
	dur(&s.redisTimeout, "redis-timeout", "SLUICE_RLS_REDIS_TIMEOUT", 50*time.Millisecond, "longest wait for a Redis decision")
	dur(&s.httpRead, "http-read-timeout", "SLUICE_RLS_HTTP_READ_TIMEOUT", 10*time.Second, "longest an HTTP client may take to send a request, headers and body")
	dur(&s.httpWrite, "http-write-timeout", "SLUICE_RLS_HTTP_WRITE_TIMEOUT", time.Minute, "longest an HTTP response may take to be sent (a profile's seconds are added)")
	dur(&s.httpIdle, "http-idle-timeout", "SLUICE_RLS_HTTP_IDLE_TIMEOUT", 2*time.Minute, "longest an HTTP connection may wait for its next request")
	dur(&s.grpcIdle, "grpc-max-connection-idle", "SLUICE_RLS_GRPC_MAX_CONNECTION_IDLE", 0, "close a gRPC connection without a call for this long; 0: never (Envoy keeps its connections open)")
	dur(&s.grpcPing, "grpc-keepalive-time", "SLUICE_RLS_GRPC_KEEPALIVE_TIME", time.Minute, "ping a gRPC client after this long without activity (at least 1s)")
	dur(&s.grpcPingTimeout, "grpc-keepalive-timeout", "SLUICE_RLS_GRPC_KEEPALIVE_TIMEOUT", 20*time.Second, "close a gRPC connection whose client does not answer a ping within this")
	dur(&s.grpcMinPing, "grpc-keepalive-min-time", "SLUICE_RLS_GRPC_KEEPALIVE_MIN_TIME", 10*time.Second, "least time between a gRPC client's pings, with or without calls; a client that pings more often is disconnected")
	integer(&s.maxDescriptors, "max-descriptors", "SLUICE_RLS_MAX_DESCRIPTORS", 64, "most descriptors in a request; a request with more is OVER_LIMIT, none decided, unless only shadow limits could limit it")
	integer(&s.maxOverrides, "max-overrides", "SLUICE_RLS_MAX_OVERRIDES", 64, "most distinct limits descriptors' limit overrides ask for; a request asking for one more is OVER_LIMIT, none decided")
	boolean(&s.xHeaders, "x-ratelimit-headers", "SLUICE_RLS_X_RATELIMIT_HEADERS", "also add X-RateLimit-* headers (draft 03)")
	boolean(&s.unknownOK, "unknown-domain-ok", "SLUICE_RLS_UNKNOWN_DOMAIN_OK", "answer OK to an unknown domain, as envoyproxy/ratelimit does, instead of NotFound")
	boolean(&s.pprof, "pprof", "SLUICE_RLS_PPROF", "also serve Go's profiles (net/http/pprof) at /debug/pprof/ on the HTTP address")
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	if envErr != nil {
		return s, envErr
	}
	if fs.NArg() > 0 {
		return s, fmt.Errorf("unexpected argument %s", core.Quote(fs.Arg(0)))
	}
	if s.config == "" {
		return s, errors.New("-config (or $SLUICE_RLS_CONFIG) is required")
	}
	if s.pprof && s.httpAddr == "" {
		return s, errors.New("-pprof needs an -http address to serve the profiles on")
	}
	for name, d := range map[string]time.Duration{"read": s.httpRead, "write": s.httpWrite, "idle": s.httpIdle} {
		if d <= 0 {
			return s, fmt.Errorf("-http-%s-timeout must be > 0, got %s", name, d)
		}
	}
	switch {
	case s.grpcIdle < 0:
		return s, fmt.Errorf("-grpc-max-connection-idle must be >= 0 (0: never), got %s", s.grpcIdle)
	case s.grpcPing < time.Second:
		return s, fmt.Errorf("-grpc-keepalive-time must be >= 1s, got %s", s.grpcPing)
	case s.grpcPingTimeout <= 0 || s.grpcMinPing <= 0:
		return s, fmt.Errorf("-grpc-keepalive-timeout and -grpc-keepalive-min-time must be > 0, got %s and %s", s.grpcPingTimeout, s.grpcMinPing)
	}
	if s.maxDescriptors < 1 || s.maxOverrides < 0 {
		return s, fmt.Errorf("-max-descriptors must be >= 1 and -max-overrides >= 0, got %d and %d", s.maxDescriptors, s.maxOverrides)
	}
	if s.mode != string(store.Exact) && s.mode != string(store.Approximate) {
		return s, fmt.Errorf("-mode must be exact or approximate, got %s", core.Quote(s.mode))
	}
	if f := core.FailurePolicy(s.onFailure); f != core.FailLocal && f != core.FailOpen && f != core.FailClosed {
		return s, fmt.Errorf("-on-failure must be local, open or closed, got %s", core.Quote(s.onFailure))
	}
	if s.redisAddr == "" {
		// Counts in each instance's memory, where a Redis was meant.
		for _, f := range [...]struct{ name, env string }{{"mode", "SLUICE_RLS_MODE"}, {"on-failure", "SLUICE_RLS_ON_FAILURE"}, {"redis-timeout", "SLUICE_RLS_REDIS_TIMEOUT"}} {
			if getenv(f.env) != "" || given(fs, f.name) {
				return s, fmt.Errorf("-%s ($%s) applies only with -redis ($SLUICE_RLS_REDIS), which is not set: counts would be kept in this instance's memory", f.name, f.env)
			}
		}
	}
	return s, nil
}

// given reports whether the flag name was given in fs's arguments.
func given(fs *flag.FlagSet, name string) (found bool) {
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// run serves until ctx ends and returns the exit code. ready, when not nil,
// receives the gRPC and HTTP addresses once both listen.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready chan<- [2]string) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	s, err := parse(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "sluice-rls:", err)
		return 2
	}
	if err := serve(ctx, s, log, ready); err != nil {
		log.Error("sluice-rls: " + err.Error())
		return 1
	}
	return 0
}

func serve(ctx context.Context, s settings, log *slog.Logger, ready chan<- [2]string) error {
	paths := strings.Split(s.config, ",")
	cfg, err := sluiceenvoy.LoadFiles(paths...)
	if err != nil {
		return err
	}
	gopts := []core.Option{core.WithLogger(log), core.WithShadowQuotas()}
	var defaults core.Rule
	if s.redisAddr != "" {
		ro, err := redisOptions(s.redisAddr)
		if err != nil {
			return err
		}
		client := redis.NewUniversalClient(ro)
		defer client.Close()
		rs, err := redisstore.New(client, redisstore.WithTimeout(s.redisTimeout))
		if err != nil {
			return err
		}
		defer rs.Close()
		gopts = append(gopts, core.WithStore("redis", rs))
		defaults = core.Rule{Store: "redis", Mode: store.Mode(s.mode), OnFailure: core.FailurePolicy(s.onFailure)}
	}
	g, err := core.New(gopts...)
	if err != nil {
		return err
	}
	defer g.Close()
	opts := []sluiceenvoy.Option{sluiceenvoy.WithRuleDefaults(defaults), sluiceenvoy.WithMaxDescriptors(s.maxDescriptors),
		sluiceenvoy.WithMaxOverrides(s.maxOverrides)}
	if s.xHeaders {
		opts = append(opts, sluiceenvoy.WithXRateLimitHeaders())
	}
	if s.unknownOK {
		opts = append(opts, sluiceenvoy.WithUnknownDomainOK())
	}
	srv, err := sluiceenvoy.New(g, cfg, opts...)
	if err != nil {
		return err
	}
	w, err := sluiceenvoy.NewWatcher(srv, paths, sluiceenvoy.WatcherOptions{Interval: s.poll, Logger: log})
	if err != nil {
		return err
	}
	defer w.Close()

	lis, err := net.Listen("tcp", s.listen)
	if err != nil {
		return err
	}
	// Calls run on a pool of goroutines that keep their stacks: a call on
	// a fresh goroutine grows its stack (a decision with a store is deep),
	// 11-15% of the server's CPU in exact mode by pprof. A call finding
	// every worker busy gets a goroutine of its own, as without a pool.
	// A peer that stops answering pings is cut off; an idle connection
	// is closed only when asked (Envoy reconnects, but pays a handshake
	// on the first call after it).
	gs := grpc.NewServer(grpc.NumStreamWorkers(uint32(32*runtime.GOMAXPROCS(0))),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: s.grpcIdle, Time: s.grpcPing, Timeout: s.grpcPingTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: s.grpcMinPing, PermitWithoutStream: true}))
	srv.Register(gs)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	hs.SetServingStatus("envoy.service.ratelimit.v3.RateLimitService", healthpb.HealthCheckResponse_SERVING)
	errc := make(chan error, 2)
	go func() { errc <- gs.Serve(lis) }()

	httpAddr := ""
	var hsrv *http.Server
	if s.httpAddr != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
			if ctx.Err() != nil {
				http.Error(w, "stopping", http.StatusServiceUnavailable)
				return
			}
			_, _ = io.WriteString(w, "ok\n")
		})
		metrics, err := metricsHandler(g, srv)
		if err != nil {
			gs.Stop()
			return err
		}
		mux.Handle("GET /metrics", metrics)
		dash, err := dashboard.New(g)
		if err != nil {
			gs.Stop()
			return err
		}
		mux.Handle("/dashboard/", http.StripPrefix("/dashboard", dash))
		if s.pprof {
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
			mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
		hl, err := net.Listen("tcp", s.httpAddr)
		if err != nil {
			gs.Stop()
			return err
		}
		httpAddr = hl.Addr().String()
		// Slow or idle clients are cut off.
		hsrv = &http.Server{Handler: mux, ReadTimeout: s.httpRead, WriteTimeout: s.httpWrite, IdleTimeout: s.httpIdle}
		go func() { errc <- hsrv.Serve(hl) }()
	}
	log.Info("sluice-rls: serving", "grpc", lis.Addr().String(), "http", httpAddr, "domains", len(cfg.Domains), "rules", len(g.Rules()))
	if ready != nil {
		ready <- [2]string{lis.Addr().String(), httpAddr}
	}

	var serr error
	select {
	case <-ctx.Done():
	case serr = <-errc:
	}
	log.Info("sluice-rls: stopping")
	hs.Shutdown() // NOT_SERVING: health checkers take this instance out
	sctx, cancel := context.WithTimeout(context.Background(), s.grace)
	defer cancel()
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	if hsrv != nil {
		_ = hsrv.Shutdown(sctx)
	}
	select {
	case <-done:
	case <-sctx.Done():
		gs.Stop()
		<-done
	}
	if errors.Is(serr, http.ErrServerClosed) || errors.Is(serr, grpc.ErrServerStopped) {
		serr = nil
	}
	return serr
}

// metricsHandler serves the Prometheus metrics of g (package prometheus) and
// those of srv's limits under the names the reference server's statistics
// take through its default statsd mapping:
// ratelimit_service_rate_limit_{total_hits,over_limit,near_limit,within_limit,shadow_mode},
// with the labels domain and key (the limit's path in its domain).
func metricsHandler(g *core.Guard, srv *sluiceenvoy.Server) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	c, err := sluiceprom.NewCollector(g)
	if err != nil {
		return nil, err
	}
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	if err := reg.Register(newRefCollector(srv)); err != nil {
		return nil, err
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil
}

// refCollector collects the statistics of a Server's limits.
type refCollector struct {
	s     *sluiceenvoy.Server
	descs [5]*prometheus.Desc
}

func newRefCollector(s *sluiceenvoy.Server) refCollector {
	c := refCollector{s: s}
	for i, n := range [5]string{"total_hits", "over_limit", "near_limit", "within_limit", "shadow_mode"} {
		c.descs[i] = prometheus.NewDesc("ratelimit_service_rate_limit_"+n,
			"Hits of the limit ("+strings.ReplaceAll(n, "_", " ")+"), as envoyproxy/ratelimit names them.", []string{"domain", "key"}, nil)
	}
	return c
}

func (c refCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect sends the counts of each domain and key: limits of one path
// ("a.b" and "b" under "a") add up, as the reference's statistics of one
// name do, where two series of one name and labels would fail the scrape.
func (c refCollector) Collect(ch chan<- prometheus.Metric) {
	stats := c.s.DescriptorStats() // ordered by domain and key
	for i := 0; i < len(stats); {
		st := stats[i]
		v := [5]uint64{}
		for ; i < len(stats) && stats[i].Domain == st.Domain && stats[i].Key == st.Key; i++ {
			s := &stats[i]
			for j, n := range [5]uint64{s.TotalHits, s.OverLimit, s.NearLimit, s.WithinLimit, s.ShadowMode} {
				v[j] += n
			}
		}
		for j, n := range v {
			ch <- prometheus.MustNewConstMetric(c.descs[j], prometheus.CounterValue, float64(n), st.Domain, st.Key)
		}
	}
}

// redisOptions returns the client options of the -redis flag: addresses, or
// one URL.
func redisOptions(v string) (*redis.UniversalOptions, error) {
	if !strings.Contains(v, "://") {
		return &redis.UniversalOptions{Addrs: strings.Split(v, ","), ContextTimeoutEnabled: true}, nil
	}
	o, err := redis.ParseURL(v)
	if err != nil {
		return nil, fmt.Errorf("-redis: %w", err)
	}
	return &redis.UniversalOptions{Addrs: []string{o.Addr}, Username: o.Username, Password: o.Password, DB: o.DB,
		TLSConfig: o.TLSConfig, ContextTimeoutEnabled: true}, nil
}
