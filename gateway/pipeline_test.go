package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/testing/spectest"
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

// A call whose Temporal does not answer (a server that takes calls and
// never replies, as an overloaded or partitioned one does) answers retry
// once Options.CallWait is up, rather than hanging for as long as the
// caller and the connection last. The write it started may still apply,
// so its requestId stays with its arguments: sent again with them it runs
// again; with others it is request_id_reused.
func TestCallWaitAnswersRetry(t *testing.T) {
	t.Parallel()
	b := setupWithTemporal(t, &Options{CallWait: 300 * time.Millisecond}, blackHole(t))
	reg := NewRegistry(b.store, "o_test", b.g.Offer())
	if _, _, err := reg.ImportAndPublish(b.ctx, filepath.Join(spectest.SharedDir(t), "conformance", "fixtures", "invoice-approval"), "u_admin", nil); err != nil {
		t.Fatal(err)
	}
	mira := auth.Identity{ID: "mira@example.com", Kind: auth.KindPerson}
	start := func(invoice string) error {
		args := `{"process":"invoice-approval","requestId":"req-wait","inputs":{"invoiceId":"` + invoice +
			`","invoiceDocument":"https://example.com/inv.pdf","manager":"mira@example.com"}}`
		answered := make(chan error, 1)
		go func() {
			_, err := b.g.Call(b.ctx, mira, "start_run", json.RawMessage(args))
			answered <- err
		}()
		select {
		case err := <-answered:
			return err
		case <-time.After(30 * time.Second):
			t.Fatalf("start_run of %s with Temporal not answering did not answer within 30s", invoice)
			return nil
		}
	}
	for try := 1; try <= 2; try++ {
		if err := start("INV-1"); resultCode(err) != string(interpreter.CodeRetry) {
			t.Fatalf("try %d: start_run with Temporal not answering answered %v, want retry", try, err)
		}
	}
	var e *interpreter.Error
	if err := start("INV-2"); !errors.As(err, &e) || e.Code != interpreter.CodeConflict || len(e.Issues) != 1 || e.Issues[0] != interpreter.IssueRequestIDReused {
		t.Fatalf("the requestId with other arguments after a retry: %v, want conflict %s", err, interpreter.IssueRequestIDReused)
	}
}

// blackHole serves gRPC on a loopback port and never answers a call but
// GetSystemInfo, so that clients connect; it returns the address.
func blackHole(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		if method, _ := grpc.MethodFromServerStream(stream); strings.HasSuffix(method, "/GetSystemInfo") {
			if err := stream.RecvMsg(&workflowservice.GetSystemInfoRequest{}); err != nil {
				return err
			}
			return stream.SendMsg(&workflowservice.GetSystemInfoResponse{})
		}
		<-stream.Context().Done()
		return stream.Context().Err()
	}))
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}
