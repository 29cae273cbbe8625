package faults

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/soak"
	"github.com/baton-run/baton/interpreter"
)

// otherOrg is the organization of the second deployment.
const otherOrg = "o_other"

// isolation is what organization A holds when B looks: runs in each state
// a tool can name, a live claim token, an open work item and a file.
type isolation struct {
	process                   string
	claimed, deciding, ended  string // run ids
	ready                     string // a run whose agent step is ready
	token                     string // claim token of the claimed run
	item                      interpreter.WorkItem
	file, fileName            string
	startRequest, claimRequst string // requestIds A used
}

// Two deployments with different --org on one PostgreSQL and one Temporal
// namespace see nothing of each other: every tool, called by the other
// organization's identities with the first one's ids, tokens and
// requestIds, answers not_found (a claim token, which only its own
// organization's gateway signs, answers invalid), never data.
func TestOrgIsolation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The second deployment: a gateway of its own organization and a
	// worker, on the same PostgreSQL database and Temporal namespace, with
	// the same master key (so even A's claim tokens carry a valid MAC).
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	other := dep.gateway("gateway-other", addr, otherOrg)
	otherWorker := dep.worker("worker-other")
	for _, p := range []*soak.Process{otherWorker, other} {
		if err := p.Start(time.Minute); err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
	}
	defer func() {
		for _, p := range []*soak.Process{otherWorker, other} {
			for _, line := range p.Panics() {
				t.Errorf("%s panicked: %s", p.Name, line)
			}
			for _, e := range p.UnexpectedExits() {
				t.Errorf("%s: %s", p.Name, e)
			}
		}
	}()

	a := newRetrier(dep.gatewayURLs, 0, dep.token, newJournal())
	defer a.close()
	b := newRetrier([]string{"http://" + addr + "/mcp"}, 0, dep.token, newJournal())
	defer b.close()
	b.observe = func(tool string, result []byte) {
		// Nothing of A's that B did not send itself, whatever B calls: the
		// name of A's file, the summary A's runs hold.
		for _, s := range []string{"only-in-a.txt", "Did the work and checked it."} {
			if strings.Contains(string(result), s) {
				t.Errorf("%s from organization %s answered with %q of organization %s: %s", tool, otherOrg, s, org, result)
			}
		}
	}

	in := prepareA(ctx, t, a)
	publishBench(t, "faults-iso-b", otherOrg)

	agent, person, operator := drive.WalkAgent, reviewer(), drive.WalkOperator
	notFound := []string{string(interpreter.CodeNotFound)}
	tokenRefused := []string{string(interpreter.CodeNotFound), string(interpreter.CodeInvalid)}
	refusals := []struct {
		tool string
		who  drive.Who
		args map[string]any
		want []string
	}{
		{"start_run", drive.WalkStarter, map[string]any{"process": in.process, "inputs": map[string]any{}, "requestId": drive.RequestID()}, notFound},
		{"get_run", agent, map[string]any{"runId": in.claimed}, notFound},
		{"get_run", person, map[string]any{"runId": in.deciding}, notFound},
		{"get_run", operator, map[string]any{"runId": in.ended}, notFound},
		{"claim", agent, map[string]any{"runId": in.ready, "stepId": "work", "requestId": drive.RequestID()}, notFound},
		{"claim", agent, map[string]any{"runId": in.ready, "stepId": "work", "requestId": in.claimRequst}, notFound},
		{"renew", agent, map[string]any{"token": in.token, "requestId": drive.RequestID()}, tokenRefused},
		{"submit", agent, map[string]any{"token": in.token, "output": map[string]any{"done": true}, "summary": "", "requestId": drive.RequestID()}, tokenRefused},
		{"escalate", agent, map[string]any{"token": in.token, "note": "help", "requestId": drive.RequestID()}, tokenRefused},
		{"decide", person, map[string]any{"runId": in.deciding, "workItemId": in.item.ID, "snapshot": in.item.Snapshot, "decision": "approved", "requestId": drive.RequestID()}, notFound},
		{"cancel", operator, map[string]any{"runId": in.claimed, "reason": "not yours", "requestId": drive.RequestID()}, notFound},
		{"send_event", agent, map[string]any{"runId": in.claimed, "name": "paid", "requestId": drive.RequestID()}, notFound},
	}
	for _, r := range refusals {
		err := b.call(ctx, r.who, r.tool, r.args, "", nil)
		var e *interpreter.Error
		if !errors.As(err, &e) || !slices.Contains(r.want, string(e.Code)) {
			t.Errorf("%s %v from %s: %v, want a refusal %v", r.tool, r.args, otherOrg, err, r.want)
			continue
		}
		t.Logf("%s as %s %s of %s: %s", r.tool, r.who.Kind, r.who.ID, otherOrg, e.Code)
	}

	// Listings show nothing of A's.
	var procs struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	if err := b.call(ctx, agent, "list_processes", map[string]any{}, "", &procs); err != nil {
		t.Fatal(err)
	}
	if len(procs.Items) != 1 || procs.Items[0].Name != "faults-iso-b" {
		t.Errorf("list_processes in %s = %v, want faults-iso-b alone", otherOrg, procs.Items)
	}
	if err := b.call(ctx, agent, "describe", map[string]any{}, "", nil); err != nil {
		t.Fatal(err)
	}
	aRuns := []string{in.claimed, in.deciding, in.ended, in.ready}
	for _, who := range []drive.Who{agent, person, operator} {
		var work json.RawMessage
		if err := b.call(ctx, who, "get_work", map[string]any{"limit": 100}, "", &work); err != nil {
			t.Fatal(err)
		}
		noneOf(t, "get_work as "+who.ID, work, aRuns)
	}
	for _, args := range []map[string]any{{}, {"process": in.process}} {
		var runs json.RawMessage
		if err := b.call(ctx, operator, "list_runs", args, "", &runs); err != nil {
			t.Fatal(err)
		}
		noneOf(t, "list_runs", runs, aRuns)
	}

	// A requestId A used starts B's own run, not a replay of A's.
	var v interpreter.View
	args := map[string]any{"process": "faults-iso-b", "inputs": map[string]any{}, "requestId": in.startRequest}
	if err := b.call(ctx, drive.WalkStarter, "start_run", args, "", &v); err != nil {
		t.Fatalf("start_run in %s with a requestId %s used: %v", otherOrg, org, err)
	}
	if v.Run.Process != "faults-iso-b" || slices.Contains(aRuns, v.Run.ID) {
		t.Errorf("start_run in %s with %s's requestId answered run %s of %s", otherOrg, org, v.Run.ID, v.Run.Process)
	}

	// B's upload is B's; A's file is no evidence in B.
	if _, err := b.Upload(ctx, agent, "in-b.txt", []byte("b")); err != nil {
		t.Fatal(err)
	}
	c, err := b.Claim(ctx, agent, v.Run.ID, "work")
	if err != nil {
		t.Fatal(err)
	}
	sub := map[string]any{
		"token": c.Token, "output": map[string]any{"done": true}, "summary": "Done in B.", "requestId": drive.RequestID(),
		"evidence": []any{map[string]any{"kind": "file", "ref": in.file}},
	}
	err = b.call(ctx, agent, "submit", sub, v.Run.ID, nil)
	var e *interpreter.Error
	if !errors.As(err, &e) || !strings.Contains(e.Error(), in.file) {
		t.Errorf("a submit in %s citing %s's file %s: %v, want a refusal naming the file", otherOrg, org, in.file, err)
	}

	// A's runs are as they were.
	after, err := a.GetRun(ctx, agent, in.claimed)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.StepStates(); got != "work=claimed, check=null, done=null" {
		t.Errorf("%s's claimed run after %s's calls: %s", org, otherOrg, got)
	}
	after, err = a.GetRun(ctx, agent, in.deciding)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.WorkItems) != 1 || after.WorkItems[0].Snapshot != in.item.Snapshot {
		t.Errorf("%s's open work item changed after %s's calls: %+v", org, otherOrg, after.WorkItems)
	}
}

// reviewer is a person in the group that decides the bench process.
func reviewer() drive.Who {
	return drive.Who{ID: "member-of-reviewers@example.com", Kind: interpreter.ActorPerson, Groups: []string{"reviewers"}}
}

// prepareA makes, in organization A, a run of each state B will name.
func prepareA(ctx context.Context, t *testing.T, a *retrier) isolation {
	t.Helper()
	p := publishBench(t, "faults-iso-a", org)
	in := isolation{process: p.Name, fileName: "only-in-a.txt"}
	start := func(req string) string {
		t.Helper()
		var v interpreter.View
		if err := a.call(ctx, drive.WalkStarter, "start_run", map[string]any{"process": p.Name, "inputs": map[string]any{}, "requestId": req}, "", &v); err != nil {
			t.Fatal(err)
		}
		return v.Run.ID
	}
	in.startRequest = drive.RequestID()
	in.claimed = start(in.startRequest)
	in.claimRequst = drive.RequestID()
	var c interpreter.ClaimWire
	if err := a.call(ctx, drive.WalkAgent, "claim", map[string]any{"runId": in.claimed, "stepId": "work", "requestId": in.claimRequst}, in.claimed, &c); err != nil {
		t.Fatal(err)
	}
	in.token = c.Token
	in.ready = start(drive.RequestID())

	in.deciding = start(drive.RequestID())
	c2, err := a.Claim(ctx, drive.WalkAgent, in.deciding, "work")
	if err != nil {
		t.Fatal(err)
	}
	summary := "Done in A."
	v, err := a.Submit(ctx, drive.WalkAgent, c2.Token, drive.Work{Output: map[string]any{"done": true}, Summary: &summary})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.WorkItems) != 1 {
		t.Fatalf("the submitted run has work items %+v, want one", v.WorkItems)
	}
	in.item = v.WorkItems[0]

	w := drive.Walk{Process: p}
	end, err := w.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	in.ended = end.Run.ID
	if in.file, err = a.Upload(ctx, drive.WalkAgent, in.fileName, []byte("a")); err != nil {
		t.Fatal(err)
	}
	return in
}

// noneOf fails the test when a listing names any of the runs.
func noneOf(t *testing.T, what string, listing json.RawMessage, runs []string) {
	t.Helper()
	for _, id := range runs {
		if strings.Contains(string(listing), id) {
			t.Errorf("%s in %s lists run %s of %s: %s", what, otherOrg, id, org, listing)
		}
	}
}
