package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/telemetry"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

// family is one scraped metric family, its samples by their labels.
type family struct {
	f *dto.MetricFamily
}

// String lists the family's label sets, for failure messages.
func (f family) String() string {
	if f.f == nil {
		return "none"
	}
	var b strings.Builder
	for _, m := range f.f.GetMetric() {
		b.WriteString("\n  {")
		for i, l := range m.GetLabel() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(l.GetName() + "=" + l.GetValue())
		}
		b.WriteString("}")
	}
	return b.String()
}

// with returns the samples whose labels include labels.
func (f family) with(labels map[string]string) []*dto.Metric {
	if f.f == nil {
		return nil
	}
	var out []*dto.Metric
	for _, m := range f.f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			if have[k] != v {
				match = false
			}
		}
		if match {
			out = append(out, m)
		}
	}
	return out
}

// sum adds up the counters or histogram counts of the samples with labels.
func (f family) sum(labels map[string]string) float64 {
	var n float64
	for _, m := range f.with(labels) {
		n += m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
	}
	return n
}

func scrapeMetrics(t *testing.T, url string) map[string]family {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the scrape does not parse: %v", err)
	}
	out := map[string]family{}
	for name, f := range fams {
		out[name] = family{f}
	}
	return out
}

// baton dev serves /metrics (and pprof) on an operator listener of its
// own by default, beside the MCP port: after tool calls and a run walked to its end, every family is
// there with the labels those calls give it.
func TestDevServesMetrics(t *testing.T) {
	data := t.TempDir()
	cfg := devConfigFor(data)
	cfg.databaseURL = pgtest.NewDatabase(t)
	cfg.processes = listFlag{filepath.Join(fixturesDir(t), "invoice-approval")}
	d := launchDev(t, cfg)
	if d.metricsURL == "" || strings.HasPrefix(d.metricsURL, strings.TrimSuffix(d.mcpURL, "/mcp")) {
		t.Fatalf("metrics at %q beside MCP at %s:\n%s", d.metricsURL, d.mcpURL, d.printed)
	}
	if resp, err := http.Get(strings.TrimSuffix(d.mcpURL, "/mcp") + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("the MCP port serves /metrics")
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	drv := devDriver(t, data, d.mcpURL)
	p, err := interpreter.Parse(spectest.Fixture(t, "invoice-approval"), &interpreter.ParseOptions{Folder: "invoice-approval"})
	if err != nil {
		t.Fatal(err)
	}
	final, err := (&drive.Walk{Process: p}).Run(ctx, drv)
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	if final.Run.Outcome == nil {
		t.Fatalf("the run did not end with an outcome: %+v", final.Run)
	}
	outcome := *final.Run.Outcome
	if _, err := drv.GetRun(ctx, drive.WalkOperator, "r_nosuchrun"); err == nil {
		t.Fatal("get_run of an unknown run succeeded")
	}

	m := scrapeMetrics(t, d.metricsURL)
	checks := []struct {
		family string
		labels map[string]string
		least  float64
	}{
		{"baton_tool_calls_total", map[string]string{"tool": "start_run", "code": "ok"}, 1},
		{"baton_tool_calls_total", map[string]string{"tool": "claim", "code": "ok"}, 1},
		{"baton_tool_calls_total", map[string]string{"tool": "submit", "code": "ok"}, 1},
		{"baton_tool_calls_total", map[string]string{"tool": "decide", "code": "ok"}, 1},
		{"baton_tool_calls_total", map[string]string{"tool": "get_run", "code": "not_found"}, 1},
		{"baton_tool_call_duration_seconds", map[string]string{"tool": "start_run"}, 1},
		{"baton_tool_call_duration_seconds", map[string]string{"tool": "claim"}, 1},
		{"baton_runs_started_total", map[string]string{"process": "invoice-approval", "mode": "live"}, 1},
		{"baton_runs_ended_total", map[string]string{"process": "invoice-approval", "mode": "live", "outcome": outcome}, 1},
		{"baton_read_model_write_lag_seconds", nil, 3},
		// The Temporal SDK's client and worker metrics.
		{"temporal_long_request_total", map[string]string{"operation": "UpdateWorkflowExecution"}, 1},
		{"temporal_request_total", map[string]string{"operation": "RespondWorkflowTaskCompleted"}, 1},
		{"temporal_worker_start_total", map[string]string{"worker_type": "WorkflowWorker"}, 1},
		{"temporal_workflow_completed_total", map[string]string{"workflow_type": "ProcessRun"}, 1},
		{"temporal_local_activity_total", map[string]string{"activity_type": "PublishRun"}, 1},
		{"temporal_workflow_task_execution_latency_seconds", map[string]string{"workflow_type": "ProcessRun"}, 1},
	}
	for _, c := range checks {
		if got := m[c.family].sum(c.labels); got < c.least {
			t.Errorf("%s%v = %v, want at least %v; the scrape has %s", c.family, c.labels, got, c.least, m[c.family])
		}
	}
	// Exactly one run started and ended; no call was counted twice.
	if got := m["baton_runs_started_total"].sum(nil); got != 1 {
		t.Errorf("runs started = %v, want 1", got)
	}
	if got := m["baton_runs_ended_total"].sum(nil); got != 1 {
		t.Errorf("runs ended = %v, want 1", got)
	}
	if got := m["baton_tool_calls_total"].sum(map[string]string{"tool": "start_run"}); got != 1 {
		t.Errorf("start_run calls = %v, want 1", got)
	}
	// Calls to an evaluator and to downstream tools are counted where the
	// run makes them; this dev makes none, so the evaluator's outcomes show
	// at zero.
	for _, o := range telemetry.EvaluatorOutcomes {
		if s := m["baton_evaluator_calls_total"].with(map[string]string{"outcome": o}); len(s) != 1 || s[0].GetCounter().GetValue() != 0 {
			t.Errorf("baton_evaluator_calls_total{outcome=%q} = %v", o, s)
		}
	}
	for _, f := range []string{"baton_evaluator_call_duration_seconds", "go_goroutines"} {
		if m[f].f == nil {
			t.Errorf("no %s in the scrape", f)
		}
	}

	// The operator listener still serves Go's profiles.
	resp, err := http.Get(strings.TrimSuffix(d.metricsURL, "/metrics") + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("pprof: %s", resp.Status)
	}
}

func TestTracingFromEnv(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		on       bool
		protocol string
		err      string
	}{
		{"off by default", nil, false, "", ""},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true, "http/protobuf", ""},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true, "http/protobuf", ""},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, "grpc", ""},
		{"traces protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, true, "http/protobuf", ""},
		{"sdk disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "x", "OTEL_SDK_DISABLED": "true"}, false, "", ""},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "x", "OTEL_TRACES_EXPORTER": "none"}, false, "", ""},
		{"exporter zipkin", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "x", "OTEL_TRACES_EXPORTER": "zipkin"}, false, "", "otlp only"},
		{"bad protocol", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "x", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, "", `"http/json"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			o, on, err := tracingFromEnv(lookup)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to say %s", err, tc.err)
				}
				return
			}
			if err != nil || on != tc.on || (on && o.Protocol != tc.protocol) {
				t.Fatalf("got %+v, %v, %v", o, on, err)
			}
		})
	}
}

// Every command that runs a server takes --log-format and refuses a
// format it does not write.
func TestLogFormatFlag(t *testing.T) {
	for _, cmd := range []string{"dev", "serve", "gateway", "worker"} {
		code, _, errOut := baton(cmd, "-h")
		if code != 0 || !strings.Contains(errOut, "-log-format") || !strings.Contains(errOut, "-ops-listen") {
			t.Errorf("baton %s -h: exit %d, no --log-format or --ops-listen:\n%s", cmd, code, errOut)
		}
	}
	code, _, errOut := baton("serve", "--database-url", "postgres://x", "--dev-tokens", "--log-format", "xml")
	if code != 2 || !strings.Contains(errOut, `--log-format "xml"`) {
		t.Errorf("serve --log-format xml: exit %d\n%s", code, errOut)
	}
	code, _, errOut = baton("dev", "--log-format", "xml")
	if code != 2 || !strings.Contains(errOut, `--log-format "xml"`) {
		t.Errorf("dev --log-format xml: exit %d\n%s", code, errOut)
	}
}

// The operator listener serves the profiles but not /debug/pprof/cmdline,
// which would show a --database-url with its password; and the probes:
// alive at once, not ready until the stack gives its checks, and each
// failing check named.
func TestOpsListener(t *testing.T) {
	t.Parallel()
	m, err := telemetry.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &health{}
	url, stop, err := serveOps("127.0.0.1:0", m, h, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/debug/pprof/cmdline"); code == http.StatusOK {
		t.Errorf("/debug/pprof/cmdline answered 200: %q", body)
	}
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine", "/metrics", healthzPath} {
		if code, _ := get(p); code != http.StatusOK {
			t.Errorf("%s: %d", p, code)
		}
	}
	if code, body := get(readyzPath); code != http.StatusServiceUnavailable || !strings.Contains(body, "starting") {
		t.Errorf("readyz before the checks: %d %s", code, body)
	}
	var calls atomic.Int32
	h.ready([]readyCheck{
		{"postgres", func(context.Context) error { calls.Add(1); return nil }},
		{"temporal", func(context.Context) error { return errors.New("connection refused") }},
	})
	if code, body := get(readyzPath); code != http.StatusServiceUnavailable || !strings.Contains(body, `"temporal":"connection refused"`) || strings.Contains(body, "postgres") {
		t.Errorf("readyz with temporal down: %d %s", code, body)
	}
	// A probe every few milliseconds reuses the answer.
	for range 20 {
		get(readyzPath)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("21 probes within %v ran the checks %d times, want 1", readyTTL, n)
	}
	h.ready([]readyCheck{{"postgres", func(context.Context) error { return nil }}})
	if code, body := get(readyzPath); code != http.StatusOK || body != "{\"ready\":true}\n" {
		t.Errorf("readyz with every check passing: %d %q", code, body)
	}
	h.drain()
	if code, body := get(readyzPath); code != http.StatusServiceUnavailable || !strings.Contains(body, "stopping") {
		t.Errorf("readyz while draining: %d %s", code, body)
	}
	if code, _ := get(healthzPath); code != http.StatusOK {
		t.Errorf("healthz while draining: %d", code)
	}
}
