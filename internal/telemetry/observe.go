package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// CodeOK is the result code of a tool call that succeeded; a refused or
// failed call's code is its error code.
const CodeOK = "ok"

// ToolCalls returns the gateway's observer of tool calls
// (gateway.Options.Observe). Each call gets a span "tool NAME" under the
// request's span when t traces, and is counted and timed in m by tool and
// result code. Either may be nil. A refusal is an answer, not a failure:
// only "retry", the server failing, marks the span failed.
func ToolCalls(m *Metrics, t *Tracing) func(ctx context.Context, tool string) (context.Context, func(code string)) {
	tracer := t.TracerProvider().Tracer(scope)
	return func(ctx context.Context, tool string) (context.Context, func(string)) {
		start := time.Now()
		ctx, span := tracer.Start(ctx, "tool "+tool, trace.WithAttributes(attribute.String("baton.tool", tool)))
		return ctx, func(code string) {
			took := time.Since(start)
			span.SetAttributes(attribute.String("baton.code", code))
			if code == "retry" {
				span.SetStatus(codes.Error, code)
			}
			span.End()
			m.ToolCall(tool, code, took)
		}
	}
}
