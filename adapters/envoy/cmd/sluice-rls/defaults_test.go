package main

import (
	"bytes"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeFlagDefaults: the flag table of the module's README lists
// every flag of sluice-rls, each with the default it has when neither the
// flag nor its environment variable is set.
func TestReadmeFlagDefaults(t *testing.T) {
	// -config has no default: it is required.
	s, err := parse([]string{"-config", "rules"}, func(string) string { return "" }, &bytes.Buffer{})
	require.NoError(t, err)
	got := map[string]string{
		"listen": s.listen, "http": s.httpAddr, "config": "", "redis": s.redisAddr,
		"mode": s.mode, "on-failure": s.onFailure,
		"poll": s.poll.String(), "grace": s.grace.String(), "redis-timeout": s.redisTimeout.String(),
		"x-ratelimit-headers": strconv.FormatBool(s.xHeaders), "unknown-domain-ok": strconv.FormatBool(s.unknownOK),
		"pprof": strconv.FormatBool(s.pprof), "max-descriptors": strconv.Itoa(s.maxDescriptors), "max-overrides": strconv.Itoa(s.maxOverrides),
		"http-read-timeout": s.httpRead.String(), "http-write-timeout": s.httpWrite.String(), "http-idle-timeout": s.httpIdle.String(),
		"grpc-max-connection-idle": s.grpcIdle.String(), "grpc-keepalive-time": s.grpcPing.String(),
		"grpc-keepalive-timeout": s.grpcPingTimeout.String(), "grpc-keepalive-min-time": s.grpcMinPing.String(),
	}
	var usage bytes.Buffer
	_, err = parse([]string{"-h"}, func(string) string { return "" }, &usage)
	require.Error(t, err)
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^  -([\w-]+)`).FindAllStringSubmatch(usage.String(), -1) {
		flags = append(flags, m[1])
	}
	require.Len(t, flags, len(got), "every flag has its default above:\n%s", usage.String())

	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	stated := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `-([\\w-]+)` \\| `\\w+` \\|\\s*([^|]*?)\\s*\\|").FindAllStringSubmatch(string(readme), -1) {
		stated[m[1]] = strings.Trim(m[2], "`")
	}
	require.Equal(t, got, stated, "README.md's flag table (flag: default)")
}

// TestGCPercent: sluice-rls runs the garbage collector at gcPercent unless
// $GOGC is set, which the runtime applies.
func TestGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	setGC(func(string) string { return "" })
	require.Equal(t, gcPercent, debug.SetGCPercent(100))
	setGC(func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	})
	require.Equal(t, 100, debug.SetGCPercent(100), "$GOGC set: left to the runtime")
}
