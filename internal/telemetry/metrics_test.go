package telemetry_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/internal/telemetry"
)

// scrape GETs h's metrics and parses them as Prometheus does.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("scrape: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the scrape does not parse: %v", err)
	}
	return fams
}

// sample returns the metric of family name whose labels are exactly
// labels, or nil.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] != l.GetValue() {
				match = false
			}
		}
		if match {
			return m
		}
	}
	return nil
}

func TestMetricsFamilies(t *testing.T) {
	m, err := telemetry.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	m.ToolCall("claim", "ok", 12*time.Millisecond)
	m.ToolCall("claim", "ok", 30*time.Millisecond)
	m.ToolCall("claim", "stale", time.Millisecond)
	m.EvaluatorCall("ok", 2*time.Second)
	m.EvaluatorCall("unavailable", 30*time.Second)
	m.DownstreamCall("crm", "refund", "no_answer", 5*time.Second)
	m.RunStarted("o_default", "invoice-approval", "live")
	m.RunEnded("o_default", "invoice-approval", "live", "paid")
	m.ReadModelWritten(3 * time.Millisecond)
	m.ReadModelWritten(-time.Second) // clocks apart: counts as none

	fams := scrape(t, m.Handler())
	counter := func(name string, labels map[string]string) float64 {
		t.Helper()
		s := sample(fams, name, labels)
		if s == nil {
			t.Fatalf("no %s%v in the scrape", name, labels)
		}
		return s.GetCounter().GetValue()
	}
	histogram := func(name string, labels map[string]string) *dto.Histogram {
		t.Helper()
		s := sample(fams, name, labels)
		if s == nil || s.GetHistogram() == nil {
			t.Fatalf("no histogram %s%v in the scrape", name, labels)
		}
		return s.GetHistogram()
	}
	if got := counter("baton_tool_calls_total", map[string]string{"tool": "claim", "code": "ok"}); got != 2 {
		t.Errorf("claim ok = %v", got)
	}
	if got := counter("baton_tool_calls_total", map[string]string{"tool": "claim", "code": "stale"}); got != 1 {
		t.Errorf("claim stale = %v", got)
	}
	if h := histogram("baton_tool_call_duration_seconds", map[string]string{"tool": "claim"}); h.GetSampleCount() != 3 || h.GetSampleSum() < 0.042 || h.GetSampleSum() > 0.044 {
		t.Errorf("claim durations: %d, sum %v", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, o := range telemetry.EvaluatorOutcomes {
		want := map[string]float64{"ok": 1, "unavailable": 1}[o]
		if got := counter("baton_evaluator_calls_total", map[string]string{"outcome": o}); got != want {
			t.Errorf("evaluator %s = %v, want %v", o, got, want)
		}
	}
	if h := histogram("baton_evaluator_call_duration_seconds", nil); h.GetSampleCount() != 2 {
		t.Errorf("evaluator durations: %d", h.GetSampleCount())
	}
	if got := counter("baton_downstream_calls_total", map[string]string{"server": "crm", "tool": "refund", "outcome": "no_answer"}); got != 1 {
		t.Errorf("downstream = %v", got)
	}
	histogram("baton_downstream_call_duration_seconds", map[string]string{"server": "crm"})
	if got := counter("baton_runs_started_total", map[string]string{"org": "o_default", "process": "invoice-approval", "mode": "live"}); got != 1 {
		t.Errorf("runs started = %v", got)
	}
	if got := counter("baton_runs_ended_total", map[string]string{"org": "o_default", "process": "invoice-approval", "mode": "live", "outcome": "paid"}); got != 1 {
		t.Errorf("runs ended = %v", got)
	}
	lag := histogram("baton_read_model_write_lag_seconds", nil)
	if lag.GetSampleCount() != 2 || lag.GetSampleSum() != 0.003 {
		t.Errorf("lag: %d samples, sum %v; want 2 and 0.003", lag.GetSampleCount(), lag.GetSampleSum())
	}
	if fams["go_goroutines"] == nil || fams["process_cpu_seconds_total"] == nil {
		t.Error("Go's runtime and process metrics are missing")
	}
}

// The Temporal SDK's metrics land in the same registry: counters as
// counters, timers as histograms in seconds, tags as labels.
func TestMetricsTakeTemporalSDKMetrics(t *testing.T) {
	m, err := telemetry.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	var opts client.Options
	if err := telemetry.Temporal(&opts, m, nil); err != nil {
		t.Fatal(err)
	}
	if opts.MetricsHandler == nil || len(opts.Interceptors) != 0 {
		t.Fatalf("client options: handler %v, interceptors %v", opts.MetricsHandler, opts.Interceptors)
	}
	h := opts.MetricsHandler.WithTags(map[string]string{"namespace": "default", "operation": "UpdateWorkflowExecution"})
	h.Counter("temporal_request").Inc(1)
	h.Counter("temporal_request").Inc(2)
	h.Timer("temporal_request_latency").Record(40 * time.Millisecond)
	opts.MetricsHandler.Gauge("temporal_num_pollers").Update(2)

	fams := scrape(t, m.Handler())
	labels := map[string]string{"namespace": "default", "operation": "UpdateWorkflowExecution"}
	if s := sample(fams, "temporal_request_total", labels); s == nil || s.GetCounter().GetValue() != 3 {
		t.Errorf("temporal_request_total: %v", s)
	}
	if s := sample(fams, "temporal_request_latency_seconds", labels); s == nil || s.GetHistogram().GetSampleSum() != 0.04 {
		t.Errorf("temporal_request_latency_seconds: %v", s)
	}
	if s := sample(fams, "temporal_num_pollers", nil); s == nil || s.GetGauge().GetValue() != 2 {
		t.Errorf("temporal_num_pollers: %v", s)
	}
	for name := range fams {
		if strings.HasPrefix(name, "otel_") || name == "target_info" {
			t.Errorf("OpenTelemetry's own series %s is exported", name)
		}
	}
}

// A nil *Metrics records nothing and serves nothing, without failing.
func TestNilMetrics(t *testing.T) {
	var m *telemetry.Metrics
	m.ToolCall("claim", "ok", time.Second)
	m.EvaluatorCall("ok", time.Second)
	m.DownstreamCall("crm", "refund", "ok", time.Second)
	m.RunStarted("o_default", "p", "live")
	m.RunEnded("o_default", "p", "live", "done")
	m.ReadModelWritten(time.Second)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("a nil Metrics serves %d", rec.Code)
	}
	var opts client.Options
	if err := telemetry.Temporal(&opts, nil, nil); err != nil || opts.MetricsHandler != nil || opts.Interceptors != nil {
		t.Errorf("Temporal with nothing on set %+v, %v", opts, err)
	}
}
