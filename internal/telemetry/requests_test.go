package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-run/baton/internal/telemetry"
)

// Every request gets a fresh id in its header and its context, and a log
// line written with that context names it; with tracing, the request's
// span continues the caller's traceparent and names the id.
func TestRequests(t *testing.T) {
	tr, rec := recorded(t)
	var buf bytes.Buffer
	log, err := telemetry.NewLogger(&buf, telemetry.LogJSON, nil)
	if err != nil {
		t.Fatal(err)
	}
	var seen string
	h := telemetry.Requests(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = telemetry.RequestID(r.Context())
		log.InfoContext(r.Context(), "handled", "path", r.URL.Path)
	}), tr)

	const caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	req.Header.Set("traceparent", caller)
	req.Header.Set(telemetry.HeaderRequestID, "mine")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)

	id := w.Header().Get(telemetry.HeaderRequestID)
	if id == "" || id == "mine" || id != seen {
		t.Fatalf("header %q, context %q", id, seen)
	}
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("log: %v\n%s", err, buf.String())
	}
	if line["request_id"] != id || line["msg"] != "handled" || line["trace_id"] != "4bf92f3577b34da6a3ce929d0e0e4736" || line["span_id"] == "" {
		t.Errorf("log line %v", line)
	}
	ended := rec.Ended()
	if len(ended) != 1 || ended[0].Name() != "POST /mcp" || ended[0].Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Fatalf("spans %v", ended)
	}
	if attr := requestAttr(ended[0].Attributes()); attr != id {
		t.Errorf("the span names request %q, want %s", attr, id)
	}

	w2 := httptest.NewRecorder()
	h.ServeHTTP(w2, httptest.NewRequest(http.MethodGet, "/inbox/runs/r_1234/items/w_1", nil))
	if w2.Header().Get(telemetry.HeaderRequestID) == id {
		t.Error("two requests got one id")
	}
	if ended := rec.Ended(); len(ended) != 2 || ended[1].Name() != "GET /inbox" {
		t.Errorf("the span of an inbox page is %q, want GET /inbox", ended[len(ended)-1].Name())
	}
}

// requestAttr is the baton.request_id attribute among kvs.
func requestAttr(kvs []attribute.KeyValue) string {
	for _, kv := range kvs {
		if kv.Key == "baton.request_id" {
			return kv.Value.AsString()
		}
	}
	return ""
}

// Without tracing there is still an id, and no span.
func TestRequestsWithoutTracing(t *testing.T) {
	h := telemetry.Requests(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if trace.SpanFromContext(r.Context()).SpanContext().IsValid() {
			t.Error("a span without tracing")
		}
		if telemetry.RequestID(r.Context()) == "" {
			t.Error("no request id")
		}
	}), nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if len(w.Header().Get(telemetry.HeaderRequestID)) < 16 {
		t.Errorf("request id %q", w.Header().Get(telemetry.HeaderRequestID))
	}
}

func TestNewLogger(t *testing.T) {
	var buf bytes.Buffer
	log, err := telemetry.NewLogger(&buf, telemetry.LogText, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := telemetry.WithRequestID(context.Background(), "r1")
	log.With("component", "gateway").InfoContext(ctx, "tool failed", "tool", "claim")
	log.Info("no request")
	got := buf.String()
	if !strings.Contains(got, `msg="tool failed" component=gateway tool=claim request_id=r1`) {
		t.Errorf("text line: %s", got)
	}
	if strings.Count(got, "request_id") != 1 {
		t.Errorf("a line outside a request names one:\n%s", got)
	}
	if _, err := telemetry.NewLogger(&buf, "xml", nil); err == nil {
		t.Error("log format xml accepted")
	}
}
