package sluicegrpc

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluicekit/sluice/core/throttle"
)

// recordOutcome tells th how a call to resource ended: rejected when the
// server answered ResourceExhausted or Unavailable, paused for the retry
// time of its RetryInfo detail or pushback trailer, or when the call's
// deadline passed before the server answered anything (answered: a
// stream's message); not counted when its caller cancelled it, nor when a
// message was over a size limit (gRPC's own ResourceExhausted, which says
// nothing of the server's load).
func recordOutcome(th *throttle.Throttle, resource string, err error, trailer metadata.MD, answered bool) {
	st := status.Convert(err)
	if st.Code() == codes.Canceled || st.Code() == codes.ResourceExhausted && sizeLimited(st.Message()) {
		return
	}
	rejected := st.Code() == codes.ResourceExhausted || st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded && !answered
	var pause time.Duration
	if rejected {
		pause = retryDelay(st, trailer)
	}
	th.Record(resource, !rejected, pause)
}

// retryDelay returns the retry time a rejected call was given: its
// RetryInfo's delay, else its pushback trailer's; 0 when none.
func retryDelay(st *status.Status, trailer metadata.MD) time.Duration {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			return max(ri.GetRetryDelay().AsDuration(), 0)
		}
	}
	if v := trailer.Get(pushbackKey); len(v) > 0 {
		if ms, err := strconv.ParseInt(v[0], 10, 64); err == nil && ms > 0 {
			return time.Duration(min(ms, int64(maxAdvertised/time.Millisecond))) * time.Millisecond
		}
	}
	return 0
}

// throttledStatus is the error of a call the throttle rejected: status
// Unavailable, with a RetryInfo while the resource is paused.
func throttledStatus(err error) error {
	st := status.New(codes.Unavailable, err.Error())
	var te *throttle.Error
	if errors.As(err, &te) && te.RetryAfter > 0 {
		if with, derr := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(te.RetryAfter)}); derr == nil {
			st = with
		}
	}
	return st.Err()
}

// sizeLimited reports whether msg is gRPC's own error for a message over a
// size limit ("grpc: received message larger than max (N vs. M)", "trying
// to send message larger than max ..."), not a server's words.
func sizeLimited(msg string) bool {
	msg = strings.TrimPrefix(msg, "grpc: ")
	return (strings.HasPrefix(msg, "received message ") || strings.HasPrefix(msg, "message after decompression ") ||
		strings.HasPrefix(msg, "trying to send message ")) && strings.Contains(msg, " larger than max")
}
