package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/baton-run/baton/interpreter"
)

// bodySrc is a process whose body is easy to find in bytes, and which
// JSON encodes with escapes: quotes, <, > and &, a line break, non-ASCII.
const bodySrc = `---
name: body-kept-once
description: One agent step and one approval.
steps:
  - id: work
    agent: Do the work.
    output: { done: boolean }
  - id: check
    person: reviewers
    approve: Check the work.
    next: done
  - id: done
    finish: ok
---

# Kept once

The body-marker-7f3a of this process: <b>"bold"</b> & Ünïcödé.
`

const bodyMarker = "body-marker-7f3a"

// A run's body is its pinned version's and never changes, yet it was in
// every write's answer: in the update's history event and in the
// requestId's record, so a run of a 256 KiB process kept 256 KiB more of
// both per write. The runs now answer the gateway without it and the
// gateway adds it back from the published version: every answer has the
// body, the first time and replayed (from the run, and from the record
// once the run has ended), and so does get_run, of the run going on (a
// query that asks for the view without the body) and ended, while
// the run's history holds the body only in its start, and neither the
// records nor the ended run's view in the read model hold it.
func TestAnswersHaveTheBodyTheHistoryDoesNotRepeat(t *testing.T) {
	t.Parallel()
	b := start(t, options{})
	starter := b.connect(personID("starter@example.com"))
	agent := b.connect(agentID)
	rita := b.connect(personID("rita@example.com", "reviewers"))
	want := parseFor(t, []byte(bodySrc)).Body
	if !strings.Contains(want, bodyMarker) {
		t.Fatalf("the body %q lost its marker", want)
	}
	hasBody := func(what, got string) {
		t.Helper()
		if got != want {
			t.Errorf("%s: body %q, want %q", what, got, want)
		}
	}

	startArgs := map[string]any{"process": b.publish(bodySrc).Name, "inputs": map[string]any{}, "requestId": rid()}
	var v view
	starter.ok("start_run", startArgs, &v)
	hasBody("start_run", v.Body)
	runID := v.Run.ID
	hasBody("get_run of the run going on", getRun(starter, runID).Body)

	claimArgs := map[string]any{"runId": runID, "stepId": "work", "requestId": rid()}
	var c interpreter.ClaimWire
	agent.ok("claim", claimArgs, &c)
	hasBody("claim", c.Body)
	var again interpreter.ClaimWire
	agent.ok("claim", claimArgs, &again)
	hasBody("claim replayed", again.Body)

	submitArgs := map[string]any{"token": c.Token, "output": map[string]any{"done": true}, "summary": "Done.", "requestId": rid()}
	agent.ok("submit", submitArgs, &v)
	hasBody("submit", v.Body)
	agent.ok("submit", submitArgs, &v)
	hasBody("submit replayed", v.Body)

	w := itemFor(v, "check")
	if w == nil {
		t.Fatalf("no approval after the submission: %s", v.StepStates())
	}
	decide := decideArgs(v, w, "approved", nil)
	rita.ok("decide", decide, &v)
	hasBody("decide", v.Body)
	if v.Run.State != "ended" {
		t.Fatalf("the run is %s after the approval", v.Run.State)
	}
	// The run's workflow has closed: an ended run's start is answered
	// from its record, which keeps the answer as given.
	rita.ok("decide", decide, &v)
	hasBody("decide replayed after the run ended", v.Body)
	starter.ok("start_run", startArgs, &v)
	hasBody("start_run replayed from its record", v.Body)
	// A record stored as jsonb, before answers were kept as given, reads
	// back spaced, its keys in jsonb's order, as migration 013 left it.
	// (An ended run's start is answered from its record alone.)
	tag, err := b.store.Pool().Exec(context.Background(),
		`UPDATE requests SET result = result::jsonb::json WHERE request_id = $1`, startArgs["requestId"])
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("the start's record as jsonb kept it: %v, %v", tag, err)
	}
	starter.ok("start_run", startArgs, &v)
	hasBody("start_run replayed from its record as jsonb kept it", v.Body)
	hasBody("get_run", getRun(starter, runID).Body)

	// The history has the body once, in the start's input.
	ctx := context.Background()
	it := b.temporal.GetWorkflowHistory(ctx, runID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	updates, withBody := 0, []string{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(e.Attributes)
		if err != nil {
			t.Fatal(err)
		}
		if e.EventType == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED {
			updates++
			payload := e.GetWorkflowExecutionUpdateCompletedEventAttributes().GetOutcome().GetSuccess().GetPayloads()[0].GetData()
			if bytes.Contains(payload, []byte(bodyMarker)) {
				withBody = append(withBody, e.EventType.String())
			}
			continue
		}
		// Payloads marshal as base64: decode none, look in the one place
		// the body belongs.
		if e.EventType == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED {
			if !bytes.Contains(e.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0].GetData(), []byte(bodyMarker)) {
				t.Errorf("the start's input has no body: %s", raw)
			}
		}
	}
	if updates != 4 || len(withBody) != 0 {
		t.Errorf("%d answers in the history, %d of them with the body; want 4 answers, none with it", updates, len(withBody))
	}
	// Nor does the ended run's view in the read model, which get_run
	// answered above.
	final, err := b.store.FinalView(ctx, b.opts.Org, runID)
	if err != nil || final == nil || bytes.Contains(final, []byte(bodyMarker)) {
		t.Errorf("the final view: %s, %v; want one without the body", final, err)
	}
	// Nor do the records of the answers.
	for _, id := range []any{startArgs["requestId"], claimArgs["requestId"], submitArgs["requestId"], decide["requestId"]} {
		r, err := b.store.GetRequest(ctx, b.opts.Org, id.(string))
		if err != nil {
			t.Fatalf("record of %s: %v", id, err)
		}
		if r.Result == nil || bytes.Contains(r.Result, []byte(bodyMarker)) {
			t.Errorf("record of %s (%s): %s; want an answer without the body", id, r.Tool, r.Result)
		}
	}
}
