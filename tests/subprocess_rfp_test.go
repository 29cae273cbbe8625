package tests

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// The RFP example (examples/rfp, docs/profile-subprocess.md) end to end on
// the real server: a parent that screens each supplier in a child run of
// supplier-screening and has legal review the contract in a child run of
// contract-review. Agents and people work over MCP, a buyer and legal in
// the web inbox too, and every answer is checked against core-2 with the
// profile's additions.

var (
	sam   = personID("sam@example.com", "buyers")                   // starts the RFP
	bea   = personID("bea@example.com", "buyer")                    // confirms screenings
	lee   = personID("lee@example.com", "legal")                    // reviews contracts
	pat   = personID("pat@example.com", "procurement")              // decides on failures
	rfpOp = auth.Identity{ID: "u_rfp_ops", Kind: auth.KindOperator} // cancels
)

// rfp is one test's RFP: the server, its people and the parent run.
type rfp struct {
	t      *testing.T
	b      *baton
	agent  *user
	people *people
	run    string
}

// startRFP publishes the example and starts an RFP as sam.
func startRFP(t *testing.T, mode string) *rfp {
	b := startInbox(t, options{subprocess: true})
	publishRFP(t, b, "o_test")
	r := &rfp{t: t, b: b, agent: b.connect(agentID), people: newPeople(b)}
	args := map[string]any{"process": "rfp", "inputs": map[string]any{"rfpId": "RFP-2026-014", "title": "Laptops"}, "requestId": rid()}
	if mode != "" {
		args["mode"] = mode
	}
	var v view
	r.people.as(sam).ok("start_run", args, &v)
	if v.StepState("collect") != "ready" {
		t.Fatalf("the RFP starts at %s", v.StepStates())
	}
	r.run = v.Run.ID
	return r
}

// collect submits the suppliers that answered, as the agent.
func (r *rfp) collect(suppliers ...map[string]any) {
	r.t.Helper()
	c := claimStep(r.agent, r.run, "collect")
	list := make([]any, len(suppliers))
	for i, s := range suppliers {
		list[i] = s
	}
	r.agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{"suppliers": list},
		"evidence": evidenceFor(r.agent, []string{"link"}), "summary": fmt.Sprintf("%d suppliers answered.", len(list)), "requestId": rid()}, nil)
}

// until reads a run until ok says so, for up to two minutes: a child's end
// reaches its parent as its workflow closes, after the write that ended it.
func (r *rfp) until(runID, what string, ok func(view) bool) view {
	r.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		v := getRun(r.agent, runID)
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("run %s: %s did not happen; steps %s, state %s, ended %+v", runID, what, v.StepStates(), v.Run.State, v.Run.Ended)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// children waits until step has started n children, all running, and
// returns their run ids in item order.
func (r *rfp) children(step string, n int) []string {
	r.t.Helper()
	v := r.until(r.run, fmt.Sprintf("%s running %d children", step, n), func(v view) bool {
		c := stepOf(v, step).Children
		return c != nil && c.Running == n && len(c.RunningIDs) == n
	})
	c := stepOf(v, step).Children
	if c.Total != n || c.Ended != 0 {
		r.t.Fatalf("%s's children: %+v", step, c)
	}
	// list_runs with parent finds the same runs, once each child has
	// written its first record: a child is a workflow of its own, started
	// by the parent's write and recorded by its own first task.
	deadline := time.Now().Add(time.Minute)
	for {
		var list struct {
			Items []struct {
				ID      string `json:"id"`
				Process string `json:"process"`
			} `json:"items"`
		}
		r.agent.ok("list_runs", map[string]any{"parent": r.run, "limit": 100}, &list)
		found := map[string]string{}
		for _, it := range list.Items {
			found[it.ID] = it.Process
		}
		missing := 0
		for _, id := range c.RunningIDs {
			if found[id] == "" {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("list_runs parent %s does not list %d of its children %v: %+v", r.run, missing, c.RunningIDs, list.Items)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return c.RunningIDs
}

// screen screens the supplier of a child run as the agent: clear or not.
func (r *rfp) screen(child string, clear bool) {
	r.t.Helper()
	next, reason := "confirm", "Clear on both lists."
	if !clear {
		next, reason = "flagged", "A hit on the EU list."
	}
	c := claimStep(r.agent, child, "screen")
	r.agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{"cleared": clear},
		"evidence": evidenceFor(r.agent, []string{"link"}), "summary": "Searched OFAC and the EU list by legal name.",
		"next": next, "reason": reason, "requestId": rid()}, nil)
}

// decide decides the open work item on step of a run over MCP as who.
func (r *rfp) decide(who auth.Identity, runID, step, decision string, extra map[string]any) view {
	r.t.Helper()
	u := r.people.as(who)
	v := getRun(u, runID)
	w := itemFor(v, step)
	if w == nil {
		r.t.Fatalf("run %s has no work item on %s: %s", runID, step, v.StepStates())
	}
	var after view
	u.ok("decide", decideArgs(v, w, decision, extra), &after)
	return after
}

// decideInInbox decides the open work item on step of a run in the web
// inbox, signed in as who.
func (r *rfp) decideInInbox(who auth.Identity, runID, step, decision, note string) {
	r.t.Helper()
	w := itemFor(getRun(r.agent, runID), step)
	if w == nil {
		r.t.Fatalf("run %s has no work item on %s", runID, step)
	}
	web := r.b.browser(r.t)
	web.signIn(who)
	itemURL := "/inbox/runs/" + runID + "/items/" + w.ID
	f := hiddenFields(formByID(r.t, web.get(itemURL).body, "decide"))
	f.Set("decision", decision)
	if note != "" {
		f.Set("note", note)
	}
	if p := web.postMultipart(itemURL, f); p.status != http.StatusOK {
		r.t.Fatalf("decide %s on %s in the inbox: %d\n%s", decision, step, p.status, p.body)
	}
}

// compare submits the comparison as the agent.
func (r *rfp) compare(contract string) {
	r.t.Helper()
	c := claimStep(r.agent, r.run, "compare")
	r.agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{"supplier": "Acme", "contract": contract},
		"summary": "Acme is cleared and cheapest.", "requestId": rid()}, nil)
}

// outcomes are a process step's recorded children: run id and outcome.
func outcomes(t *testing.T, v view, step string) []string {
	t.Helper()
	d := v.Data.Steps[step]
	if d == nil || d.Record == nil {
		t.Fatalf("%s has no record", step)
	}
	var out []string
	add := func(o any) {
		m := o.(map[string]any)
		out = append(out, fmt.Sprintf("%v %v", m["runId"], m["outcome"]))
	}
	if items, ok := d.Output["items"].([]any); ok {
		for _, it := range items {
			add(it)
		}
	} else {
		add(d.Output)
	}
	return out
}

var (
	acme   = map[string]any{"name": "Acme Ltd", "bid": 41000}
	globex = map[string]any{"name": "Globex", "bid": 39500.5}
	initec = map[string]any{"name": "Initech", "bid": 44000}
)

// One child per supplier, screened by an agent and confirmed by a buyer in
// the inbox; legal rejects the first contract, which sends the RFP back to
// the comparison and starts a new review; the second is signed.
func TestRFPAwardedAfterRework(t *testing.T) {
	t.Parallel()
	r := startRFP(t, "")
	r.collect(acme, globex)
	kids := r.children("screen_each", 2)

	// Each child is a run of its own, exactly core-2, started by the
	// parent's starter with the item's inputs.
	for i, s := range []map[string]any{acme, globex} {
		c := getRun(r.agent, kids[i])
		if c.Run.Process != "supplier-screening" || c.Run.Version != 1 || c.Run.StartedBy != sam.ID || c.Run.Mode != "live" ||
			c.Data.Inputs["supplierName"] != s["name"] || c.Data.Inputs["rfp"] != "RFP-2026-014" || c.StepState("screen") != "ready" {
			t.Fatalf("child %d: %+v %+v %s", i, c.Run, c.Data.Inputs, c.StepStates())
		}
	}
	if bid := getRun(r.agent, kids[1]).Data.Inputs["bidUsd"]; fmt.Sprint(bid) != "39500.5" {
		t.Fatalf("the second child's bid is %v, want 39500.5 unrounded", bid)
	}
	r.screen(kids[0], true)
	r.screen(kids[1], false) // flagged: it ends at once
	r.until(r.run, "one child ended", func(v view) bool { c := stepOf(v, "screen_each").Children; return c != nil && c.Ended == 1 })
	r.decideInInbox(bea, kids[0], "confirm", "approved", "")

	v := r.until(r.run, "compare ready", func(v view) bool { return v.StepState("compare") == "ready" })
	if got, want := strings.Join(outcomes(t, v, "screen_each"), ", "), kids[0]+" cleared, "+kids[1]+" flagged"; got != want ||
		v.StepState("screen_each") != "done" || v.Data.Steps["screen_each"].By != "server" {
		t.Fatalf("screen_each recorded %q (want %q), state %s", got, want, v.StepState("screen_each"))
	}

	r.compare("C-1")
	legal := r.children("legal", 1)
	r.decide(lee, legal[0], "review", "rejected", map[string]any{"note": "Clause 4 is missing."})

	// The rejection routes back to compare: the comparison is redone,
	// legal's outcome and note are there to read.
	v = r.until(r.run, "compare ready again", func(v view) bool { return v.StepState("compare") == "ready" })
	out := v.Data.Steps["legal"].Output
	if out["runId"] != legal[0] || out["outcome"] != "rejected" || out["note"] != "Clause 4 is missing." ||
		len(v.Data.Steps["compare"].History) != 1 || v.Data.Steps["compare"].Record != nil || v.StepState("legal") != "null" {
		t.Fatalf("after legal rejected: legal %+v, compare %+v, steps %s", out, v.Data.Steps["compare"], v.StepStates())
	}
	r.compare("C-2")
	again := r.children("legal", 1)
	if again[0] == legal[0] {
		t.Fatalf("the second review is the same child run %s", again[0])
	}
	r.decideInInbox(lee, again[0], "review", "approved", "")

	v = r.until(r.run, "the RFP awarded", func(v view) bool { return v.Run.State == "ended" })
	if v.Run.Outcome == nil || *v.Run.Outcome != "awarded" || v.Data.Steps["legal"].Output["outcome"] != "signed" ||
		len(v.Data.Steps["legal"].History) != 1 || v.Data.Steps["legal"].History[0].Output["runId"] != legal[0] {
		t.Fatalf("the RFP ended %v: legal %+v", v.Run.Outcome, v.Data.Steps["legal"])
	}
	// The earlier review keeps its record.
	if old := getRun(r.agent, legal[0]); old.Run.State != "ended" || *old.Run.Outcome != "rejected" {
		t.Fatalf("the first review: %+v", old.Run)
	}

	// The inbox links a child to its parent, and the parent to its children.
	web := r.b.browser(t)
	web.signIn(sam)
	if p := web.get("/inbox/runs/" + kids[0]); p.status != http.StatusOK || !strings.Contains(p.body, `href="/inbox/runs/`+r.run+`"`) {
		t.Errorf("the child's inbox page does not link its parent: %d\n%s", p.status, p.body)
	}
	if p := web.get("/inbox/runs/" + r.run); p.status != http.StatusOK || !strings.Contains(p.body, `href="/inbox/runs/`+kids[1]+`"`) {
		t.Errorf("the parent's inbox page does not link its children: %d\n%s", p.status, p.body)
	}
}

// A screening that fails takes the for_each route to procurement, once
// every child has ended; procurement stops the RFP.
func TestRFPScreeningFailedRoute(t *testing.T) {
	t.Parallel()
	r := startRFP(t, "")
	r.collect(acme, globex)
	kids := r.children("screen_each", 2)
	r.screen(kids[0], true)
	r.decide(bea, kids[0], "confirm", "failed", map[string]any{"note": "The registry is offline."})
	// One child failed; the other still runs, so the step waits.
	v := r.until(r.run, "one child ended", func(v view) bool { c := stepOf(v, "screen_each").Children; return c != nil && c.Ended == 1 })
	if v.StepState("review_failures") != "null" {
		t.Fatalf("the route was taken before every child ended: %s", v.StepStates())
	}
	r.screen(kids[1], false)

	v = r.until(r.run, "review_failures waiting", func(v view) bool { return v.StepState("review_failures") == "waiting" })
	items := v.Data.Steps["screen_each"].Output["items"].([]any)
	first := items[0].(map[string]any)
	if first["outcome"] != "failed" || first["note"] != "The registry is offline." || items[1].(map[string]any)["outcome"] != "flagged" || v.StepState("compare") != "null" {
		t.Fatalf("screen_each recorded %+v; steps %s", items, v.StepStates())
	}

	// describe lists the profile, and the author prompt says what it adds.
	var d struct{ Profiles []string }
	r.agent.ok("describe", map[string]any{}, &d)
	if !slices.Contains(d.Profiles, interpreter.ProfileSubprocess) {
		t.Errorf("describe.profiles %v lacks %s", d.Profiles, interpreter.ProfileSubprocess)
	}
	prompt, err := r.agent.cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "author-process"})
	if err != nil {
		t.Fatal(err)
	}
	if text := prompt.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(text, "- baton-subprocess-1: `process: <name>`") {
		t.Errorf("the author prompt does not say what baton-subprocess-1 adds:\n%s", text)
	}

	v = r.decide(pat, r.run, "review_failures", "completed", map[string]any{"output": map[string]any{}, "next": "abandoned", "reason": "One supplier left is not enough."})
	if v.Run.State != "ended" || *v.Run.Outcome != "abandoned" {
		t.Fatalf("after procurement: %+v", v.Run)
	}
}

// Cancelling the parent cancels every running child with a note naming
// it; a child an operator cancels is an outcome its parent sees, and with
// no route for it the parent fails. A test run's children are test runs.
func TestRFPCancellation(t *testing.T) {
	t.Parallel()
	r := startRFP(t, "test")
	r.collect(acme, globex, initec)
	kids := r.children("screen_each", 3)
	if c := getRun(r.agent, kids[0]); c.Run.Mode != "test" {
		t.Fatalf("a test run's child runs in mode %s", c.Run.Mode)
	}
	r.screen(kids[2], false)
	r.until(r.run, "one child ended", func(v view) bool { c := stepOf(v, "screen_each").Children; return c != nil && c.Ended == 1 })
	ops := r.people.as(rfpOp)
	var v view
	ops.ok("cancel", map[string]any{"runId": r.run, "reason": "Budget withdrawn.", "requestId": rid()}, &v)
	if v.Run.State != "cancelled" {
		t.Fatalf("the parent after cancel: %+v", v.Run)
	}
	note := "parent run " + r.run + " cancelled: Budget withdrawn."
	for _, id := range kids[:2] {
		c := r.until(id, "the child cancelled", func(v view) bool { return v.Run.State == "cancelled" })
		if c.Run.Ended == nil || c.Run.Ended.Note == nil || *c.Run.Ended.Note != note || c.Run.Ended.By != rfpOp.ID {
			t.Fatalf("child %s ended %+v, want by %s with %q", id, c.Run.Ended, rfpOp.ID, note)
		}
	}
	if c := getRun(r.agent, kids[2]); c.Run.State != "ended" || *c.Run.Outcome != "flagged" {
		t.Fatalf("the child that had ended: %+v", c.Run)
	}

	// An operator cancels the only child of another RFP.
	r2 := &rfp{t: t, b: r.b, agent: r.agent, people: r.people}
	var started view
	r.people.as(sam).ok("start_run", map[string]any{"process": "rfp", "inputs": map[string]any{"rfpId": "RFP-2026-015", "title": "Desks"}, "requestId": rid()}, &started)
	r2.run = started.Run.ID
	r2.collect(acme)
	kid := r2.children("screen_each", 1)[0]
	ops.ok("cancel", map[string]any{"runId": kid, "reason": "Acme withdrew its bid.", "requestId": rid()}, nil)
	v = r2.until(r2.run, "the parent failed", func(v view) bool { return v.Run.State == "ended" })
	want := fmt.Sprintf("child run %s ended cancelled: %q", kid, "Acme withdrew its bid.")
	if *v.Run.Outcome != "failed" || v.Run.Ended.By != "server" || v.Run.Ended.Note == nil || *v.Run.Ended.Note != want ||
		v.StepState("screen_each") != "failed" || v.Data.Steps["screen_each"].Decision != interpreter.DecisionFailed {
		t.Fatalf("the parent of a cancelled child: %+v ended %+v, steps %s", v.Run, v.Run.Ended, v.StepStates())
	}
}

// stepOf is a step's entry in a run view's steps.
func stepOf(v view, id string) interpreter.StepView {
	for _, s := range v.Steps {
		if s.ID == id {
			return s
		}
	}
	return interpreter.StepView{}
}
