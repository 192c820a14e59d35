package server

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/examples/internal/exampleapp"
)

// defaultRules is rules.yaml, the rules an instance loads when given none.
//
//go:embed rules.yaml
var defaultRules []byte

// DefaultRules returns the default rules file's content.
func DefaultRules() []byte { return append([]byte(nil), defaultRules...) }

// Defaults of Config.
const (
	DefaultAddr   = "127.0.0.1:8080"
	DefaultRedis  = "127.0.0.1:6379"
	DefaultPrefix = "sluice-example"
)

// Config configures one instance.
type Config struct {
	// Addr is the address to listen on (DefaultAddr when "").
	Addr string
	// Redis is the Redis address (DefaultRedis when ""); several,
	// separated by commas, are the nodes of a Redis Cluster.
	Redis string
	// RulesFile is a YAML or JSON rules file; "" means the default rules.
	RulesFile string
	// Name is the instance's name in responses; "" means the address it
	// listens on.
	Name string
	// Prefix is the prefix of the instance's Redis keys (DefaultPrefix
	// when ""). Instances share limits when they share a Redis and a
	// prefix.
	Prefix string
	// Timeout bounds each call to Redis (redisstore's default, 50ms, when
	// 0); past it a rule applies its failure policy.
	Timeout time.Duration
	// Logf logs what the instance does (log.Printf when nil).
	Logf func(format string, args ...any)
}

// Status is the answer of GET /status.
type Status struct {
	Instance string       `json:"instance"`
	Redis    string       `json:"redis"`
	Stores   []StoreState `json:"stores"`
	// SyncError is the error of the store's last exchange with Redis
	// (the startup check, an approximate sync), "" when it worked.
	SyncError string `json:"syncError,omitempty"`
	// Rules are the rules in force, in the form of a rules file.
	Rules rulesfile.Rules `json:"rules"`
}

// StoreState is a core.StoreStatus in JSON: the health of a store the
// Guard uses (false too while SyncError is set), the calls that failed and
// the decisions its rules' failure policies made.
type StoreState struct {
	Name      string `json:"name"`
	Healthy   bool   `json:"healthy"`
	Errors    int64  `json:"errors"`
	Fallbacks int64  `json:"fallbacks"`
}

// Run serves one instance until ctx ends, then shuts it down gracefully
// (requests in flight finish) and closes its Guard, store and Redis client.
// It calls ready with the address it listens on once it accepts
// connections. An unreachable Redis does not stop it: the rules with a
// store apply their failure policy until Redis answers.
func Run(ctx context.Context, cfg Config, ready func(addr string)) error {
	logf := cfg.Logf
	if logf == nil {
		logf = log.Printf
	}
	rules, err := loadRules(cfg.RulesFile)
	if err != nil {
		return err
	}
	redisAddr := cmp.Or(cfg.Redis, DefaultRedis)
	// ContextTimeoutEnabled: the store bounds each call by its context, and
	// makes a lone call on the request's goroutine.
	client := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:                 strings.Split(redisAddr, ","),
		ContextTimeoutEnabled: true,
		DialTimeout:           time.Second,
	})
	defer client.Close()
	opts := []redisstore.Option{redisstore.WithPrefix(cmp.Or(cfg.Prefix, DefaultPrefix))}
	if cfg.Timeout != 0 {
		opts = append(opts, redisstore.WithTimeout(cfg.Timeout))
	}
	st, err := redisstore.New(client, opts...)
	if err != nil {
		return err
	}
	defer st.Close()
	guard, err := core.New(core.WithStore("redis", st), core.WithRules(rules...))
	if err != nil {
		if cfg.RulesFile != "" { // a rule names another store
			return fmt.Errorf("%s: %w", cfg.RulesFile, err)
		}
		return err
	}
	defer guard.Close()

	ping, cancel := context.WithTimeout(ctx, time.Second)
	if err := st.Ping(ping); err != nil { // st.Err reports it until Redis answers
		logf("redis at %s does not answer (%v): rules with a store apply their onFailure policy until it does", redisAddr, err)
	}
	cancel()

	ln, err := net.Listen("tcp", cmp.Or(cfg.Addr, DefaultAddr))
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	name := cmp.Or(cfg.Name, addr)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "hello from "+name+"\n")
	})
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]string{"q": r.URL.Query().Get("q"), "instance": name})
	})
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]string{"id": r.PathValue("id"), "instance": name})
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		s := Status{Instance: name, Redis: redisAddr, Rules: guard.Rules()}
		// The Guard's breaker opens after failed calls; the store knows
		// sooner that Redis does not answer (at startup, or a failed sync).
		syncErr := st.Err()
		for _, gs := range guard.Stores() {
			s.Stores = append(s.Stores, StoreState{gs.Name, gs.Healthy && syncErr == nil, gs.Errors, gs.Fallbacks})
		}
		if syncErr != nil {
			s.SyncError = syncErr.Error()
		}
		writeJSON(w, s)
	})
	h := sluicehttp.Middleware(guard)(mux)
	instance := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Instance", name)
		h.ServeHTTP(w, r)
	})
	ops, err := exampleapp.Ops(guard, instance)
	if err != nil {
		_ = ln.Close()
		return err
	}
	logf("instance %s listening on http://%s, limits shared through Redis at %s; dashboard on http://%s/debug/sluice/, metrics on http://%s/metrics", name, addr, redisAddr, addr, addr)
	return serve(ctx, ln, ops, ready)
}

// serve serves h on ln until ctx ends, then shuts down gracefully, letting
// requests in flight finish (for up to 15 seconds). It calls ready with
// the address once it accepts connections.
func serve(ctx context.Context, ln net.Listener, h http.Handler, ready func(addr string)) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func loadRules(file string) ([]core.Rule, error) {
	if file == "" {
		return rulesfile.Parse(defaultRules)
	}
	return rulesfile.Load(file)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
