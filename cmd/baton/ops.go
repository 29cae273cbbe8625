package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"time"

	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/internal/telemetry"
)

// opsConfig is what every command that runs a server shares: the operator
// listener, the log format, and tracing (from the standard OpenTelemetry
// variables).
type opsConfig struct {
	opsListen, logFormat string
}

// flags registers the flags; def is --ops-listen's default.
func (c *opsConfig) flags(fl *flag.FlagSet, def string) {
	stringFlag(fl, &c.opsListen, "ops-listen", def, "operator listener serving Prometheus /metrics, the probes /healthz and /readyz, and Go's /debug/pprof; none when empty. Keep it on loopback or a private network")
	stringFlag(fl, &c.logFormat, "log-format", telemetry.LogText, "log format: text, or json (one object a line) for production")
}

// logger returns the command's logger, writing to w in --log-format.
func (c *opsConfig) logger(w io.Writer) (*slog.Logger, error) {
	log, err := telemetry.NewLogger(w, c.logFormat, nil)
	if err != nil {
		return nil, fmt.Errorf("--log-format %q: want %s or %s", c.logFormat, telemetry.LogText, telemetry.LogJSON)
	}
	return log, nil
}

// observing is what a server process reports to.
type observing struct {
	// metrics are on with an operator listener, nil without one.
	metrics *telemetry.Metrics
	// tracing is on when OTEL_EXPORTER_OTLP_ENDPOINT is set, nil otherwise.
	tracing *telemetry.Tracing
	// metricsURL is where the operator listener serves the metrics, "" for
	// none.
	metricsURL string
	// health answers the probes, on the operator listener and the
	// gateway's.
	health *health
	stops  []func()
}

// observe starts what the configuration asks for: tracing when the
// environment names an OTLP endpoint, and metrics with the operator
// listener when --ops-listen is given. Stop it after everything that
// reports to it.
func (c *opsConfig) observe(ctx context.Context, log *slog.Logger) (*observing, error) {
	o := &observing{health: &health{}}
	topts, on, err := tracingFromEnv(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	if on {
		if o.tracing, err = telemetry.NewTracing(ctx, topts); err != nil {
			return nil, err
		}
		o.stops = append(o.stops, func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := o.tracing.Shutdown(sctx); err != nil {
				log.Warn("the last spans could not be exported", "error", err)
			}
		})
		log.Info("tracing to OTLP", "protocol", topts.Protocol)
	}
	if c.opsListen != "" {
		if o.metrics, err = telemetry.NewMetrics(&telemetry.MetricsOptions{Logger: log}); err != nil {
			o.stop()
			return nil, err
		}
		url, stop, err := serveOps(c.opsListen, o.metrics, o.health, log)
		if err != nil {
			o.stop()
			return nil, err
		}
		o.metricsURL = url + "/metrics"
		o.stops = append(o.stops, stop)
	}
	return o, nil
}

// stop closes the operator listener and flushes the spans left.
func (o *observing) stop() {
	for i := len(o.stops) - 1; i >= 0; i-- {
		o.stops[i]()
	}
	o.stops = nil
}

// toolCalls is the gateway's observer of tool calls; nil when neither
// metrics nor tracing is on.
func (o *observing) toolCalls() func(context.Context, string) (context.Context, func(string)) {
	if o.metrics == nil && !o.tracing.Enabled() {
		return nil
	}
	return telemetry.ToolCalls(o.metrics, o.tracing)
}

// requests gives every request to h an id and, when tracing, a span.
func (o *observing) requests(h http.Handler) http.Handler {
	return telemetry.Requests(h, o.tracing)
}

// tracingFromEnv reads the standard OpenTelemetry variables: tracing is on
// when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is
// set, unless OTEL_SDK_DISABLED is true or OTEL_TRACES_EXPORTER is none;
// the protocol is OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or
// OTEL_EXPORTER_OTLP_PROTOCOL, http/protobuf by default. The exporter reads
// the endpoint and the other OTEL_EXPORTER_OTLP_* variables itself.
func tracingFromEnv(lookup func(string) (string, bool)) (*telemetry.TracingOptions, bool, error) {
	get := func(names ...string) string {
		for _, n := range names {
			if v, ok := lookup(n); ok && strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") || get("OTEL_TRACES_EXPORTER") == "none" {
		return nil, false, nil
	}
	if get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		return nil, false, nil
	}
	if e := get("OTEL_TRACES_EXPORTER"); e != "" && e != "otlp" {
		return nil, false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: Baton exports traces with otlp only (or none)", e)
	}
	protocol := get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	switch protocol {
	case "":
		protocol = telemetry.ProtocolHTTP
	case telemetry.ProtocolHTTP, telemetry.ProtocolGRPC:
	default:
		return nil, false, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: Baton exports with %s or %s", protocol, telemetry.ProtocolHTTP, telemetry.ProtocolGRPC)
	}
	return &telemetry.TracingOptions{Protocol: protocol, Version: gateway.Version}, true, nil
}

// serveOps serves the operator listener: the metrics at /metrics, the
// probes, and Go's profiles under /debug/pprof. It is for operators only;
// keep it on loopback or a private network. It returns the listener's URL.
func serveOps(addr string, m *telemetry.Metrics, h *health, log *slog.Logger) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("listen on %s (--ops-listen): %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	h.handle(mux)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	// Not /debug/pprof/cmdline: the command line may hold a
	// --database-url with its password.
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("operator listener stopped", "error", err)
		}
	}()
	url = listenURL(addr, ln)
	log.Info("operator listener", "metrics", url+"/metrics", "pprof", url+"/debug/pprof/")
	return url, func() { _ = srv.Close() }, nil
}
