package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// The log formats NewLogger writes.
const (
	LogText = "text"
	LogJSON = "json"
)

// NewLogger returns a logger writing to w in format, LogText (slog's
// key=value lines) or LogJSON (one JSON object a line, for production).
// A line logged with a request's context (InfoContext and the like) names
// the request: request_id, and trace_id and span_id when it is traced.
// Nil options mean slog's defaults (level Info).
func NewLogger(w io.Writer, format string, opts *slog.HandlerOptions) (*slog.Logger, error) {
	var h slog.Handler
	switch format {
	case LogText, "":
		h = slog.NewTextHandler(w, opts)
	case LogJSON:
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("telemetry: log format %q is neither %s nor %s", format, LogText, LogJSON)
	}
	return slog.New(contextHandler{h}), nil
}

// contextHandler adds what the context says about the request to every
// record.
type contextHandler struct{ slog.Handler }

func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(attrs)}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}
