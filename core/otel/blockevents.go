package sluiceotel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluicekit/sluice/core"
)

// blockEventName is the name of the span event BlockEvents adds.
const blockEventName = "sluice.blocked"

// The attribute keys of the block events beyond those of the instruments.
const (
	attrReason     = attribute.Key("sluice.reason")
	attrParam      = attribute.Key("sluice.param")
	attrRetryAfter = attribute.Key("sluice.retry_after")
	attrNever      = attribute.Key("sluice.never")
)

// BlockEvents returns a block hook for core.WithBlockHook that adds an
// event named "sluice.blocked" to the span of the request's context when
// that span is recording, with the resource, the rule that decided
// (name, kind and, for hotspot rules, the param's name, never its value),
// the reason (core.BlockedError.Reason), the retry time in seconds
// (sluice.retry_after, a double; 0 when none applies) and, when the request
// can never pass, sluice.never. It does nothing, and allocates nothing,
// when the span is not recording:
//
//	guard, err := core.New(core.WithBlockHook(sluiceotel.BlockEvents()), ...)
func BlockEvents() func(ctx context.Context, b *core.BlockedError) {
	return func(ctx context.Context, b *core.BlockedError) {
		span := trace.SpanFromContext(ctx)
		if !span.IsRecording() {
			return
		}
		attrs := make([]attribute.KeyValue, 0, 7)
		attrs = append(attrs,
			attrResource.String(valid(b.Resource)),
			attrRule.String(valid(b.Rule)),
			attrRuleKind.String(string(b.Kind)),
			attrReason.String(b.Reason()),
			attrRetryAfter.Float64(b.RetryAfter.Seconds()))
		if b.Param != "" {
			attrs = append(attrs, attrParam.String(valid(b.Param)))
		}
		if b.Never {
			attrs = append(attrs, attrNever.Bool(true))
		}
		span.AddEvent(blockEventName, trace.WithAttributes(attrs...))
	}
}
