package sluicegrpc

import (
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluicekit/sluice/core"
)

// pushbackKey is the trailer in which a blocked call tells a retrying client,
// in whole milliseconds, how long to wait before the next attempt. gRPC
// clients with a retry policy honour it (gRFC A6).
const pushbackKey = "grpc-retry-pushback-ms"

// errorDomain is the domain of the google.rpc.ErrorInfo detail of a blocked
// call.
const errorDomain = "sluice"

// The reasons of the google.rpc.ErrorInfo detail of a blocked call.
const (
	// ReasonRateLimited: a rate limit (flow rule, or hotspot rule with a
	// window) blocked the call.
	ReasonRateLimited = "RATE_LIMITED"
	// ReasonConcurrencyLimited: a limit on calls in flight (concurrency
	// rule, or hotspot rule with algorithm concurrency) blocked the call.
	ReasonConcurrencyLimited = "CONCURRENCY_LIMITED"
	// ReasonCircuitOpen: an open circuit breaker (breaker rule) blocked the
	// call.
	ReasonCircuitOpen = "CIRCUIT_OPEN"
	// ReasonOverloaded: an adaptive limit (adaptive rule), found from the
	// response times of the method, or a system rule blocked the call: the
	// server is overloaded, whoever calls.
	ReasonOverloaded = "OVERLOADED"
	// ReasonWillNotPass: a rule's limit for the call is 0, or below the
	// permits it asks for: it can never pass (core.BlockedError.Never).
	ReasonWillNotPass = "WILL_NOT_PASS"
)

// maxAdvertised bounds the retry delay written in RetryInfo and in the
// pushback trailer, so that its milliseconds, rounded up, still fit a
// time.Duration when a client converts them back.
const maxAdvertised = time.Duration(1<<63-1) / time.Millisecond * time.Millisecond

// BlockedStatus returns the status of a call that b blocked: the code of
// its block class (b.Class()), ResourceExhausted for a quota, b's message,
// and the details
//
//   - google.rpc.RetryInfo with retry_delay = b.RetryAfter (the latest time
//     any rejecting rule allows), when b.RetryAfter is positive (rate
//     limits; concurrency limits have no retry time and get none, nor does
//     a call that can never pass);
//   - google.rpc.ErrorInfo with domain "sluice", the block class's reason
//     (ReasonRateLimited, ReasonConcurrencyLimited; a rate limit without a
//     window, a hotspot rule's of algorithm concurrency, is
//     ReasonConcurrencyLimited), or ReasonWillNotPass for a call that can
//     never pass (b.Never), and metadata rule, resource, kind, limit, window
//     (rate limits) and param (hotspot rules: the param's name, never the
//     caller's value), of the rule that decided (b.Rule);
//   - google.rpc.QuotaFailure with one violation per rule that rejected the
//     call, whose subject is "rule:" + the rule's name.
//
// A call whose block class has code Unavailable gets it, unless it can
// never pass: an open circuit breaker (the method is failing, not the
// caller's quota exhausted; reason ReasonCircuitOpen), an adaptive limit
// or a system rule (the server is overloaded; reason ReasonOverloaded).
// Unavailable is the code clients retry, after the google.rpc.RetryInfo
// delay; its ErrorInfo has the class's reason and metadata rule, resource
// and kind, and for a quota (an adaptive limit) the limit in force as
// metadata limit too; there is no QuotaFailure.
//
// Block handlers (WithBlockHandler) may start from it.
func BlockedStatus(b *core.BlockedError) *status.Status {
	if b == nil {
		return status.New(codes.ResourceExhausted, core.ErrBlocked.Error())
	}
	c := b.Class()
	if codes.Code(c.GRPCCode) == codes.Unavailable && !b.Never {
		return unavailableStatus(b, c)
	}
	st := status.New(codes.ResourceExhausted, b.Error())
	info := &errdetails.ErrorInfo{
		Reason: c.Reason,
		Domain: errorDomain,
		Metadata: map[string]string{
			"rule":     b.Rule,
			"resource": b.Resource,
			"kind":     string(b.Kind),
			"limit":    strconv.FormatInt(b.Limit, 10),
		},
	}
	switch {
	case b.Window > 0:
		info.Metadata["window"] = b.Window.String()
	case c.Reason == ReasonRateLimited || codes.Code(c.GRPCCode) == codes.Unavailable:
		info.Reason = ReasonConcurrencyLimited
	}
	if b.Never {
		info.Reason = ReasonWillNotPass
	}
	if b.Param != "" {
		info.Metadata["param"] = b.Param
	}
	quota := &errdetails.QuotaFailure{}
	for _, p := range b.Policies {
		if p.Blocked {
			quota.Violations = append(quota.Violations, violation(p.Rule, p.Limit, p.Window))
		}
	}
	if len(quota.Violations) == 0 { // a BlockedError made outside core
		quota.Violations = append(quota.Violations, violation(b.Rule, b.Limit, b.Window))
	}
	var withDetails *status.Status
	var err error
	if b.RetryAfter > 0 && !b.Never {
		retry := &errdetails.RetryInfo{RetryDelay: durationpb.New(min(b.RetryAfter, maxAdvertised))}
		withDetails, err = st.WithDetails(retry, info, quota)
	} else {
		withDetails, err = st.WithDetails(info, quota)
	}
	if err != nil {
		return st // cannot happen: details fail only on an OK status
	}
	return withDetails
}

// violation returns the QuotaFailure violation of the rule named rule, of
// limit per window (in flight when window is 0).
func violation(rule string, limit int64, window time.Duration) *errdetails.QuotaFailure_Violation {
	desc := "limit " + strconv.FormatInt(limit, 10)
	if window > 0 {
		desc += " per " + window.String()
	} else {
		desc += " in flight"
	}
	return &errdetails.QuotaFailure_Violation{Subject: "rule:" + rule, Description: desc}
}

// unavailableStatus returns the status of a call blocked by a rule of
// block class c, of code Unavailable: an open breaker, an adaptive limit or
// a system rule.
func unavailableStatus(b *core.BlockedError, c core.BlockClass) *status.Status {
	st := status.New(codes.Unavailable, b.Error())
	info := &errdetails.ErrorInfo{
		Reason:   c.Reason,
		Domain:   errorDomain,
		Metadata: map[string]string{"rule": b.Rule, "resource": b.Resource, "kind": string(b.Kind)},
	}
	if c.Quota {
		info.Metadata["limit"] = strconv.FormatInt(b.Limit, 10)
	}
	details := []protoadapt.MessageV1{info}
	if b.RetryAfter > 0 {
		details = []protoadapt.MessageV1{&errdetails.RetryInfo{RetryDelay: durationpb.New(min(b.RetryAfter, maxAdvertised))}, info}
	}
	withDetails, err := st.WithDetails(details...)
	if err != nil {
		return st // cannot happen: details fail only on an OK status
	}
	return withDetails
}

// pushback returns the pushback trailer's value for a call b blocked: the
// retry delay in whole milliseconds, rounded up; "-1" for a call that can
// never pass, which tells gRPC clients not to retry it at all (gRFC A6: a
// negative pushback); and false when there is no retry time (limits on
// calls in flight).
func pushback(b *core.BlockedError) (string, bool) {
	if b.Never {
		return "-1", true
	}
	d := b.RetryAfter
	if d <= 0 {
		return "", false
	}
	d = min(d, maxAdvertised)
	ms := d / time.Millisecond
	if d%time.Millisecond != 0 {
		ms++
	}
	return strconv.FormatInt(int64(ms), 10), true
}
