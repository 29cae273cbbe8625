package telemetry

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
)

// newTemporalMetrics returns the Temporal SDK's metrics handler, writing
// into reg: otelMetrics's, keeping its tagged handlers and instruments
// (cachedHandler).
func newTemporalMetrics(reg prometheus.Registerer, log *slog.Logger) (client.MetricsHandler, error) {
	h, err := otelMetrics(reg, log)
	if err != nil {
		return nil, err
	}
	return newCachedHandler(h), nil
}

// otelMetrics returns the SDK's OpenTelemetry handler over a meter whose
// only reader is OpenTelemetry's Prometheus exporter, writing into reg.
// Counters are monotonic (name _total), timers histograms in seconds with
// durationBuckets.
func otelMetrics(reg prometheus.Registerer, log *slog.Logger) (client.MetricsHandler, error) {
	exp, err := otelprom.New(
		otelprom.WithRegisterer(reg),
		otelprom.WithoutScopeInfo(),
		otelprom.WithoutTargetInfo(),
		otelprom.WithAggregationSelector(func(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
			if k == sdkmetric.InstrumentKindHistogram {
				return sdkmetric.AggregationExplicitBucketHistogram{Boundaries: durationBuckets}
			}
			return sdkmetric.DefaultAggregationSelector(k)
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: Temporal metrics: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	return temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter:                mp.Meter("temporal-sdk-go"),
		UseMonotonicCounters: true,
		// The SDK's default panics.
		OnError: func(err error) { log.Error("a Temporal SDK metric failed", "error", err) },
	}), nil
}

// Temporal sets up a Temporal client's options, and so every worker made
// from the client, to report to m and t: the SDK's client and worker
// metrics into m, and with t tracing, a span for every workflow, update,
// query, signal and activity, continuing the trace of the context that
// called the client. A nil m or t sets nothing for it.
func Temporal(opts *client.Options, m *Metrics, t *Tracing) error {
	if m != nil {
		opts.MetricsHandler = m.temporal
	}
	if t.Enabled() {
		i, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: t.tp.Tracer("temporal-sdk-go")})
		if err != nil {
			return fmt.Errorf("telemetry: Temporal tracing: %w", err)
		}
		opts.Interceptors = append(opts.Interceptors, i)
	}
	return nil
}
