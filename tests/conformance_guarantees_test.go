package tests

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// §4: a replayed claim returns the original result, token included, even
// after its lease ended and after the run ended; the same requestId with
// other arguments or from another identity is conflict request_id_reused.
func TestSection4_ReplayReturnsTheOriginal(t *testing.T) {
	t.Parallel()
	b := start(t, options{lease: testLease})
	agent, other := b.connect(agentID), b.connect(agent2ID)
	ops := b.connect(operatorID)
	mira := b.connect(personID("mira@example.com", "reviewers"))
	b.publish(agentLoopSrc)
	startReq := rid()
	startArgs := map[string]any{"process": "agent-loop", "inputs": map[string]any{}, "requestId": startReq}
	var v, v2 view
	mira.ok("start_run", startArgs, &v)
	runID := v.Run.ID
	claimArgs := map[string]any{"runId": runID, "stepId": "gather", "requestId": rid()}
	var c, again interpreter.ClaimWire
	agent.ok("claim", claimArgs, &c)
	agent.ok("claim", claimArgs, &again)
	if again.Token != c.Token || again.ExpiresAt != c.ExpiresAt {
		t.Fatal("a claim replay did not return the original token")
	}
	other.refused("claim", claimArgs, interpreter.CodeConflict, "request_id_reused")
	agent.refused("claim", map[string]any{"runId": runID, "stepId": "review", "requestId": claimArgs["requestId"]}, interpreter.CodeConflict, "request_id_reused")
	mira.refused("start_run", map[string]any{"process": "agent-loop", "inputs": map[string]any{}, "mode": "test", "requestId": startReq}, interpreter.CodeConflict, "request_id_reused")

	untilExpired(t, c.ExpiresAt)
	agent.ok("claim", claimArgs, &again)
	if again.Token != c.Token || again.ExpiresAt != c.ExpiresAt {
		t.Fatal("a claim replay after the lease ended did not return the original")
	}
	agent.refused("submit", goodGather(agent, again.Token), interpreter.CodeStale)

	ops.ok("cancel", map[string]any{"runId": runID, "reason": "Done testing.", "requestId": rid()}, nil)
	agent.ok("claim", claimArgs, &again)
	if again.Token != c.Token {
		t.Fatal("a claim replay after the run ended did not return the original")
	}
	mira.ok("start_run", startArgs, &v2)
	if v2.Run.ID != runID || v2.Run.State != "active" {
		t.Fatalf("a start_run replay after the end = %+v, want the original result", v2.Run)
	}
}

// §4: a refused call is not recorded: the same requestId succeeds later.
func TestSection4_RefusedCallsAreNotRecorded(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	mira := b.connect(personID("mira@example.com", "reviewers"))
	b.publish(agentLoopSrc)
	b.publish(everyTypeSrc)
	req := rid()
	mira.refused("start_run", map[string]any{"process": "every-type", "inputs": map[string]any{}, "requestId": req}, interpreter.CodeInvalid)
	var v view
	mira.ok("start_run", map[string]any{"process": "agent-loop", "inputs": map[string]any{}, "requestId": req}, &v)
	c := claimStep(agent, v.Run.ID, "gather")
	sub := goodGather(agent, c.Token)
	sub["output"] = map[string]any{"found": "no"}
	agent.refused("submit", sub, interpreter.CodeNotAccepted)
	sub["output"] = map[string]any{"found": false, "tier": "silver"}
	agent.ok("submit", sub, &v)
	if v.StepState("gather") != "done" {
		t.Fatalf("after the retried submit: %s", v.StepStates())
	}
	agent.ok("submit", sub, &v)
	if v.StepState("gather") != "done" {
		t.Fatal("a submit replay changed the answer")
	}

	// Uploads are writes too: a replay returns the same file, other
	// content under the same requestId is a conflict.
	up := map[string]any{"fileName": "a.txt", "contentType": "text/plain", "contentBase64": "aGVsbG8=", "requestId": rid()}
	var f1, f2 struct {
		ID     string `json:"id"`
		SHA256 string `json:"sha256"`
		Bytes  int    `json:"bytes"`
	}
	agent.ok("upload", up, &f1)
	agent.ok("upload", up, &f2)
	if f1 != f2 {
		t.Fatalf("an upload replay made %+v after %+v", f2, f1)
	}
	up["contentBase64"] = "d29ybGQ="
	agent.refused("upload", up, interpreter.CodeConflict, "request_id_reused")
}

// §4, §6 housekeeping: eight clients sending the same start_run requestId
// at once start one run, and all get it.
func TestSection4_ConcurrentStartIsOneRun(t *testing.T) {
	b := start(t, options{})
	b.publish(agentLoopSrc)
	mira := b.connect(personID("mira@example.com"))
	sessions := make([]*user, 8)
	for i := range sessions {
		sessions[i] = b.connect(personID("mira@example.com"))
	}
	args := map[string]any{"process": "agent-loop", "inputs": map[string]any{}, "requestId": rid()}
	ids := make([]string, len(sessions))
	var wg sync.WaitGroup
	for i, u := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := u.call("start_run", args)
			if !r.OK {
				ids[i] = "refused: " + r.Error.Error()
				return
			}
			var v view
			if err := interpreter.DecodeExact(r.Data, &v); err == nil {
				ids[i] = v.Run.ID
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || !strings.HasPrefix(id, "r_") {
			t.Fatalf("concurrent starts answered %q", ids)
		}
	}
	var runs struct{ Items []any }
	mira.ok("list_runs", map[string]any{}, &runs)
	if len(runs.Items) != 1 {
		t.Fatalf("%d runs started, want 1", len(runs.Items))
	}
}

const orderSrc = `---
name: order
description: Three agent steps in order.
steps:
  - id: first
    agent: First.
  - id: second
    agent: Second.
  - id: third
    agent: Third.
    next: [{ to: done, when: always }, { to: other, when: never }]
  - id: other
    finish: other
  - id: done
    finish: ok
---
`

// §6.1 Order: no call makes a step claimable before its predecessor
// completed into it.
func TestSection6_1_Order(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	ops := b.connect(operatorID)
	v := startSrc(t, b, b.connect(personID("mira@example.com")), orderSrc, nil)
	runID := v.Run.ID
	notReady := func() {
		t.Helper()
		for _, step := range []string{"second", "third"} {
			agent.refused("claim", map[string]any{"runId": runID, "stepId": step, "requestId": rid()}, interpreter.CodeConflict, "not_ready")
		}
		for _, step := range []string{"other", "done"} {
			agent.refused("claim", map[string]any{"runId": runID, "stepId": step, "requestId": rid()}, interpreter.CodeForbidden)
		}
	}
	notReady()
	if items := agentWork(agent, runID); len(items) != 1 || items[0].StepID != "first" {
		t.Fatalf("get_work = %+v, want only first", items)
	}
	c := claimStep(agent, runID, "first")
	// A forged token does not verify.
	mid := len(c.Token) / 2
	flip := byte('A')
	if c.Token[mid] == 'A' {
		flip = 'B'
	}
	forged := c.Token[:mid] + string(flip) + c.Token[mid+1:]
	agent.refused("submit", map[string]any{"token": forged, "output": map[string]any{}, "summary": "s", "requestId": rid()}, interpreter.CodeInvalid)
	agent.refused("submit", map[string]any{"token": c.Token + "x", "output": map[string]any{}, "summary": "s", "requestId": rid()}, interpreter.CodeInvalid)
	// Events and decisions named after steps do nothing to them.
	agent.ok("send_event", map[string]any{"runId": runID, "name": "second", "requestId": rid()}, nil)
	ops.refused("decide", map[string]any{"runId": runID, "workItemId": "w_1", "snapshot": getRun(ops, runID).WorkItems, "decision": "completed", "requestId": rid()}, interpreter.CodeInvalid)
	ops.refused("decide", map[string]any{"runId": runID, "workItemId": "w_1", "snapshot": "s", "decision": "failed", "note": "n", "requestId": rid()}, interpreter.CodeNotFound)
	agent.ok("escalate", map[string]any{"token": c.Token, "note": "Stuck.", "requestId": rid()}, &v)
	notReady()
	v = getRun(agent, runID)
	if v.StepState("second") != "null" || v.StepState("third") != "null" {
		t.Fatalf("steps became reachable out of order: %s", v.StepStates())
	}
	w := itemFor(v, "first")
	ops.ok("decide", decideArgs(v, w, "completed", map[string]any{"output": map[string]any{}}), &v)
	if v.StepState("second") != "ready" || v.StepState("third") != "null" {
		t.Fatalf("after first: %s", v.StepStates())
	}
	agent.refused("claim", map[string]any{"runId": runID, "stepId": "third", "requestId": rid()}, interpreter.CodeConflict, "not_ready")
}

// §6.2 One actor at a time: 32 agents claim one step at once; exactly one
// gets a token, every other is told claimed_by_other; tokens never appear in
// get_run.
func TestSection6_2_OneActor(t *testing.T) {
	b := start(t, options{})
	v := startSrc(t, b, b.connect(personID("mira@example.com")), orderSrc, nil)
	agents := make([]*user, 64)
	for i := range agents {
		agents[i] = b.connect(auth.Identity{ID: fmt.Sprintf("a_racer%02d", i), Kind: auth.KindAgent})
	}
	results := make([]reply, len(agents))
	var wg sync.WaitGroup
	for i, u := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = u.call("claim", map[string]any{"runId": v.Run.ID, "stepId": "first", "requestId": rid()})
		}()
	}
	wg.Wait()
	var tokens []string
	winner := -1
	for i, r := range results {
		if r.OK {
			var c interpreter.ClaimWire
			if err := interpreter.DecodeExact(r.Data, &c); err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, c.Token)
			winner = i
			continue
		}
		if r.Error.Code != interpreter.CodeConflict || len(r.Error.Issues) != 1 || r.Error.Issues[0] != "claimed_by_other" {
			t.Fatalf("a losing claim got %+v", r.Error)
		}
	}
	if len(tokens) != 1 {
		t.Fatalf("%d claims got a token, want 1", len(tokens))
	}
	raw := agents[0].call("get_run", map[string]any{"runId": v.Run.ID})
	if strings.Contains(string(raw.Data), tokens[0]) {
		t.Fatal("get_run shows the token")
	}
	loser := agents[(winner+1)%len(agents)]
	loser.refused("claim", map[string]any{"runId": v.Run.ID, "stepId": "first", "requestId": rid()}, interpreter.CodeConflict, "claimed_by_other")
	agents[winner].refused("claim", map[string]any{"runId": v.Run.ID, "stepId": "first", "requestId": rid()}, interpreter.CodeConflict, "claimed_by_you")
	agents[winner].ok("submit", map[string]any{"token": tokens[0], "output": map[string]any{}, "summary": "Mine.", "requestId": rid()}, &v)
	if v.Data.Steps["first"].By != agents[winner].id.ID {
		t.Fatalf("the step was completed by %s", v.Data.Steps["first"].By)
	}
}

const acceptanceSrc = `---
name: acceptance
description: One agent step with strict output.
steps:
  - id: fill
    agent: Fill the lines.
    output:
      lines: { type: list, items: { type: string, one_of: [a, b] } }
      blob: { type: string, optional: true }
    evidence: [file, link]
    next: [{ to: done, when: ok }, { to: other, when: not ok }]
  - id: other
    finish: other
  - id: done
    finish: ok
---
`

// §6.3 Acceptance: one_of inside lists, every evidence kind, the chosen
// next with a reason, the run-data cap; every issue at once, nothing
// changed; a schema break is invalid first.
func TestSection6_3_Acceptance(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	v := startSrc(t, b, b.connect(personID("mira@example.com")), acceptanceSrc, nil)
	c := claimStep(agent, v.Run.ID, "fill")
	file := upload(t, agent, "lines")
	base := func(extra map[string]any) map[string]any {
		args := map[string]any{"token": c.Token, "requestId": rid(), "summary": "Filled.",
			"output":   map[string]any{"lines": []any{"a", "b"}},
			"evidence": []any{map[string]any{"kind": "file", "ref": file}, map[string]any{"kind": "link", "ref": "https://x"}},
			"next":     "done", "reason": "Fine."}
		for k, x := range extra {
			if x == nil {
				delete(args, k)
			} else {
				args[k] = x
			}
		}
		return args
	}
	agent.refused("submit", base(map[string]any{"output": map[string]any{"lines": []any{"a", "c", 3}}, "evidence": []any{}, "next": nil, "reason": nil}),
		interpreter.CodeNotAccepted,
		"output.lines[1]: not one of a, b", "output.lines[2]: expected string", "evidence: file required", "evidence: link required", "next: required, one of done, other", "reason: required")
	agent.refused("submit", base(map[string]any{"next": "nowhere"}), interpreter.CodeNotAccepted, "next: not one of done, other")
	agent.refused("submit", base(map[string]any{"output": map[string]any{"lines": []any{"a"}, "blob": strings.Repeat("x", 270000)}}), interpreter.CodeNotAccepted, "run data: over 262144 bytes")
	agent.refused("submit", base(map[string]any{"summary": nil}), interpreter.CodeInvalid, "summary: required")
	agent.refused("submit", base(map[string]any{"summary": strings.Repeat("s", 2001)}), interpreter.CodeInvalid)
	if got := getRun(agent, v.Run.ID); got.StepState("fill") != "claimed" || got.Data.Steps["fill"] != nil {
		t.Fatalf("refusals changed the run: %s", got.StepStates())
	}
	agent.ok("submit", base(nil), &v)
	if d := v.Data.Steps["fill"]; d.Next != "done" || d.Reason != "Fine." || len(d.Evidence) != 2 || d.Evidence[0].SHA256 == "" {
		t.Fatalf("recorded %+v", d.Record)
	}
}

// §6.4 People decide: an agent identity is refused even with a current
// snapshot it read itself; a person outside the assignment too.
func TestSection6_4_PeopleDecide(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	rita := b.connect(personID("rita@example.com", "reviewers"))
	v := startSrc(t, b, rita, peopleSrc, map[string]any{"ref": "x"})
	seen := getRun(agent, v.Run.ID)
	w := itemFor(seen, "fill")
	agent.refused("decide", fillArgs(seen, w, nil), interpreter.CodeForbidden)
	agent.refused("decide", decideArgs(seen, w, "failed", map[string]any{"note": "I would rather not."}), interpreter.CodeForbidden)
	b.connect(operatorID).refused("decide", fillArgs(seen, w, nil), interpreter.CodeForbidden)
	if items := personWork(agent, v.Run.ID); len(items) != 0 {
		t.Fatalf("an agent's get_work lists work items: %+v", items)
	}
	rita.ok("decide", fillArgs(seen, w, nil), &v)
	if v.Data.Steps["fill"].By != "rita@example.com" {
		t.Fatalf("completed by %s", v.Data.Steps["fill"].By)
	}
}

// §6.5 Immutability (see also TestImmutabilityOfVersions): a run keeps its
// version's body and steps in claims after a new version is published.
func TestSection6_5_RunsKeepTheirVersion(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	mira := b.connect(personID("mira@example.com", "reviewers"))
	v := startSrc(t, b, mira, agentLoopSrc, nil)
	changed := strings.Replace(strings.Replace(agentLoopSrc, "# Agent loop", "# Agent loop, second edition", 1), "Gather the facts", "Gather everything", 1)
	if pv := b.publish(changed); pv.Version != 2 {
		t.Fatalf("the changed file published as version %d", pv.Version)
	}
	c := claimStep(agent, v.Run.ID, "gather")
	if strings.Contains(c.Body, "second edition") || strings.Contains(c.Step.Instructions, "everything") {
		t.Fatalf("a version 1 run claims version 2: %q / %q", c.Body, c.Step.Instructions)
	}
	var v2 view
	mira.ok("start_run", map[string]any{"process": "agent-loop", "inputs": map[string]any{}, "requestId": rid()}, &v2)
	c2 := claimStep(agent, v2.Run.ID, "gather")
	if v2.Run.Version != 2 || !strings.Contains(c2.Body, "second edition") || !strings.Contains(c2.Step.Instructions, "everything") {
		t.Fatalf("a new run: version %d, body %q", v2.Run.Version, c2.Body)
	}
}

// §4.1, §6 conformance: describe reports the protocol, the profiles this
// server implements, the lease and the person format, and every required
// tool (plus the optional ones the fixtures need).
func TestSection4_1_Describe(t *testing.T) {
	b := start(t, options{})
	var d struct {
		Protocol     string   `json:"protocol"`
		Version      string   `json:"version"`
		Profiles     []string `json:"profiles"`
		LeaseSeconds int      `json:"leaseSeconds"`
		Person       struct {
			Format string `json:"format"`
		} `json:"person"`
		Tools []string `json:"tools"`
	}
	b.connect(personID("mira@example.com")).ok("describe", nil, &d)
	if d.Protocol != "agentprocess" || d.Version != "core-2" || d.LeaseSeconds != 600 || d.Person.Format != "email" {
		t.Fatalf("describe = %+v", d)
	}
	has := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	if !has(d.Profiles, interpreter.ProfileParallel) {
		t.Fatalf("profiles %q lack parallel-1", d.Profiles)
	}
	for _, tool := range []string{"describe", "list_processes", "start_run", "get_run", "get_work", "claim", "submit", "escalate", "decide", "cancel", "renew", "upload", "send_event", "list_runs"} {
		if !has(d.Tools, tool) {
			t.Fatalf("describe.tools %q lacks %s", d.Tools, tool)
		}
	}
}

// §5, §6.3: file evidence is verified against the bytes stored at upload;
// bytes changed underneath (a storage fault) are refused with the hash
// issue; a file never uploaded is not found.
func TestSection5_FileEvidenceIsVerified(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	v := startSrc(t, b, b.connect(personID("mira@example.com", "reviewers")), agentLoopSrc, nil)
	c := claimStep(agent, v.Run.ID, "gather")
	file := upload(t, agent, "the screening report")
	if _, err := b.store.Pool().Exec(context.Background(), `UPDATE files SET bytes = convert_to('the screening rep0rt', 'UTF8') WHERE file_id = $1`, file); err != nil {
		t.Fatal(err)
	}
	args := goodGather(agent, c.Token)
	args["evidence"] = []any{map[string]any{"kind": "file", "ref": file}}
	agent.refused("submit", args, interpreter.CodeNotAccepted, "evidence "+file+": content does not match its hash")
	args["evidence"] = []any{map[string]any{"kind": "file", "ref": "f_never_uploaded"}}
	agent.refused("submit", args, interpreter.CodeNotAccepted, "evidence f_never_uploaded: not found")
	agent.ok("submit", goodGather(agent, c.Token), nil)
}

// SPEC-DECISIONS §18: run-data caps on start inputs and event data.
func TestSection6_3_RunDataCaps(t *testing.T) {
	b := start(t, options{})
	b.publish(everyTypeSrc)
	mira := b.connect(personID("mira@example.com"))
	big := strings.Repeat("x", 270000)
	in := map[string]any{
		"title": big, "amount": 1, "urgent": false, "startDate": "2026-10-07", "startAt": "2026-10-06T09:00:00Z",
		"tags": []any{}, "lines": []any{}, "meta": map[string]any{}, "owner": "o@example.com", "tier": "gold", "level": 1,
	}
	mira.refused("start_run", map[string]any{"process": "every-type", "inputs": in, "requestId": rid()}, interpreter.CodeInvalid, "run data: over 262144 bytes")
	v := startSrc(t, b, mira, heldEventsSrc, nil)
	b.connect(agentID).refused("send_event", map[string]any{"runId": v.Run.ID, "name": "paid", "data": map[string]any{"blob": big}, "requestId": rid()}, interpreter.CodeInvalid)
}
