package sluicegrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/adapters/grpc/internal/greeterpb"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// hintRules are a flow rule of 3 calls per second and a per-user rule of
// 1 call per 10s on SayHello: the per-user rule's wait is the longer.
func hintRules() []core.Rule {
	return []core.Rule{
		{Name: "hello-rate", Resource: sayHello, Kind: core.KindFlow, Limit: 3, Window: time.Second},
		{Name: "per-user", Resource: sayHello, Kind: core.KindHotspot, Param: "metadata:x-user-id",
			Limit: 1, Window: 10 * time.Second, Overrides: map[string]int64{"banned": 0}},
	}
}

func subjects(d details) []string {
	var out []string
	for _, v := range d.quota.GetViolations() {
		out = append(out, v.GetSubject())
	}
	return out
}

// TestRetryHintOfSeveralRules: when the flow rule and the per-user rule
// both reject a call, RetryInfo and the pushback trailer give the later of
// their retry times (the per-user rule's), and a client that waits exactly
// that long passes; the QuotaFailure names both rules.
func TestRetryHintOfSeveralRules(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, hintRules()...)
	_, c, _ := serve(t, guarded(g)...)
	ctx := ctxT(t)
	as := func(user string) context.Context { return metadata.AppendToOutgoingContext(ctx, "x-user-id", user) }

	for _, u := range []string{"alice", "bob", "carol"} {
		require.NoError(t, hello(as(u), c, u))
	}
	fc.Advance(100 * time.Millisecond)
	var trailer metadata.MD
	d := decode(t, hello(as("alice"), c, "again", grpc.Trailer(&trailer)))
	require.NotNil(t, d.retry)
	delay := d.retry.GetRetryDelay().AsDuration()
	assert.Equal(t, 9900*time.Millisecond, delay, "the per-user rule's retry time, not the flow rule's 900ms")
	assert.EqualValues(t, 9900, pushback(t, trailer))
	assert.Equal(t, "per-user", d.info.GetMetadata()["rule"])
	assert.Equal(t, []string{"rule:hello-rate", "rule:per-user"}, subjects(d))

	// Waiting the flow rule's time is not enough; waiting the hint is.
	fc.Advance(time.Second)
	decode(t, hello(as("alice"), c, "early"))
	fc.Advance(delay - time.Second)
	require.NoError(t, hello(as("alice"), c, "on time"), "a client that waits as told passes")
}

// TestNeverPassesNoRetry: a call that can never pass (its value overridden
// to 0) gets no RetryInfo, and a pushback of -1, which tells gRPC clients
// not to retry, even when another rule rejecting it has a retry time.
func TestNeverPassesNoRetry(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, hintRules()...)
	_, c, _ := serve(t, guarded(g)...)
	ctx := ctxT(t)
	banned := metadata.AppendToOutgoingContext(ctx, "x-user-id", "banned")

	var trailer metadata.MD
	d := decode(t, hello(banned, c, "b", grpc.Trailer(&trailer)))
	assert.Nil(t, d.retry, "no RetryInfo")
	assert.EqualValues(t, -1, pushback(t, trailer), "pushback -1: do not retry")
	assert.Equal(t, sluicegrpc.ReasonWillNotPass, d.info.GetReason())
	assert.Equal(t, []string{"rule:per-user"}, subjects(d))

	// With the flow rule rejecting first (with a retry time), still none.
	for _, u := range []string{"a", "b", "c"} {
		require.NoError(t, hello(metadata.AppendToOutgoingContext(ctx, "x-user-id", u), c, u))
	}
	trailer = nil
	d = decode(t, hello(banned, c, "b", grpc.Trailer(&trailer)))
	assert.Nil(t, d.retry)
	assert.EqualValues(t, -1, pushback(t, trailer))
	assert.Equal(t, sluicegrpc.ReasonWillNotPass, d.info.GetReason())
	assert.Equal(t, []string{"rule:hello-rate", "rule:per-user"}, subjects(d))
}

// retryAll is a service config whose retry policy retries every
// ResourceExhausted call of the greeter, up to 3 attempts.
const retryAll = `{"methodConfig":[{"name":[{"service":"sluice.examples.Greeter"}],"retryPolicy":{
	"maxAttempts":3,"initialBackoff":"0.01s","maxBackoff":"0.01s","backoffMultiplier":1,
	"retryableStatusCodes":["RESOURCE_EXHAUSTED"]}}]}`

// TestNeverPassesClientRetryPolicyStops: a gRPC client whose retry policy
// retries ResourceExhausted makes a single attempt at a call that can never
// pass: the pushback of -1 stops it.
func TestNeverPassesClientRetryPolicyStops(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, hintRules()...)
	_, _, conn := serve(t, guarded(g)...)
	c := greeterpb.NewGreeterClient(dial(t, conn.Target(), grpc.WithDefaultServiceConfig(retryAll)))
	ctx := ctxT(t)

	err := hello(metadata.AppendToOutgoingContext(ctx, "x-user-id", "banned"), c, "b")
	assert.Equal(t, sluicegrpc.ReasonWillNotPass, decode(t, err).info.GetReason())
	st, ok := g.Stats(sayHello)
	require.True(t, ok)
	assert.EqualValues(t, 1, st.Block, "one attempt: the client does not retry a call that will never pass")
}
