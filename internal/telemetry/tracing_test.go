package telemetry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/internal/telemetry"
)

// recorded returns tracing into an in-memory recorder.
func recorded(t *testing.T) (*telemetry.Tracing, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tr, err := telemetry.NewTracing(context.Background(), &telemetry.TracingOptions{Processor: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr, rec
}

// Spans go to the OTLP endpoint the standard variable names, over
// OTLP/HTTP, when tracing shuts down at the latest.
func TestTracingExportsOverOTLPHTTP(t *testing.T) {
	var mu sync.Mutex
	var posts []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posts = append(posts, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_SERVICE_NAME", "baton-test")

	tr, err := telemetry.NewTracing(context.Background(), &telemetry.TracingOptions{Protocol: telemetry.ProtocolHTTP})
	if err != nil {
		t.Fatal(err)
	}
	ctx, parent := tr.TracerProvider().Tracer("test").Start(context.Background(), "parent")
	_, child := telemetry.Start(ctx, "read model write")
	telemetry.End(child, nil)
	parent.End()
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(posts) != 1 || !strings.HasPrefix(posts[0], "POST /v1/traces application/x-protobuf ") {
		t.Fatalf("the collector got %q", posts)
	}
	for _, s := range []string{"read model write", "parent", "baton-test"} {
		if !strings.Contains(posts[0], s) {
			t.Errorf("the export does not carry %q", s)
		}
	}
}

func TestTracingRefusesUnknownProtocol(t *testing.T) {
	_, err := telemetry.NewTracing(context.Background(), &telemetry.TracingOptions{Protocol: "http/json"})
	if err == nil || !strings.Contains(err.Error(), `"http/json"`) {
		t.Fatalf("err = %v", err)
	}
}

// Start adds a span to the caller's trace, from the caller's provider,
// and records nothing for a caller that is not traced.
func TestStartFollowsTheCaller(t *testing.T) {
	tr, rec := recorded(t)
	ctx, parent := tr.TracerProvider().Tracer("test").Start(context.Background(), "parent")
	_, child := telemetry.Start(ctx, "child")
	telemetry.End(child, errors.New("store down"))
	parent.End()
	ended := rec.Ended()
	if len(ended) != 2 || ended[0].Name() != "child" || ended[0].Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("recorded %v", ended)
	}
	if ended[0].Status().Code != codes.Error || ended[0].Status().Description != "store down" {
		t.Errorf("a failed span's status is %+v", ended[0].Status())
	}

	_, lone := telemetry.Start(context.Background(), "untraced")
	if lone.IsRecording() || lone.SpanContext().IsValid() {
		t.Error("a span with no traced caller is recorded")
	}
	lone.End()
	if len(rec.Ended()) != 2 {
		t.Error("the untraced span reached the recorder")
	}
}

func TestNilTracing(t *testing.T) {
	var tr *telemetry.Tracing
	if tr.Enabled() {
		t.Fatal("a nil Tracing is enabled")
	}
	_, s := tr.TracerProvider().Tracer("x").Start(context.Background(), "s")
	if s.IsRecording() {
		t.Error("a nil Tracing records")
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

// With tracing on, Temporal clients get the tracing interceptor.
func TestTemporalTracing(t *testing.T) {
	tr, _ := recorded(t)
	var opts client.Options
	if err := telemetry.Temporal(&opts, nil, tr); err != nil {
		t.Fatal(err)
	}
	if len(opts.Interceptors) != 1 || opts.MetricsHandler != nil {
		t.Fatalf("options: %d interceptors, handler %v", len(opts.Interceptors), opts.MetricsHandler)
	}
}

// ToolCalls spans each call under the request's span and counts it; a
// refusal is an answer, retry a failure.
func TestToolCalls(t *testing.T) {
	tr, rec := recorded(t)
	m, err := telemetry.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	observe := telemetry.ToolCalls(m, tr)
	ctx, req := tr.TracerProvider().Tracer("test").Start(context.Background(), "POST /mcp")
	for _, code := range []string{"ok", "not_accepted", "retry"} {
		cctx, done := observe(ctx, "submit")
		if trace.SpanFromContext(cctx).SpanContext().SpanID() == req.SpanContext().SpanID() {
			t.Fatal("the call's context carries no span of its own")
		}
		done(code)
	}
	req.End()
	ended := rec.Ended()
	if len(ended) != 4 {
		t.Fatalf("recorded %d spans", len(ended))
	}
	for i, code := range []string{"ok", "not_accepted", "retry"} {
		s := ended[i]
		if s.Name() != "tool submit" || s.Parent().SpanID() != req.SpanContext().SpanID() {
			t.Errorf("span %d: %s under %v", i, s.Name(), s.Parent().SpanID())
		}
		failed := s.Status().Code == codes.Error
		if failed != (code == "retry") {
			t.Errorf("%s: span status %v", code, s.Status())
		}
	}
	fams := scrape(t, m.Handler())
	for _, code := range []string{"ok", "not_accepted", "retry"} {
		if s := sample(fams, "baton_tool_calls_total", map[string]string{"tool": "submit", "code": code}); s == nil || s.GetCounter().GetValue() != 1 {
			t.Errorf("submit %s: %v", code, s)
		}
	}

	// Without tracing the calls are still counted.
	_, done := telemetry.ToolCalls(m, nil)(context.Background(), "claim")
	done("ok")
	if s := sample(scrape(t, m.Handler()), "baton_tool_calls_total", map[string]string{"tool": "claim", "code": "ok"}); s == nil {
		t.Error("a call observed without tracing was not counted")
	}
}
