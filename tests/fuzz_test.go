package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

// fuzzSrc has a step of every kind a write reaches: an agent step, a
// person's approval with rework, and an event wait.
const fuzzSrc = `---
name: fuzz-run
description: A run for arbitrary writes.
inputs:
  amount: number
steps:
  - id: work
    agent: Do the work.
    output:
      total: number
      note: { type: string, optional: true }
      lines: { type: list, items: object, optional: true }
  - id: paid
    wait_for: paid
  - id: review
    person: reviewers
    approve: Check it.
    on_reject: work
    next: done
  - id: done
    finish: ok
---
`

// fuzzWrites are the tools that write to a run, and get_run.
var fuzzWrites = []string{"claim", "renew", "submit", "escalate", "decide", "cancel", "send_event", "get_run"}

// FuzzRunWrites sends arbitrary arguments to the writes of a run that a
// real Temporal runs, in process through the gateway's Call. "$run" in the
// arguments stands for the run and "$token" for a live claim token, so
// mutations reach the run and its machine. No call may panic or fail the
// run's workflow: every answer is a typed {ok, …} envelope the schemas
// accept, and the run answers get_run after each.
//
//	go test ./tests -run '^$' -fuzz FuzzRunWrites -fuzztime 5m -parallel 1
func FuzzRunWrites(f *testing.F) {
	b := start(f, options{})
	reviewers := auth.Identity{ID: "rita@example.com", Kind: auth.KindPerson, Groups: []string{"reviewers"}}
	who := []auth.Identity{agentID, agent2ID, reviewers, operatorID}
	pv := b.publish(fuzzSrc)
	call := func(ctx context.Context, id auth.Identity, tool string, args any) (json.RawMessage, error) {
		raw, err := json.Marshal(args)
		if err != nil {
			f.Fatal(err)
		}
		return b.gateway.Call(ctx, id, tool, raw)
	}
	// fresh starts a run and claims its work step: the run and the token
	// that stand for "$run" and "$token".
	fresh := func(ctx context.Context) (runID, token string, err error) {
		data, err := call(ctx, agentID, "start_run", map[string]any{"process": pv.Name, "inputs": map[string]any{"amount": 12}, "requestId": rid()})
		if err != nil {
			return "", "", err
		}
		var v view
		if err := json.Unmarshal(data, &v); err != nil {
			return "", "", err
		}
		data, err = call(ctx, agentID, "claim", map[string]any{"runId": v.Run.ID, "stepId": "work", "requestId": rid()})
		if err != nil {
			return "", "", err
		}
		var c interpreter.ClaimWire
		if err := json.Unmarshal(data, &c); err != nil {
			return "", "", err
		}
		return v.Run.ID, c.Token, nil
	}
	runID, token, err := fresh(context.Background())
	if err != nil {
		f.Fatal(err)
	}

	for _, s := range []struct {
		tool string
		who  uint8
		args string
	}{
		{"claim", 0, `{"runId":"$run","stepId":"work","requestId":"seed-claim"}`},
		{"renew", 0, `{"token":"$token","progress":"half way","requestId":"seed-renew"}`},
		{"submit", 0, `{"token":"$token","output":{"total":12.5,"lines":[{"a":"<b>&"}]},"summary":"done","requestId":"seed-submit"}`},
		{"submit", 1, `{"token":"$token","output":{"total":"x","extra":{"deep":[[[]]]}},"summary":" ","requestId":"seed-submit-2"}`},
		{"escalate", 0, `{"token":"$token","note":"stuck","requestId":"seed-escalate"}`},
		{"decide", 2, `{"runId":"$run","workItemId":"w_1","snapshot":"s","decision":"rejected","note":"again","requestId":"seed-decide"}`},
		{"cancel", 3, `{"runId":"$run","reason":"enough","requestId":"seed-cancel"}`},
		{"send_event", 0, `{"runId":"$run","name":"paid","data":{"amount":1e308,"text":"<p>"},"requestId":"seed-event"}`},
		{"get_run", 2, `{"runId":"$run"}`},
	} {
		for i, tool := range fuzzWrites {
			if tool == s.tool {
				f.Add(uint8(i), s.who, []byte(s.args))
			}
		}
	}
	f.Fuzz(func(t *testing.T, toolIndex, whoIndex uint8, args []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		tool := fuzzWrites[int(toolIndex)%len(fuzzWrites)]
		id := who[int(whoIndex)%len(who)]
		args = bytes.ReplaceAll(args, []byte("$run"), []byte(runID))
		args = bytes.ReplaceAll(args, []byte("$token"), []byte(token))
		data, err := b.gateway.Call(ctx, id, tool, args)
		var refusal *interpreter.Error
		if err != nil && !errors.As(err, &refusal) {
			t.Fatalf("%s as %s answered an untyped error (retry to the caller): %v\n%s", tool, id.ID, err, args)
		}
		env := map[string]any{"ok": err == nil}
		if err == nil {
			env["data"] = json.RawMessage(data)
		} else {
			env["error"] = refusal
		}
		spectest.ValidateToolResult(t, tool, env)
		if refusal != nil && refusal.Code == interpreter.CodeRetry {
			t.Fatalf("%s as %s answered retry: %v\n%s", tool, id.ID, refusal, args)
		}
		// The run still answers; one that ended makes way for a fresh one.
		data, err = call(ctx, operatorID, "get_run", map[string]any{"runId": runID})
		if err != nil {
			t.Fatalf("get_run after %s: %v\n%s", tool, err, args)
		}
		var v view
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		if interpreter.RunState(v.Run.State).Over() {
			if runID, token, err = fresh(ctx); err != nil {
				t.Fatalf("a fresh run: %v", err)
			}
		}
	})
}
