package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-run/baton/internal/telemetry"
	"github.com/baton-run/baton/interpreter"
)

// startTraced starts a Baton whose spans end in the recorder it returns.
func startTraced(t testing.TB) (*baton, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tr, err := telemetry.NewTracing(context.Background(), &telemetry.TracingOptions{Processor: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return start(t, options{tracing: tr}), rec
}

// One tool call is one trace: the request's span, the tool's span under
// it, the Temporal update under that (the client's call, the workflow's
// validator and handler), and the read-model write the handler waits for.
func TestOneToolCallIsOneTrace(t *testing.T) {
	b, rec := startTraced(t)
	b.publish(supplierSrc)
	agent := b.connect(agentID)
	mira := b.connect(personID("mira@example.com", "finance-approver"))
	v := startSupplier(t, b, mira)
	var c interpreter.ClaimWire
	agent.ok("claim", map[string]any{"runId": v.Run.ID, "stepId": "check_vendor", "requestId": rid()}, &c)

	// The tool's span names the trace; the spans of the request's end
	// are recorded as they end, so wait for the whole chain.
	want := []string{"POST /mcp", "tool claim", "UpdateWorkflow:claim", "HandleUpdate:claim", "StartActivity:PublishRun", "RunActivity:PublishRun", "read model write"}
	var spans map[string]sdktrace.ReadOnlySpan
	var all []sdktrace.ReadOnlySpan
	deadline := time.Now().Add(time.Minute)
	for {
		all = rec.Ended()
		spans = traceOf(all, "tool claim")
		if hasAll(spans, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !hasAll(spans, want) {
		t.Fatalf("the claim's trace has spans %v, want %v", names(spans), want)
	}
	// Each span of the chain descends from the one before it.
	for i := 1; i < len(want); i++ {
		if !descends(spans, spans[want[i]], spans[want[i-1]]) {
			t.Errorf("%q does not descend from %q; trace:\n%s", want[i], want[i-1], tree(spans))
		}
	}
	if v := spans["ValidateUpdate:claim"]; v == nil || !descends(spans, v, spans["UpdateWorkflow:claim"]) {
		t.Errorf("the update's validator is not in the trace under the client's update; trace:\n%s", tree(spans))
	}
	root := spans["POST /mcp"]
	if root.Parent().IsValid() {
		t.Errorf("the request's span has a parent %v; it should start the trace", root.Parent())
	}
	if got := attr(spans["tool claim"], "baton.code"); got != "ok" {
		t.Errorf("the tool's span says code %q, want ok", got)
	}
	if got := attr(spans["read model write"], "baton.run_id"); got != v.Run.ID {
		t.Errorf("the read-model write's span names run %q, want %s", got, v.Run.ID)
	}
	if got := attr(root, "baton.request_id"); got == "" {
		t.Error("the request's span names no request id")
	}
	// The start_run before it is a trace of its own.
	if st := traceOf(all, "tool start_run"); st["tool start_run"] == nil || st["tool claim"] != nil {
		t.Errorf("start_run's trace: %v", names(st))
	}
}

// traceOf returns the spans of the trace that holds the span named name,
// by name (the first of each name).
func traceOf(all []sdktrace.ReadOnlySpan, name string) map[string]sdktrace.ReadOnlySpan {
	var id trace.TraceID
	for _, s := range all {
		if s.Name() == name {
			id = s.SpanContext().TraceID()
		}
	}
	out := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range all {
		if id.IsValid() && s.SpanContext().TraceID() == id && out[s.Name()] == nil {
			out[s.Name()] = s
		}
	}
	return out
}

func hasAll(spans map[string]sdktrace.ReadOnlySpan, want []string) bool {
	for _, n := range want {
		if spans[n] == nil {
			return false
		}
	}
	return true
}

func names(spans map[string]sdktrace.ReadOnlySpan) []string {
	var out []string
	for n := range spans {
		out = append(out, n)
	}
	return out
}

// descends reports whether span s has ancestor a within spans.
func descends(spans map[string]sdktrace.ReadOnlySpan, s, a sdktrace.ReadOnlySpan) bool {
	if s == nil || a == nil {
		return false
	}
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, x := range spans {
		byID[x.SpanContext().SpanID()] = x
	}
	for p := s.Parent().SpanID(); p.IsValid(); {
		if p == a.SpanContext().SpanID() {
			return true
		}
		up := byID[p]
		if up == nil {
			return false
		}
		p = up.Parent().SpanID()
	}
	return false
}

// tree prints spans as name <- parent name, for failure messages.
func tree(spans map[string]sdktrace.ReadOnlySpan) string {
	byID := map[trace.SpanID]string{}
	for n, s := range spans {
		byID[s.SpanContext().SpanID()] = n
	}
	var b strings.Builder
	for n, s := range spans {
		b.WriteString("  " + n + " <- " + byID[s.Parent().SpanID()] + "\n")
	}
	return b.String()
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	if s == nil {
		return ""
	}
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// lines is an io.Writer that keeps what a logger wrote, safe for the
// gateway's goroutines.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// records decodes every line written as a JSON object.
func (l *lines) records(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(l.buf.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a log line is not JSON: %v\n%s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// Every request has an id, in its X-Request-Id header and in every JSON log
// line written while it is served; two requests have two ids.
func TestLogLinesNameTheirRequest(t *testing.T) {
	out := &lines{}
	log, err := telemetry.NewLogger(out, telemetry.LogJSON, &slog.HandlerOptions{Level: slog.LevelDebug})
	if err != nil {
		t.Fatal(err)
	}
	b := start(t, options{logger: log})

	refused := func() string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, b.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer not-a-token")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-Id", "chosen-by-the-caller")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a bad token got %s", resp.Status)
		}
		id := resp.Header.Get(telemetry.HeaderRequestID)
		if id == "" || id == "chosen-by-the-caller" {
			t.Fatalf("X-Request-Id = %q, want an id of the server's own", id)
		}
		return id
	}
	first, second := refused(), refused()
	if first == second {
		t.Fatalf("two requests share the id %s", first)
	}
	seen := map[string]bool{}
	for _, r := range out.records(t) {
		if r["msg"] != "bearer token refused" {
			continue
		}
		id, _ := r["request_id"].(string)
		seen[id] = true
		if r["level"] != "INFO" || r["reason"] == nil {
			t.Errorf("log line %v", r)
		}
	}
	if !seen[first] || !seen[second] || len(seen) != 2 {
		t.Fatalf("the refusals were logged with request ids %v, want %s and %s", seen, first, second)
	}

	// A tool call answered over MCP carries an id too.
	agent := b.connect(agentID)
	agent.ok("describe", nil, nil)
	resp, err := http.Get(b.url + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get(telemetry.HeaderRequestID) == "" {
		t.Error("the metadata document's answer has no X-Request-Id")
	}
}
