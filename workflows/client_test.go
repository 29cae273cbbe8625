package workflows_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/drivetest"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// startInput is a start of p under requestID, its digest digest.
func startInput(p *interpreter.Process, inputs interpreter.Values, requestID, digest string) workflows.Input {
	return workflows.Input{Org: org, RequestID: requestID, Digest: digest, Start: interpreter.Start{
		Process: p, Version: 1, Inputs: inputs, Starter: starter}}
}

// startCtx bounds a start, so that a start that would wait for the
// gateway's whole call wait fails the test instead.
func startCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// promptly is how long a retried start may take in these tests: the first
// start took milliseconds.
const promptly = 10 * time.Second

// isReused says whether err is the refusal of a requestId reused with
// other arguments.
func isReused(err error) bool {
	var e *interpreter.Error
	return errors.As(err, &e) && e.Code == interpreter.CodeConflict && slices.Contains(e.Issues, interpreter.IssueRequestIDReused)
}

// retryStart retries in's start and checks that it answers want, promptly,
// and that the same requestId with another digest is request_id_reused.
func retryStart(t *testing.T, runs *workflows.Client, in workflows.Input, want json.RawMessage) {
	t.Helper()
	begin := time.Now()
	again, err := runs.StartRun(startCtx(t), in)
	if err != nil {
		t.Fatalf("retried start after %v: %v", time.Since(begin), err)
	}
	if took := time.Since(begin); took > promptly {
		t.Fatalf("retried start answered after %v", took)
	}
	if !bytes.Equal(again, want) {
		t.Fatalf("retried start answered\n%s\nwant\n%s", again, want)
	}
	other := in
	other.Digest = in.Digest + "-other"
	if _, err := runs.StartRun(startCtx(t), other); !isReused(err) {
		t.Fatalf("the same requestId with another digest: %v, want conflict request_id_reused", err)
	}
}

// A start retried after its run ended answers as the first did.
func TestStartRetriedAfterTheRunEnded(t *testing.T) {
	h := setup(t)
	p, err := interpreter.Parse([]byte(workflows.EndsAtOnceSrc), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := startInput(p, interpreter.Values{"item": "a"}, "req-"+randomHex(8), "d1")
	first, err := h.runs.StartRun(startCtx(t), in)
	if err != nil {
		t.Fatal(err)
	}
	spectest.Validate(t, "run-view.json", first)
	if v := decodeView(t, first); interpreter.RunState(v.Run.State) != interpreter.RunEnded {
		t.Fatalf("run %s, want ended", v.Run.State)
	}
	retryStart(t, h.runs, in, first)
}

// A start retried while its run runs answers as the first did.
func TestStartRetriedWhileTheRunRuns(t *testing.T) {
	h := setup(t)
	p := drivetest.Fixture(t, "invoice-approval")
	in := startInput(p, interpreter.Samples(p.Inputs), "req-"+randomHex(8), "d1")
	first, err := h.runs.StartRun(startCtx(t), in)
	if err != nil {
		t.Fatal(err)
	}
	if v := decodeView(t, first); interpreter.RunState(v.Run.State).Over() {
		t.Fatalf("run %s, want one that runs", v.Run.State)
	}
	retryStart(t, h.runs, in, first)
}

// A start whose first try made the run but lost its update, Temporal
// keeping an update only in memory until a workflow task accepts it, and
// whose run then ended without it: the SDK's retry of that try hears
// "Workflow was not started: StartDeduped" until its context ends, and a
// new start hears that the workflow exists. Both answer the start's answer
// the run kept, the one it recorded in the read model.
func TestStartWhoseUpdateWasLost(t *testing.T) {
	h := setup(t)
	p, err := interpreter.Parse([]byte(workflows.EndsAtOnceSrc), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := startInput(p, interpreter.Values{"item": "a"}, "req-"+randomHex(8), "d1")
	runID := workflows.RunID(org, in.RequestID)

	// The first try of the update-with-start starts the workflow alone,
	// with the very start request, waits for the run to end, and fails
	// as a try cut on its way back would: the SDK sends it again.
	var cut atomic.Bool
	lose := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		multi, ok := req.(*workflowservice.ExecuteMultiOperationRequest)
		if !ok || method != workflowservice.WorkflowService_ExecuteMultiOperation_FullMethodName || !cut.CompareAndSwap(false, true) {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		if _, err := h.c.WorkflowService().StartWorkflowExecution(ctx, multi.GetOperations()[0].GetStartWorkflow()); err != nil {
			return err
		}
		if err := h.c.GetWorkflow(ctx, runID, "").Get(ctx, nil); err != nil {
			return err
		}
		return status.Error(codes.Unavailable, "the try was cut")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := dev.srv.NewClient(ctx, client.Options{Identity: identity, DataConverter: workflows.DataConverter,
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(lose)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runs, err := workflows.NewClient(c, &workflows.ClientOptions{TaskQueue: h.queue})
	if err != nil {
		t.Fatal(err)
	}

	begin := time.Now()
	first, err := runs.StartRun(startCtx(t), in)
	if err != nil {
		t.Fatalf("start whose update was lost, after %v: %v", time.Since(begin), err)
	}
	if took := time.Since(begin); took > promptly {
		t.Fatalf("start whose update was lost answered after %v", took)
	}
	if !cut.Load() {
		t.Fatal("the start's first try was not cut")
	}
	if evs := updateEvents(h.history(t, runID, ""), in.RequestID); len(evs) != 0 {
		t.Fatalf("the lost update has events %v", evs)
	}
	if st, _ := h.describe(t, runID, ""); st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("workflow %v, want completed", st)
	}
	spectest.Validate(t, "run-view.json", first)
	rec, err := h.store.Recall(ctxFor(t), store.Recall{Request: store.Request{Org: org, RequestID: in.RequestID,
		Tool: workflows.ToolOf(workflows.UpdateStart), Digest: in.Digest}, RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Said != store.SaidSame || !bytes.Equal(rec.Answer, first) {
		t.Fatalf("the start answered\n%s\nthe record says %v\n%s", first, rec.Said, rec.Answer)
	}
	retryStart(t, h.runs, in, first)
}
