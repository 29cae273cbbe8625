package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// The conformance suite drives Baton only through MCP tool calls, as a
// client would. Each test names the section of the specification it proves.

// in returns the same Baton bound to another test, so subtests can connect
// clients of their own and fail on their own goroutine.
func (b *baton) in(t testing.TB) *baton {
	c := *b
	c.t = t
	return &c
}

// parseFor parses a process the way a client that holds the file would, to
// know its event names and step kinds.
func parseFor(t testing.TB, src []byte) *interpreter.Process {
	t.Helper()
	offer := interpreter.DefaultOffer()
	p, err := interpreter.Parse(src, &interpreter.ParseOptions{Offer: &offer})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return p
}

func fixtureProcess(t testing.TB, name string) *interpreter.Process {
	t.Helper()
	src, err := os.ReadFile(fixturePath(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return parseFor(t, src)
}

// sampleFor returns a value that satisfies f. Datetimes lie in the past, so
// a wait_until on one continues at once.
func sampleFor(f *interpreter.Field, name string) any {
	if len(f.OneOf) > 0 {
		return f.OneOf[0]
	}
	switch f.Type {
	case interpreter.TypeString:
		return "some " + name
	case interpreter.TypeNumber:
		return json.Number("1250.75")
	case interpreter.TypeBoolean:
		return true
	case interpreter.TypeDate:
		return "2026-10-07"
	case interpreter.TypeDatetime:
		return "2020-01-01T09:00:00+02:00"
	case interpreter.TypeList:
		if f.Items != nil {
			return []any{sampleFor(f.Items, name)}
		}
		return []any{"one"}
	case interpreter.TypeObject:
		return map[string]any{"k": "v"}
	case interpreter.TypePerson:
		return strings.ToLower(name) + "@example.com"
	}
	return nil
}

func samplesFor(fs interpreter.Fields) map[string]any {
	out := map[string]any{}
	for _, f := range fs {
		out[f.Name] = sampleFor(f, f.Name)
	}
	return out
}

// view is a run view as a client decodes it.
type view = interpreter.View

func getRun(u *user, runID string) view {
	u.t.Helper()
	var v view
	u.ok("get_run", map[string]any{"runId": runID}, &v)
	return v
}

func stepStateOf(v view, id string) string {
	for _, s := range v.Steps {
		if s.ID == id {
			if s.State == nil {
				return "null"
			}
			return *s.State
		}
	}
	return "absent"
}

// itemFor returns a copy of the open work item on a step, or nil. A copy,
// so that decoding the next view into the same variable leaves it alone.
func itemFor(v view, stepID string) *interpreter.WorkItem {
	for _, w := range v.WorkItems {
		if w.StepID == stepID {
			return &w
		}
	}
	return nil
}

// agentItem is one get_work item for an agent.
type agentItem struct {
	RunID      string               `json:"runId"`
	StepID     string               `json:"stepId"`
	Process    string               `json:"process"`
	Version    int                  `json:"version"`
	Mode       string               `json:"mode"`
	ReadySince string               `json:"readySince"`
	Due        *string              `json:"due"`
	Overdue    bool                 `json:"overdue"`
	Handoff    *interpreter.Handoff `json:"handoff"`
	Claim      struct {
		Tool      string         `json:"tool"`
		Arguments map[string]any `json:"arguments"`
	} `json:"claim"`
}

// personItem is one get_work item for a person.
type personItem struct {
	RunID    string               `json:"runId"`
	Process  string               `json:"process"`
	Version  int                  `json:"version"`
	Mode     string               `json:"mode"`
	WorkItem interpreter.WorkItem `json:"workItem"`
}

func agentWork(u *user, runID string) []agentItem {
	u.t.Helper()
	var w struct {
		Items      []agentItem `json:"items"`
		NextCursor *string     `json:"nextCursor"`
	}
	u.ok("get_work", map[string]any{"limit": 100}, &w)
	var out []agentItem
	for _, it := range w.Items {
		if runID == "" || it.RunID == runID {
			out = append(out, it)
		}
	}
	return out
}

func personWork(u *user, runID string) []personItem {
	u.t.Helper()
	var w struct {
		Items      []personItem `json:"items"`
		NextCursor *string      `json:"nextCursor"`
	}
	u.ok("get_work", map[string]any{"limit": 100}, &w)
	var out []personItem
	for _, it := range w.Items {
		if runID == "" || it.RunID == runID {
			out = append(out, it)
		}
	}
	return out
}

func claimStep(u *user, runID, stepID string) interpreter.ClaimWire {
	u.t.Helper()
	var c interpreter.ClaimWire
	u.ok("claim", map[string]any{"runId": runID, "stepId": stepID, "requestId": rid()}, &c)
	return c
}

// evidenceFor attaches one item per required kind, uploading a file as u.
func evidenceFor(u *user, kinds []string) []any {
	var ev []any
	for _, k := range kinds {
		if k == "file" {
			ev = append(ev, map[string]any{"kind": "file", "ref": upload(u.t.(*testing.T), u, "evidence for the step")})
		} else {
			ev = append(ev, map[string]any{"kind": "link", "ref": "https://example.com/doc/1"})
		}
	}
	return ev
}

// submission returns submit arguments that satisfy the claimed step.
func submission(u *user, c interpreter.ClaimWire, prefer func([]interpreter.Route) string) map[string]any {
	args := map[string]any{
		"token": c.Token, "requestId": rid(),
		"output":  samplesFor(c.Step.Output),
		"summary": "Did the work and checked it.",
	}
	if ev := evidenceFor(u, c.Step.Evidence); ev != nil {
		args["evidence"] = ev
	}
	if c.Step.Next != nil {
		args["next"], args["reason"] = prefer(c.Step.Next), "It fits."
	}
	return args
}

// people hands out one MCP session per identity.
type people struct {
	b     *baton
	users map[string]*user
}

func newPeople(b *baton) *people { return &people{b: b, users: map[string]*user{}} }

func (p *people) as(id auth.Identity) *user {
	if u, ok := p.users[id.ID]; ok {
		return u
	}
	u := p.b.connect(id)
	p.users[id.ID] = u
	return u
}

// member returns a session for someone in a work item's assignment: the
// named person, a member of the role's group (named after the group), or an
// operator for an escalation.
func (p *people) member(w interpreter.WorkItem) *user {
	switch {
	case w.Escalation != nil:
		return p.as(operatorID)
	case w.AssignedTo.Person != "":
		return p.as(personID(strings.ToLower(w.AssignedTo.Person)))
	default:
		return p.as(personID("member-of-"+w.AssignedTo.Group+"@example.com", w.AssignedTo.Group))
	}
}

// player walks a run to its end over MCP, with agents, people and systems
// playing every step.
type player struct {
	t       *testing.T
	b       *baton
	proc    *interpreter.Process
	agent   *user
	people  *people
	starter *user
	mode    string
	runID   string

	// rejectOnce rejects each approval that has on_reject once;
	// escalateOnce escalates each agent step once and has an operator
	// return it.
	rejectOnce, escalateOnce bool
	rejected, escalated      map[string]bool
}

func newPlayer(t *testing.T, b *baton, proc *interpreter.Process, mode string) *player {
	b = b.in(t)
	ps := newPeople(b)
	return &player{
		t: t, b: b, proc: proc, mode: mode, people: ps,
		agent:    ps.as(agentID),
		starter:  ps.as(personID("starter@example.com")),
		rejected: map[string]bool{}, escalated: map[string]bool{},
	}
}

// prefer chooses a route: one into a wait_for step when there is one, so
// events get exercised, else the first.
func (p *player) prefer(routes []interpreter.Route) string {
	for _, r := range routes {
		if s := p.proc.Step(r.To); s != nil && s.Kind == interpreter.KindWaitFor {
			return r.To
		}
	}
	return routes[0].To
}

func (p *player) start(inputs map[string]any) view {
	p.t.Helper()
	if inputs == nil {
		inputs = samplesFor(p.proc.Inputs)
	}
	var v view
	args := map[string]any{"process": p.proc.Name, "inputs": inputs, "requestId": rid()}
	if p.mode != "" {
		args["mode"] = p.mode
	}
	p.starter.ok("start_run", args, &v)
	p.runID = v.Run.ID
	return v
}

func (p *player) wantMode() string {
	if p.mode == "" {
		return interpreter.ModeLive
	}
	return p.mode
}

func (p *player) checkItemMode(w interpreter.WorkItem) {
	p.t.Helper()
	want := ""
	if p.wantMode() == interpreter.ModeTest {
		want = interpreter.ModeTest
	}
	if w.Mode != want {
		p.t.Fatalf("work item %s (%s) says mode %q, want %q", w.ID, w.StepID, w.Mode, want)
	}
}

// play walks the run until it ends and returns the final view.
func (p *player) play() view {
	p.t.Helper()
	idle := 0
	for round := 0; round < 200; round++ {
		v := getRun(p.agent, p.runID)
		if v.Run.State == "ended" || v.Run.State == "cancelled" {
			return v
		}
		acted := false
		for _, it := range agentWork(p.agent, p.runID) {
			if it.Mode != p.wantMode() {
				p.t.Fatalf("get_work item %s says mode %q, want %q", it.StepID, it.Mode, p.wantMode())
			}
			c := claimStep(p.agent, p.runID, it.StepID)
			if c.Mode != p.wantMode() {
				p.t.Fatalf("claim of %s says mode %q, want %q", it.StepID, c.Mode, p.wantMode())
			}
			if p.escalateOnce && p.escalated[it.StepID] && (c.Handoff == nil || c.Handoff.Returned == nil) {
				p.t.Fatalf("%s: the claim after a return has handoff %+v", it.StepID, c.Handoff)
			}
			if p.escalateOnce && !p.escalated[it.StepID] {
				p.escalated[it.StepID] = true
				p.agent.ok("escalate", map[string]any{"token": c.Token, "note": "Cannot reach the system.", "requestId": rid()}, nil)
				acted = true
				continue
			}
			p.agent.ok("submit", submission(p.agent, c, p.prefer), nil)
			acted = true
		}
		v = getRun(p.agent, p.runID)
		for _, w := range v.WorkItems {
			p.checkItemMode(w)
			who := p.people.member(w)
			var mine *interpreter.WorkItem
			for _, pi := range personWork(who, p.runID) {
				p.checkItemMode(pi.WorkItem)
				if pi.Mode != p.wantMode() {
					p.t.Fatalf("person get_work item says mode %q", pi.Mode)
				}
				if pi.WorkItem.ID == w.ID {
					mine = &pi.WorkItem
				}
			}
			if mine == nil {
				p.t.Fatalf("%s does not see work item %s (%s) in get_work", who.id.ID, w.ID, w.StepID)
			}
			p.decide(who, *mine)
			acted = true
			break // every decision changes the snapshot: read again
		}
		if !acted {
			for _, s := range v.Steps {
				st := p.proc.Step(s.ID)
				if st.Kind == interpreter.KindWaitFor && s.State != nil && *s.State == "waiting" {
					var res struct {
						ConsumedBy *string `json:"consumedBy"`
					}
					p.agent.ok("send_event", map[string]any{"runId": p.runID, "name": st.Text, "data": map[string]any{"paid": true}, "requestId": rid()}, &res)
					if res.ConsumedBy == nil || *res.ConsumedBy != st.ID {
						p.t.Fatalf("event %s: consumedBy %v, want %s", st.Text, res.ConsumedBy, st.ID)
					}
					acted = true
				}
			}
		}
		if acted {
			idle = 0
			continue
		}
		if idle++; idle > 20 {
			p.t.Fatalf("%s: stuck; steps %s", p.proc.Name, describeSteps(v))
		}
		time.Sleep(250 * time.Millisecond)
	}
	p.t.Fatalf("%s: the run did not end", p.proc.Name)
	return view{}
}

// decide completes a work item the way its kind asks.
func (p *player) decide(who *user, w interpreter.WorkItem) {
	p.t.Helper()
	args := map[string]any{"runId": p.runID, "workItemId": w.ID, "snapshot": w.Snapshot, "requestId": rid()}
	s := p.proc.Step(w.StepID)
	switch {
	case w.Escalation != nil && p.escalateOnce && (w.Handoff == nil || w.Handoff.Returned == nil):
		args["decision"], args["note"] = "returned", "Try the other endpoint."
	case w.Kind == "approve" && w.Escalation == nil && p.rejectOnce && s.OnReject != "" && !p.rejected[s.ID]:
		p.rejected[s.ID] = true
		args["decision"], args["note"] = "rejected", "Needs another pass."
	case w.Kind == "approve" && w.Escalation == nil:
		args["decision"] = "approved"
	default:
		args["decision"] = "completed"
		args["output"] = samplesFor(w.Output)
		if ev := evidenceFor(who, w.Evidence); ev != nil {
			args["evidence"] = ev
		}
		if w.Next != nil {
			args["next"], args["reason"] = p.prefer(w.Next), "It fits."
		}
	}
	who.ok("decide", args, nil)
}

func describeSteps(v view) string {
	var b strings.Builder
	for _, s := range v.Steps {
		st := "null"
		if s.State != nil {
			st = *s.State
		}
		fmt.Fprintf(&b, "%s=%s ", s.ID, st)
	}
	return b.String()
}

func finishOutcomes(p *interpreter.Process) map[string]bool {
	out := map[string]bool{}
	for _, s := range p.Steps {
		if s.Kind == interpreter.KindFinish {
			out[s.Text] = true
		}
	}
	return out
}

// wantEndedAtFinish asserts that a run ended at one of its finishes, with
// every step settled and no work left.
func wantEndedAtFinish(t *testing.T, p *interpreter.Process, v view) {
	t.Helper()
	if v.Run.State != "ended" || v.Run.Outcome == nil || !finishOutcomes(p)[*v.Run.Outcome] {
		t.Fatalf("%s ended %s with outcome %v, want a finish outcome", p.Name, v.Run.State, v.Run.Outcome)
	}
	if v.Run.Ended == nil || v.Run.Ended.By != "server" || v.Run.Ended.Note != nil {
		t.Fatalf("ended = %+v, want by server with a null note", v.Run.Ended)
	}
	for _, s := range v.Steps {
		if s.State != nil && (*s.State == "ready" || *s.State == "claimed" || *s.State == "waiting") {
			t.Fatalf("step %s still %s after the end", s.ID, *s.State)
		}
	}
	if len(v.WorkItems) != 0 {
		t.Fatalf("work items remain after the end: %+v", v.WorkItems)
	}
}

// startSrc publishes src and starts a run of it as starter.
func startSrc(t *testing.T, b *baton, starter *user, src string, inputs map[string]any) view {
	t.Helper()
	pv := b.publish(src)
	if inputs == nil {
		inputs = map[string]any{}
	}
	var v view
	starter.ok("start_run", map[string]any{"process": pv.Name, "inputs": inputs, "requestId": rid()}, &v)
	return v
}

func decideArgs(v view, w *interpreter.WorkItem, decision string, extra map[string]any) map[string]any {
	args := map[string]any{"runId": v.Run.ID, "workItemId": w.ID, "snapshot": w.Snapshot, "decision": decision, "requestId": rid()}
	for k, x := range extra {
		args[k] = x
	}
	return args
}
