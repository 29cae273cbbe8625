package telemetry

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.temporal.io/sdk/client"
)

// Metrics are one process's Prometheus metrics: Baton's own families
// (below), the Temporal SDK's client and worker metrics (temporal_*), and
// Go's runtime and process metrics (go_*, process_*). A nil *Metrics
// records nothing.
//
// Baton's families:
//
//	baton_tool_calls_total{tool, code}             tool calls by result code: ok or the error code
//	baton_tool_call_duration_seconds{tool}         how long tool calls took
//	baton_evaluator_calls_total{outcome}           check evaluator calls: ok, unavailable, rejected, malformed
//	baton_evaluator_call_duration_seconds          how long evaluator calls took
//	baton_downstream_calls_total{server, tool, outcome}
//	                                               downstream tool calls: ok, tool_error, not_sent, no_answer, refused
//	baton_downstream_call_duration_seconds{server} how long downstream calls took
//	baton_runs_started_total{org, process, mode}   runs started
//	baton_runs_ended_total{org, process, mode, outcome} runs ended, by outcome (cancelled for a cancelled run)
//	baton_read_model_write_lag_seconds             from a run's change to its read-model write
//	baton_open_steps{org, process, step, state}    open step attempts now (WatchOpenSteps)
type Metrics struct {
	reg    *prometheus.Registry
	logger *slog.Logger

	toolCalls         *prometheus.CounterVec
	toolDuration      *prometheus.HistogramVec
	evaluatorCalls    *prometheus.CounterVec
	evaluatorDuration prometheus.Histogram
	downstreamCalls   *prometheus.CounterVec
	downstreamLatency *prometheus.HistogramVec
	runsStarted       *prometheus.CounterVec
	runsEnded         *prometheus.CounterVec
	writeLag          prometheus.Histogram

	temporal client.MetricsHandler
}

// MetricsOptions configure Metrics.
type MetricsOptions struct {
	// Logger receives errors of the Temporal SDK's metrics and of scrapes.
	// Default slog.Default().
	Logger *slog.Logger
}

// EvaluatorOutcomes are the outcomes of an evaluator call: ok, or the kind
// of its error (activities/evaluator.Kind).
var EvaluatorOutcomes = []string{"ok", "unavailable", "rejected", "malformed"}

// durationBuckets bound every latency histogram, in seconds: from a
// millisecond (a read from PostgreSQL) to two minutes (the longest call
// the gateway answers).
var durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// NewMetrics returns a fresh set of metrics in a registry of its own. Nil
// options mean defaults.
func NewMetrics(opts *MetricsOptions) (*Metrics, error) {
	var o MetricsOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	m := &Metrics{
		reg:    prometheus.NewRegistry(),
		logger: o.Logger,
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "baton_tool_calls_total", Help: "Tool calls, by tool and result code (ok or the error code).",
		}, []string{"tool", "code"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "baton_tool_call_duration_seconds", Help: "How long tool calls took, by tool.", Buckets: durationBuckets,
		}, []string{"tool"}),
		evaluatorCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "baton_evaluator_calls_total", Help: "Check evaluator calls, by outcome (ok or the kind of error).",
		}, []string{"outcome"}),
		evaluatorDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "baton_evaluator_call_duration_seconds", Help: "How long check evaluator calls took.", Buckets: durationBuckets,
		}),
		downstreamCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "baton_downstream_calls_total", Help: "Downstream tool calls, by server, tool and outcome (ok, tool_error, not_sent, no_answer, refused).",
		}, []string{"server", "tool", "outcome"}),
		downstreamLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "baton_downstream_call_duration_seconds", Help: "How long downstream tool calls took, by server.", Buckets: durationBuckets,
		}, []string{"server"}),
		runsStarted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "baton_runs_started_total", Help: "Runs started, by organization, process and mode.",
		}, []string{"org", "process", "mode"}),
		runsEnded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "baton_runs_ended_total", Help: "Runs ended, by organization, process, mode and outcome (cancelled for a cancelled run).",
		}, []string{"org", "process", "mode", "outcome"}),
		writeLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "baton_read_model_write_lag_seconds", Help: "Time from a run's change to the read-model write that shows it.", Buckets: durationBuckets,
		}),
	}
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.toolCalls, m.toolDuration, m.evaluatorCalls, m.evaluatorDuration,
		m.downstreamCalls, m.downstreamLatency, m.runsStarted, m.runsEnded, m.writeLag,
	} {
		if err := m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("telemetry: register metrics: %w", err)
		}
	}
	// An evaluator's outcomes are few and known: all show from the start,
	// so a dashboard tells "no failures" from "no data".
	for _, o := range EvaluatorOutcomes {
		m.evaluatorCalls.WithLabelValues(o)
	}
	h, err := newTemporalMetrics(m.reg, o.Logger)
	if err != nil {
		return nil, err
	}
	m.temporal = h
	return m, nil
}

// Handler serves the metrics in Prometheus's text format (or OpenMetrics,
// when the scraper asks for it). A nil *Metrics serves 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	})
}

// ToolCall counts one tool call with its result code ("ok" or the error
// code) and how long it took.
func (m *Metrics) ToolCall(tool, code string, took time.Duration) {
	if m == nil {
		return
	}
	m.toolCalls.WithLabelValues(tool, code).Inc()
	m.toolDuration.WithLabelValues(tool).Observe(took.Seconds())
}

// EvaluatorCall counts one check evaluator call with its outcome ("ok" or
// the evaluator.Kind of its error) and how long it took. It is the observer
// evaluator.Observed takes.
func (m *Metrics) EvaluatorCall(outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.evaluatorCalls.WithLabelValues(outcome).Inc()
	m.evaluatorDuration.Observe(took.Seconds())
}

// DownstreamCall counts one downstream tool call with its outcome ("ok",
// "tool_error", "not_sent", "no_answer" or "refused") and how long it took.
// It is the observer downstream.Options.Observe takes.
func (m *Metrics) DownstreamCall(server, tool, outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.downstreamCalls.WithLabelValues(server, tool, outcome).Inc()
	m.downstreamLatency.WithLabelValues(server).Observe(took.Seconds())
}

// RunStarted counts a run of organization org started. The organization
// is a label of the run counters only: a process belongs to one
// organization, so it adds no series the process label did not already
// have, while the per-call families stay without it.
func (m *Metrics) RunStarted(org, process, mode string) {
	if m == nil {
		return
	}
	m.runsStarted.WithLabelValues(org, process, mode).Inc()
}

// RunEnded counts a run ended with its outcome; a cancelled run's outcome
// is "cancelled".
func (m *Metrics) RunEnded(org, process, mode, outcome string) {
	if m == nil {
		return
	}
	m.runsEnded.WithLabelValues(org, process, mode, outcome).Inc()
}

// ReadModelWritten records the lag of one read-model write: from the run's
// change to the moment its rows were written. A negative lag (clocks of
// two machines) counts as none.
func (m *Metrics) ReadModelWritten(lag time.Duration) {
	if m == nil {
		return
	}
	m.writeLag.Observe(max(lag, 0).Seconds())
}
