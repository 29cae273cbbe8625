package telemetry

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// scope is the instrumentation scope of Baton's own spans.
const scope = "github.com/baton-run/baton"

// The OTLP protocols a Tracing exports with.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Tracing is one process's OpenTelemetry tracing. A nil *Tracing traces
// nothing and costs nothing.
type Tracing struct {
	tp *sdktrace.TracerProvider
}

// TracingOptions configure Tracing.
type TracingOptions struct {
	// Protocol is the OTLP protocol spans are exported with: ProtocolHTTP
	// or ProtocolGRPC. Default ProtocolHTTP, as the OpenTelemetry
	// specification says. The exporter takes its endpoint, headers,
	// certificates, compression and timeout from the standard
	// OTEL_EXPORTER_OTLP_* environment variables itself.
	Protocol string
	// Processor, when set, receives the spans instead of an OTLP
	// exporter: tests pass a tracetest.SpanRecorder. Default none.
	Processor sdktrace.SpanProcessor
	// Service is the service.name of the spans. Default "baton";
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win, as the
	// OpenTelemetry SDK reads them.
	Service string
	// Version is the service.version of the spans. Default none.
	Version string
}

// NewTracing starts tracing: every span is batched to an OTLP exporter
// (or given to opts.Processor). Sampling follows OTEL_TRACES_SAMPLER,
// every trace by default, and a request that carries a W3C traceparent
// continues its caller's trace. Shut it down to flush what is left. Nil
// options mean defaults.
func NewTracing(ctx context.Context, opts *TracingOptions) (*Tracing, error) {
	var o TracingOptions
	if opts != nil {
		o = *opts
	}
	if o.Service == "" {
		o.Service = "baton"
	}
	attrs := []attribute.KeyValue{semconv.ServiceName(o.Service)}
	if o.Version != "" {
		attrs = append(attrs, semconv.ServiceVersion(o.Version))
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("telemetry: tracing resource: %w", err)
	}
	sp := o.Processor
	if sp == nil {
		var exp sdktrace.SpanExporter
		switch o.Protocol {
		case "", ProtocolHTTP:
			exp, err = otlptracehttp.New(ctx)
		case ProtocolGRPC:
			exp, err = otlptracegrpc.New(ctx)
		default:
			return nil, fmt.Errorf("telemetry: OTLP protocol %q is not one Baton exports with: use %s or %s", o.Protocol, ProtocolHTTP, ProtocolGRPC)
		}
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
		}
		sp = sdktrace.NewBatchSpanProcessor(exp)
	}
	return &Tracing{tp: sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(sp))}, nil
}

// Enabled reports whether t traces.
func (t *Tracing) Enabled() bool { return t != nil && t.tp != nil }

// TracerProvider returns t's tracer provider; a no-op one when t is nil.
func (t *Tracing) TracerProvider() trace.TracerProvider {
	if !t.Enabled() {
		return noop.NewTracerProvider()
	}
	return t.tp
}

// Shutdown exports the spans still buffered and stops t. It does nothing
// for a nil t.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// Start starts a span named name under ctx's span, from the tracer
// provider of ctx's span: code that is called in a traced context (an
// activity run by a traced worker, a tool call in a traced request) adds
// its span to that trace, and records nothing otherwise. End it with End.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return trace.SpanFromContext(ctx).TracerProvider().Tracer(scope).Start(ctx, name, trace.WithAttributes(attrs...))
}

// End ends a span, marking it failed with err when err is not nil.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
