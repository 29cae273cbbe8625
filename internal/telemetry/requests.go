package telemetry

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// HeaderRequestID is the response header that carries a request's id.
const HeaderRequestID = "X-Request-Id"

type requestIDKey struct{}

// WithRequestID returns ctx carrying a request id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the id of the request ctx belongs to, "" outside one.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// Requests gives every request through next an id of its own: in the
// X-Request-Id response header, in the request's context (every log line
// of a logger from NewLogger written with that context names it), and, when
// t traces, on the request's span, a server span that continues a caller's
// W3C traceparent. A client's own X-Request-Id is not trusted: the id is
// always new.
func Requests(next http.Handler, t *Tracing) http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := rand.Text()
		w.Header().Set(HeaderRequestID, id)
		ctx := WithRequestID(r.Context(), id)
		trace.SpanFromContext(ctx).SetAttributes(attribute.String("baton.request_id", id))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
	if !t.Enabled() {
		return h
	}
	return otelhttp.NewHandler(h, "baton",
		otelhttp.WithTracerProvider(t.tp),
		otelhttp.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + route(r.URL.Path) }),
	)
}

// route is the first segment of a path, "/mcp" or "/inbox": span names
// stay few, whatever ids the rest of the path holds.
func route(path string) string {
	if len(path) > 1 {
		if i := strings.IndexByte(path[1:], '/'); i >= 0 {
			return path[:i+1]
		}
	}
	return path
}
