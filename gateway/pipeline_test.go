package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/baton-run/baton/interpreter"
)

// A tool that panics is the server failing, not a crash: the caller gets
// retry, the panic and its stack go to the log, and the next call is
// served as before.
func TestPipelineAnswersAPanicAsRetry(t *testing.T) {
	t.Parallel()
	log := &panicLog{}
	b := setup(t, &Options{Logger: slog.New(log)})
	broken := *b.g.tools["describe"]
	broken.read = func(*Gateway, context.Context, *call) (any, error) { panic("the tool broke") }
	healthy := b.g.tools["describe"]
	b.g.tools["describe"] = &broken

	_, err := b.g.Call(b.ctx, testAgent, "describe", json.RawMessage(`{}`))
	var e *interpreter.Error
	if !errors.As(err, &e) || e.Code != interpreter.CodeRetry {
		t.Fatalf("a panicking tool answered %v, want retry", err)
	}
	if p := log.reset(); !strings.Contains(p, "the tool broke") || !strings.Contains(p, "stack=") {
		t.Errorf("the log kept %q, want the panic and its stack", p)
	}

	b.g.tools["describe"] = healthy
	if _, err := b.g.Call(b.ctx, testAgent, "describe", json.RawMessage(`{}`)); err != nil {
		t.Fatalf("describe after the panic: %v", err)
	}
}

// An id a caller sent is echoed in a refusal at most 80 bytes long, so a
// megabyte of runId costs a megabyte once, not in every answer and log line.
func TestRefusalsEchoIDsShortly(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	long := "r_" + strings.Repeat("é", 50_000)
	_, err := b.g.Call(b.ctx, testAgent, "get_run", json.RawMessage(`{"runId":"`+long+`"}`))
	var e *interpreter.Error
	if !errors.As(err, &e) || e.Code != interpreter.CodeNotFound {
		t.Fatalf("get_run of an unknown long id: %v, want not_found", err)
	}
	if len(e.Message) > 160 || !strings.Contains(e.Message, "…") {
		t.Errorf("the refusal is %d bytes: %.200q", len(e.Message), e.Message)
	}
	if !strings.HasPrefix(e.Message, `No run "r_é`) || !utf8.ValidString(e.Message) {
		t.Errorf("the refusal cut the id badly: %q", e.Message)
	}
}
