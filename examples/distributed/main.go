// Command distributed is one instance of a service whose limits hold for
// all its instances together: the sluice rules with `store: redis` keep
// their counts in one Redis. Run several on one Redis and drive them with
// the load command, which prints each second what every instance admitted
// and the total against the global limit:
//
//	go -C examples run ./distributed -addr 127.0.0.1:8081 -name a &
//	go -C examples run ./distributed -addr 127.0.0.1:8082 -name b &
//	go -C examples run ./distributed -addr 127.0.0.1:8083 -name c &
//	go -C examples run ./distributed/load -targets 127.0.0.1:8081,127.0.0.1:8082,127.0.0.1:8083
//
// or all of them in one process: go -C examples run ./distributed/load
// -instances 3.
//
// Flags: -addr (default 127.0.0.1:8080), -redis (default 127.0.0.1:6379; a
// comma-separated list is a Redis Cluster), -rules FILE (default: the
// embedded rules, internal/server/rules.yaml), -name (shown in responses
// and in the X-Instance header; default the address), -prefix (of the
// Redis keys; instances share limits when they share a Redis and a
// prefix).
//
// Routes: GET /hello (20 per second for all instances, exact), GET /search
// (100 per second, approximate), GET /items/{id} (5 per second per
// X-User-ID, exact), GET /status (the instance's name, its store's health
// and fallbacks, its rules). With Redis down the rules fall back to local
// limits (a third of the global one), and GET /status says so.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/sluicekit/sluice/examples/distributed/internal/server"
)

func main() {
	var cfg server.Config
	flag.StringVar(&cfg.Addr, "addr", server.DefaultAddr, "`address` to listen on")
	flag.StringVar(&cfg.Redis, "redis", server.DefaultRedis, "Redis `address`; several, comma-separated, are a Redis Cluster")
	flag.StringVar(&cfg.RulesFile, "rules", "", "rules `file` (YAML, or JSON when named *.json); default: the embedded rules")
	flag.StringVar(&cfg.Name, "name", "", "instance `name` shown in responses (default: the address)")
	flag.StringVar(&cfg.Prefix, "prefix", server.DefaultPrefix, "`prefix` of the Redis keys")
	flag.DurationVar(&cfg.Timeout, "timeout", 0, "longest wait for Redis per call, before a rule applies its failure policy (0: redisstore's default, 50ms)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "distributed: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, nil); err != nil {
		log.Fatal(err)
	}
}

// run serves one instance until ctx ends, then shuts down gracefully.
func run(ctx context.Context, cfg server.Config, ready func(addr string)) error {
	return server.Run(ctx, cfg, ready)
}
