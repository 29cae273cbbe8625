package tests

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// Transport and identity: every request needs a bearer token; a refusal
// names the RFC 9728 metadata document, which the gateway serves.
func TestAuthOverHTTP(t *testing.T) {
	b := start(t, options{})
	post := func(token string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, b.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	other, _ := auth.NewDevIssuer([]byte(strings.Repeat("k", 32)))
	forged, _ := other.Issue(agentID, time.Hour)
	for name, tok := range map[string]string{"no token": "", "wrong key": forged, "garbage": "abc"} {
		resp := post(tok)
		want := `Bearer resource_metadata="` + b.url + `/.well-known/oauth-protected-resource"`
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want {
			t.Errorf("%s: %d %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if resp := post(b.token(agentID)); resp.StatusCode != http.StatusOK {
		t.Errorf("good token: %d", resp.StatusCode)
	}
	resp, err := http.Get(b.url + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if meta["resource"] != b.url+"/mcp" {
		t.Fatalf("metadata %v", meta)
	}

	// tools/list publishes every tool with its input schema.
	tools, err := b.connect(agentID).cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 14 {
		t.Fatalf("%d tools listed", len(tools.Tools))
	}
	for _, tool := range tools.Tools {
		if tool.InputSchema == nil {
			t.Errorf("%s has no input schema", tool.Name)
		}
	}

	// Roles: agents cannot cancel or decide; operators cannot start runs.
	b.publish(supplierSrc)
	mira := b.connect(personID("mira@example.com", "finance-approver"))
	v := startSupplier(t, b, mira)
	b.connect(agentID).refused("cancel", map[string]any{"runId": v.Run.ID, "reason": "x", "requestId": rid()}, interpreter.CodeForbidden)
	mira.refused("cancel", map[string]any{"runId": v.Run.ID, "reason": "x", "requestId": rid()}, interpreter.CodeForbidden)
	b.connect(operatorID).refused("start_run", map[string]any{"process": "supplier-onboarding", "requestId": rid(),
		"inputs": map[string]any{"vendorName": "A", "amount": 1}}, interpreter.CodeForbidden)
	b.connect(agentID).refused("get_run", map[string]any{"runId": "r_nope"}, interpreter.CodeNotFound)
}

// Arguments that break a tool's schema are invalid before anything else,
// with every issue.
func TestSchemaRefusals(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	agent.refused("claim", map[string]any{"runId": "r_1", "extra": true}, interpreter.CodeInvalid, "stepId: required", "requestId: required", "extra: not an argument of this tool")
	agent.refused("get_work", map[string]any{"limit": 0}, interpreter.CodeInvalid)
	agent.refused("submit", map[string]any{"token": "nope", "output": map[string]any{}, "summary": "s", "requestId": rid()}, interpreter.CodeInvalid, "token: does not verify")
	agent.refused("upload", map[string]any{"fileName": "a", "contentType": "text/plain", "contentBase64": "!!!", "requestId": rid()}, interpreter.CodeInvalid, "contentBase64: not base64")
}

// Replays (spec §4, SPEC-DECISIONS §4–6): the same requestId returns the
// original result, token included, even after the lease ended or the
// gateway restarted; other arguments or another identity is a conflict.
func TestReplays(t *testing.T) {
	b := start(t, options{lease: testLease})
	b.publish(supplierSrc)
	agent := b.connect(agentID)
	v := startSupplier(t, b, b.connect(personID("mira@example.com", "finance-approver")))
	claimID := rid()
	args := map[string]any{"runId": v.Run.ID, "stepId": "check_vendor", "requestId": claimID}
	var first, again interpreter.ClaimWire
	agent.ok("claim", args, &first)
	untilExpired(t, first.ExpiresAt)
	agent.ok("claim", args, &again)
	if again.Token != first.Token || again.ExpiresAt != first.ExpiresAt {
		t.Fatalf("replay after the lease ended gave another claim")
	}
	other := map[string]any{"runId": v.Run.ID, "stepId": "approve", "requestId": claimID}
	agent.refused("claim", other, interpreter.CodeConflict, interpreter.IssueRequestIDReused)
	b.connect(agent2ID).refused("claim", args, interpreter.CodeConflict, interpreter.IssueRequestIDReused)

	b.restartGateway()
	agent = b.connect(agentID)
	agent.ok("claim", args, &again)
	if again.Token != first.Token {
		t.Fatal("replay after a gateway restart gave another token")
	}
	// The old lease ended, so its token is stale now; a new claim works.
	agent.refused("submit", map[string]any{"token": first.Token, "output": map[string]any{}, "summary": "s", "requestId": rid()}, interpreter.CodeStale)
	var c interpreter.ClaimWire
	agent.ok("claim", map[string]any{"runId": v.Run.ID, "stepId": "check_vendor", "requestId": rid()}, &c)

	// A refused call is not recorded: the same requestId succeeds later.
	submitID := rid()
	file := upload(t, agent, "report")
	bad := map[string]any{"token": c.Token, "output": map[string]any{"cleared": "yes"}, "summary": "s", "requestId": submitID,
		"next": "decline", "reason": "hit", "evidence": []any{map[string]any{"kind": "file", "ref": file}}}
	agent.refused("submit", bad, interpreter.CodeNotAccepted, "output.cleared: expected boolean", "output.summary: missing")
	bad["output"] = map[string]any{"cleared": false, "summary": "Hit on the EU list."}
	var ended interpreter.View
	agent.ok("submit", bad, &ended)
	if ended.Run.State != "ended" || *ended.Run.Outcome != "declined" {
		t.Fatalf("after submit: %+v", ended.Run)
	}
	// After the run ended, the replay still answers; a new call is run_ended.
	agent.ok("submit", bad, &ended)
	agent.refused("claim", map[string]any{"runId": v.Run.ID, "stepId": "check_vendor", "requestId": rid()}, interpreter.CodeConflict, interpreter.IssueRunEnded)
}

// screenerClaimDigest is the digest the gateway gives a claim with args
// by the agent a_screener (SPEC-DECISIONS §5): its tool, caller and
// canonical arguments.
func screenerClaimDigest(t *testing.T, args map[string]any) string {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	h.Write([]byte("claim\x00agent\x00a_screener\x00"))
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil))
}

// A gateway that died after Temporal answered but before it recorded the
// answer gets the original result on retry: the requestId is the update id.
func TestRetryAfterLostAnswer(t *testing.T) {
	b := start(t, options{})
	b.publish(supplierSrc)
	agent := b.connect(agentID)
	v := startSupplier(t, b, b.connect(personID("mira@example.com", "finance-approver")))
	reqID := rid()
	args := map[string]any{"runId": v.Run.ID, "stepId": "check_vendor", "requestId": reqID}

	// What the gateway would have sent, sent straight to Temporal.
	digest := screenerClaimDigest(t, args)
	handle, err := b.temporal.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		UpdateID: reqID, WorkflowID: v.Run.ID, UpdateName: workflows.UpdateClaim, WaitForStage: client.WorkflowUpdateStageCompleted,
		Args: []any{workflows.Write{Digest: digest, Command: interpreter.Claim{StepID: "check_vendor", Actor: interpreter.Actor{ID: "a_screener", Kind: interpreter.ActorAgent}, LeaseID: reqID, Lease: 10 * time.Minute}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.Result
	if err := handle.Get(context.Background(), &res); err != nil {
		t.Fatal(err)
	}
	var lost interpreter.ClaimResult
	_ = json.Unmarshal(res.Value, &lost)

	// The retry through the gateway: the step is claimed, yet the retry gets
	// the original claim, not claimed_by_you.
	var c interpreter.ClaimWire
	agent.ok("claim", args, &c)
	if c.ExpiresAt != lost.ExpiresAt {
		t.Fatalf("retry got expiry %s, the lost answer had %s", c.ExpiresAt, lost.ExpiresAt)
	}
	file := upload(t, agent, "report")
	agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{"cleared": false, "summary": "Hit."},
		"evidence": []any{map[string]any{"kind": "file", "ref": file}},
		"summary":  "s", "next": "decline", "reason": "hit", "requestId": rid()}, nil)
}

// A write whose workflow task was lost (a worker or Temporal killed after
// the run recorded the answer) leaves a record of an answer the run never
// kept. A retry the run now refuses gets the refusal, not that answer, and
// the record no longer repeats it: the run kept every update id it
// answered, so it never answered this one. A replay of a write the run
// did answer still gets its first answer.
func TestRefusalOfALostWriteIsNotAnsweredFromItsRecord(t *testing.T) {
	b := start(t, options{})
	b.publish(supplierSrc)
	agent := b.connect(agentID)
	v := startSupplier(t, b, b.connect(personID("mira@example.com", "finance-approver")))
	ctx := context.Background()
	first := map[string]any{"runId": v.Run.ID, "stepId": "check_vendor", "requestId": rid()}
	var c interpreter.ClaimWire
	agent.ok("claim", first, &c)
	kept, err := b.store.GetRequest(ctx, "o_test", first["requestId"].(string))
	if err != nil || kept.Result == nil {
		t.Fatalf("no record of the claim: %+v %v", kept, err)
	}

	// The record a lost task would have left: the answer, under a requestId
	// the run never received.
	lostID := rid()
	lost := map[string]any{"runId": v.Run.ID, "stepId": "check_vendor", "requestId": lostID}
	rec := store.Request{Org: "o_test", RequestID: lostID, Tool: "claim", Digest: screenerClaimDigest(t, lost), Result: kept.Result, RunID: v.Run.ID}
	if err := b.store.RecordAnswer(ctx, nil, rec); err != nil {
		t.Fatal(err)
	}

	agent.refused("claim", lost, interpreter.CodeConflict, interpreter.IssueClaimedByYou)
	after, err := b.store.GetRequest(ctx, "o_test", lostID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Result != nil {
		t.Errorf("the record still holds the answer the run never kept: %s", after.Result)
	}
	agent.refused("claim", lost, interpreter.CodeConflict, interpreter.IssueClaimedByYou)

	// The write the run answered replays its first answer.
	var again interpreter.ClaimWire
	agent.ok("claim", first, &again)
	if again.Token != c.Token {
		t.Fatal("the replay of the claim the run answered gave another token")
	}
}

// The same once the run has ended and its workflow closed: the closed
// workflow, asked, says it never applied the write, so its record's answer
// (stored by a workflow task that was then lost) is dropped and the write
// is refused run_ended; a write the run did apply still replays.
func TestLostWriteToAnEndedRunIsNotAnsweredFromItsRecord(t *testing.T) {
	b := start(t, options{})
	b.publish(supplierSrc)
	agent := b.connect(agentID)
	ops := b.connect(operatorID)
	v := startSupplier(t, b, b.connect(personID("mira@example.com", "finance-approver")))
	ctx := context.Background()
	first := map[string]any{"runId": v.Run.ID, "stepId": "check_vendor", "requestId": rid()}
	var c interpreter.ClaimWire
	agent.ok("claim", first, &c)
	kept, err := b.store.GetRequest(ctx, "o_test", first["requestId"].(string))
	if err != nil || kept.Result == nil {
		t.Fatalf("no record of the claim: %+v %v", kept, err)
	}
	ops.ok("cancel", map[string]any{"runId": v.Run.ID, "reason": "Done with it.", "requestId": rid()}, &v)
	for deadline := time.Now().Add(time.Minute); ; {
		d, err := b.temporal.DescribeWorkflowExecution(ctx, v.Run.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if d.WorkflowExecutionInfo.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancelled run's workflow is still running after a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}

	lostID := rid()
	lost := map[string]any{"runId": v.Run.ID, "stepId": "check_vendor", "requestId": lostID}
	rec := store.Request{Org: "o_test", RequestID: lostID, Tool: "claim", Digest: screenerClaimDigest(t, lost), Result: kept.Result, RunID: v.Run.ID}
	if err := b.store.RecordAnswer(ctx, nil, rec); err != nil {
		t.Fatal(err)
	}

	agent.refused("claim", lost, interpreter.CodeConflict, interpreter.IssueRunEnded)
	if after, err := b.store.GetRequest(ctx, "o_test", lostID); err != nil || after.Result != nil {
		t.Errorf("the record still holds the answer the run never kept: %s (%v)", after.Result, err)
	}
	var again interpreter.ClaimWire
	agent.ok("claim", first, &again)
	if again.Token != c.Token {
		t.Fatal("the replay of the claim the ended run answered gave another token")
	}
}

// Concurrent calls with one requestId resolve to one execution.
func TestConcurrentSameRequestID(t *testing.T) {
	b := start(t, options{})
	b.publish(supplierSrc)
	mira := b.connect(personID("mira@example.com", "finance-approver"))
	reqID := rid()
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := mira.call("start_run", map[string]any{"process": "supplier-onboarding", "requestId": reqID,
				"inputs": map[string]any{"vendorName": "Acme", "amount": 1}})
			var v interpreter.View
			if r.OK && interpreter.DecodeExact(r.Data, &v) == nil {
				ids[i] = v.Run.ID
			}
		}(i)
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("run ids %v, want one run", ids)
		}
	}
	var runs struct{ Items []any }
	mira.ok("list_runs", map[string]any{}, &runs)
	if len(runs.Items) != 1 {
		t.Fatalf("%d runs started", len(runs.Items))
	}
}

// A run rejected into rework, escalated and returned, cancelled by an
// operator; an event held before its wait.
func TestReworkEscalationCancelAndEvents(t *testing.T) {
	b := start(t, options{})
	b.publish(supplierSrc)
	agent := b.connect(agentID)
	mira := b.connect(personID("mira@example.com", "finance-approver"))
	ops := b.connect(operatorID)
	v := startSupplier(t, b, mira)
	runID := v.Run.ID
	file := upload(t, agent, "report")
	submitArgs := func(token string) map[string]any {
		return map[string]any{"token": token, "requestId": rid(), "output": map[string]any{"cleared": true, "summary": "ok"},
			"evidence": []any{map[string]any{"kind": "file", "ref": file}}, "summary": "Checked.", "next": "approve", "reason": "Clear."}
	}
	var c interpreter.ClaimWire
	agent.ok("claim", map[string]any{"runId": runID, "stepId": "check_vendor", "requestId": rid()}, &c)
	agent.ok("submit", submitArgs(c.Token), &v)
	w := v.WorkItems[0]
	mira.ok("decide", map[string]any{"runId": runID, "workItemId": w.ID, "snapshot": w.Snapshot, "decision": "rejected",
		"note": "Check the parent company too.", "requestId": rid()}, &v)
	if *v.Steps[0].State != "ready" || v.Steps[1].State != nil || len(v.Data.Steps["check_vendor"].History) != 1 ||
		v.Data.Steps["approve"].Decision != "rejected" || *v.Data.Steps["approve"].Note != "Check the parent company too." {
		t.Fatalf("after rejection: %+v %+v", v.Steps, v.Data.Steps)
	}
	agent.ok("claim", map[string]any{"runId": runID, "stepId": "check_vendor", "requestId": rid()}, &c)
	if c.Handoff != nil {
		t.Fatalf("rework starts a fresh attempt, handoff %+v", c.Handoff)
	}
	agent.ok("escalate", map[string]any{"token": c.Token, "note": "The registry is down.", "requestId": rid()}, &v)
	var work workList
	ops.ok("get_work", map[string]any{}, &work)
	if len(work.Items) != 1 || work.Items[0].WorkItem.Escalation == nil {
		t.Fatalf("operator inbox %+v", work)
	}
	w2 := work.Items[0].WorkItem
	ops.ok("decide", map[string]any{"runId": runID, "workItemId": w2.ID, "snapshot": w2.Snapshot, "decision": "returned",
		"note": "Use the mirror.", "requestId": rid()}, &v)
	agent.ok("claim", map[string]any{"runId": runID, "stepId": "check_vendor", "requestId": rid()}, &c)
	if c.Handoff == nil || c.Handoff.Returned == nil || c.Handoff.Returned.Note != "Use the mirror." {
		t.Fatalf("handoff after return %+v", c.Handoff)
	}
	ops.ok("cancel", map[string]any{"runId": runID, "reason": "Vendor withdrew.", "requestId": rid()}, &v)
	if v.Run.State != "cancelled" || v.Run.Ended.By != "u_ops" || *v.Run.Ended.Note != "Vendor withdrew." {
		t.Fatalf("cancelled %+v", v.Run)
	}
	desc, err := b.temporal.DescribeWorkflowExecution(context.Background(), runID, "")
	if err != nil {
		t.Fatal(err)
	}
	if s := desc.WorkflowExecutionInfo.Status.String(); s != "Canceled" {
		t.Fatalf("Temporal status %s", s)
	}
	agent.refused("send_event", map[string]any{"runId": runID, "name": "x", "requestId": rid()}, interpreter.CodeConflict, interpreter.IssueRunEnded)

	b.publish(`---
name: settle
description: Wait for a settlement.
steps:
  - id: work
    agent: Do the work.
  - id: settled
    wait_for: paid
    next: done
  - id: done
    finish: ok
---
`)
	agent.ok("start_run", map[string]any{"process": "settle", "inputs": map[string]any{}, "requestId": rid()}, &v)
	var ev struct {
		ConsumedBy *string `json:"consumedBy"`
	}
	ops.ok("send_event", map[string]any{"runId": v.Run.ID, "name": "paid", "data": map[string]any{"ref": "INV-1"}, "requestId": rid()}, &ev)
	if ev.ConsumedBy != nil {
		t.Fatalf("event consumed early by %s", *ev.ConsumedBy)
	}
	agent.ok("claim", map[string]any{"runId": v.Run.ID, "stepId": "work", "requestId": rid()}, &c)
	agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{}, "summary": "Done.", "requestId": rid()}, &v)
	if v.Run.State != "ended" || v.Data.Steps["settled"].Output["ref"] != "INV-1" || v.Data.Steps["settled"].By != "u_ops" {
		t.Fatalf("held event not consumed: %+v", v.Data.Steps["settled"])
	}
}

// An ended run is read from the read model: get_run answers even when
// Temporal no longer has the workflow (retention) or cannot be reached.
func TestEndedRunOutlivesTemporal(t *testing.T) {
	b := start(t, options{})
	b.publish(supplierSrc)
	ops := b.connect(operatorID)
	v := startSupplier(t, b, b.connect(personID("mira@example.com", "finance-approver")))
	ops.ok("cancel", map[string]any{"runId": v.Run.ID, "reason": "Duplicate.", "requestId": rid()}, nil)
	// A gateway whose Temporal is unreachable still reads the ended run.
	dead, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	b.temporal = dead
	b.restartGateway()
	ops = b.connect(operatorID)
	var got interpreter.View
	ops.ok("get_run", map[string]any{"runId": v.Run.ID}, &got)
	if got.Run.State != "cancelled" || *got.Run.Ended.Note != "Duplicate." {
		t.Fatalf("get_run after deletion: %+v", got.Run)
	}
}

// §6 rule 2, as Baton rules it: a live claim belongs to the agent that made
// it; another agent holding its token is forbidden to submit, renew or
// escalate with it.
func TestStolenTokenIsForbidden(t *testing.T) {
	b := start(t, options{})
	b.publish(supplierSrc)
	v := startSupplier(t, b, b.connect(personID("mira@example.com", "finance-approver")))
	var c interpreter.ClaimWire
	b.connect(agentID).ok("claim", map[string]any{"runId": v.Run.ID, "stepId": "check_vendor", "requestId": rid()}, &c)
	thief := b.connect(agent2ID)
	thief.refused("submit", map[string]any{"token": c.Token, "output": map[string]any{"cleared": false, "summary": "x"},
		"summary": "s", "next": "decline", "reason": "r", "requestId": rid()}, interpreter.CodeForbidden)
	thief.refused("renew", map[string]any{"token": c.Token, "requestId": rid()}, interpreter.CodeForbidden)
	thief.refused("escalate", map[string]any{"token": c.Token, "note": "n", "requestId": rid()}, interpreter.CodeForbidden)
	b.connect(agentID).ok("renew", map[string]any{"token": c.Token, "requestId": rid()}, nil)
}

// Replays come before every other check (SPEC-DECISIONS §4): a start_run
// replayed after a new version added a required input still answers with
// the run it started.
func TestStartRunReplayAfterNewVersion(t *testing.T) {
	b := start(t, options{})
	b.publish(supplierSrc)
	mira := b.connect(personID("mira@example.com", "finance-approver"))
	args := map[string]any{"process": "supplier-onboarding", "requestId": rid(),
		"inputs": map[string]any{"vendorName": "Acme", "amount": 1}}
	var first, again interpreter.View
	mira.ok("start_run", args, &first)
	b.publish(strings.Replace(supplierSrc, "  vendorName: string\n", "  vendorName: string\n  country: string\n", 1))
	mira.ok("start_run", args, &again)
	if again.Run.ID != first.Run.ID || again.Run.Version != 1 {
		t.Fatalf("replay gave run %s v%d, want %s v1", again.Run.ID, again.Run.Version, first.Run.ID)
	}
	args["requestId"] = rid()
	mira.refused("start_run", args, interpreter.CodeInvalid, "inputs.country: missing")
}

// A start_run whose update Temporal lost after it started the run's
// workflow (it keeps an update in memory until a workflow task accepts
// it), the run ending without it, answers the start's view at once, not
// retry once the call wait runs out; and so does its replay.
func TestStartRunWhoseUpdateWasLost(t *testing.T) {
	const src = "---\nname: ends-at-once\ndescription: Ends where it starts.\nsteps:\n  - id: done\n    finish: done\n---\nBody.\n"
	// The first try of the first update-with-start starts the workflow
	// alone, with the very start request, waits for the run to end, and
	// fails as a try cut on its way back would: the SDK sends it again.
	var b *baton
	var cut atomic.Bool
	lose := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		multi, ok := req.(*workflowservice.ExecuteMultiOperationRequest)
		if !ok || method != workflowservice.WorkflowService_ExecuteMultiOperation_FullMethodName || !cut.CompareAndSwap(false, true) {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		startReq := multi.GetOperations()[0].GetStartWorkflow()
		if _, err := b.temporal.WorkflowService().StartWorkflowExecution(ctx, startReq); err != nil {
			return err
		}
		if err := b.temporal.GetWorkflow(ctx, startReq.GetWorkflowId(), "").Get(ctx, nil); err != nil {
			return err
		}
		return status.Error(codes.Unavailable, "the try was cut")
	}
	b = start(t, options{dial: []grpc.DialOption{grpc.WithChainUnaryInterceptor(lose)}})
	b.publish(src)
	mira := b.connect(personID("mira@example.com"))
	args := map[string]any{"process": "ends-at-once", "requestId": rid(), "inputs": map[string]any{}}
	var first, again interpreter.View
	begin := time.Now()
	mira.ok("start_run", args, &first)
	if took := time.Since(begin); took > 10*time.Second || !cut.Load() {
		t.Fatalf("start_run answered after %v; its first try cut: %v", took, cut.Load())
	}
	if first.Run.State != "ended" || first.Body != "Body.\n" {
		t.Fatalf("start_run answered a run %s with body %q", first.Run.State, first.Body)
	}
	mira.ok("start_run", args, &again)
	if !reflect.DeepEqual(again, first) {
		t.Fatalf("replay answered %+v, first %+v", again, first)
	}
	args["mode"] = "test"
	mira.refused("start_run", args, interpreter.CodeConflict, interpreter.IssueRequestIDReused)
}

// Answers are recorded as the run gave them, before anything is added on
// the way out: a replay signs its claim token and file links afresh, so a
// link in a replayed answer works after the first answer's links expired.
func TestReplaysRenderFreshLinksAndTokens(t *testing.T) {
	b := start(t, options{fileURLTTL: 5 * time.Second})
	b.publish(supplierSrc)
	agent := b.connect(agentID)
	v := startSupplier(t, b, b.connect(personID("mira@example.com", "finance-approver")))
	claimArgs := map[string]any{"runId": v.Run.ID, "stepId": "check_vendor", "requestId": rid()}
	var c interpreter.ClaimWire
	agent.ok("claim", claimArgs, &c)
	file := upload(t, agent, "the screening report")
	submitArgs := map[string]any{
		"token": c.Token, "requestId": rid(), "summary": "Screened.", "next": "approve", "reason": "Cleared.",
		"output":   map[string]any{"cleared": true, "summary": "No hits."},
		"evidence": []any{map[string]any{"kind": "file", "ref": file}},
	}
	agent.ok("submit", submitArgs, &v)

	for _, reqID := range []any{claimArgs["requestId"], submitArgs["requestId"]} {
		rec, err := b.store.GetRequest(context.Background(), "o_test", reqID.(string))
		if err != nil {
			t.Fatalf("record of %s: %v", reqID, err)
		}
		if bytes.Contains(rec.Result, []byte(`"token"`)) || bytes.Contains(rec.Result, []byte(`"url"`)) {
			t.Fatalf("the record of a %s holds what is added on the way out: %s", rec.Tool, rec.Result)
		}
	}

	// Once the first answer's link has expired, the replay's works.
	first := v.Data.Steps["check_vendor"].Evidence[0].URL
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(first)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first answer's file link still works a minute after its 5s expired")
		}
	}
	var again interpreter.View
	agent.ok("submit", submitArgs, &again)
	link := again.Data.Steps["check_vendor"].Evidence[0].URL
	if link == "" || link == v.Data.Steps["check_vendor"].Evidence[0].URL {
		t.Fatalf("the replay's file link %q is not a fresh one", link)
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "the screening report" {
		t.Fatalf("the replay's file link answered %s: %q", resp.Status, body)
	}
	var c2 interpreter.ClaimWire
	agent.ok("claim", claimArgs, &c2)
	if c2.Token != c.Token {
		t.Fatal("a claim replay signed another token")
	}
}

// A requestId is the organization's, not a run's: used again for a write
// to another run it is a conflict, and that run is left as it was.
func TestRequestIDAcrossRuns(t *testing.T) {
	b := start(t, options{})
	b.publish(supplierSrc)
	agent := b.connect(agentID)
	mira := b.connect(personID("mira@example.com", "finance-approver"))
	one, two := startSupplier(t, b, mira), startSupplier(t, b, mira)
	reqID := rid()
	agent.ok("claim", map[string]any{"runId": one.Run.ID, "stepId": "check_vendor", "requestId": reqID}, nil)
	agent.refused("claim", map[string]any{"runId": two.Run.ID, "stepId": "check_vendor", "requestId": reqID}, interpreter.CodeConflict, interpreter.IssueRequestIDReused)
	var v interpreter.View
	agent.ok("get_run", map[string]any{"runId": two.Run.ID}, &v)
	if v.Steps[0].State == nil || *v.Steps[0].State != "ready" {
		t.Fatalf("the other run's step is %v after the refused claim", v.Steps[0].State)
	}
}
