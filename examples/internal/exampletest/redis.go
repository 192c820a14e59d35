package exampletest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The environment variables Redis reads (those of the Redis store's tests).
const (
	// envRedisAddr is the address (host:port) of the Redis the examples'
	// tests use: .ci/test starts one for the examples module.
	envRedisAddr = "SLUICE_REDIS_ADDR"
	// envRequireRedis set to "1" (as .ci/run sets it) makes a missing Redis
	// a test failure rather than a skip.
	envRequireRedis = "SLUICE_REQUIRE_REDIS"
)

// Redis returns the address of the Redis at SLUICE_REDIS_ADDR, which must
// answer PING, and a key prefix no other test has, for t's keys in it.
// Without SLUICE_REDIS_ADDR it skips t, or fails it when
// SLUICE_REQUIRE_REDIS is "1".
func Redis(t testing.TB) (addr, prefix string) {
	t.Helper()
	addr = os.Getenv(envRedisAddr)
	if addr == "" {
		if os.Getenv(envRequireRedis) == "1" {
			t.Fatal(envRequireRedis + "=1 but " + envRedisAddr + " is not set (.ci/test sets it when redis-server is installed)")
		}
		t.Skip(envRedisAddr + " is not set (.ci/test sets it when redis-server is installed)")
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("the Redis at %s=%s does not answer PING: %v", envRedisAddr, addr, err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails
	return addr, "t" + hex.EncodeToString(b[:])
}

// DeadRedis returns an address on 127.0.0.1 where nothing listens: a Redis
// that is down.
func DeadRedis(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// QuietRedisLogs drops go-redis's log lines (its failed dials to a Redis
// that is down). go-redis's logger is global: call it from TestMain.
func QuietRedisLogs() { redis.SetLogger(quiet{}) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
