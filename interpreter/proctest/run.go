package proctest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// Starter starts every case's run unless the case names a starter.
var Starter = interpreter.Actor{ID: "starter@example.com", Kind: interpreter.ActorPerson}

// Org is the organization the runs of cases are in: it goes into the
// idempotency key of every tool call.
const Org = "o_test"

// RunID is the id of every case's run.
const RunID = "r_1"

// leaseLength is the length of every claim's and renewal's lease.
const leaseLength = 10 * time.Minute

// Result is one case's result.
type Result struct {
	File string `json:"file"`
	Case string `json:"case"`
	Pos  Pos    `json:"pos"`
	OK   bool   `json:"ok"`
	// Failure says what went wrong when OK is false.
	Failure *Failure `json:"failure,omitempty"`
	// Actions counts the script entries that ran.
	Actions int `json:"actions"`
	// End is the run view after the last action that ran.
	End *interpreter.View `json:"-"`

	taken map[Route]bool
}

// Failure is where and how a case failed.
type Failure struct {
	Pos Pos `json:"pos"`
	// Step is the step the action was about, if any.
	Step string `json:"step,omitempty"`
	// Action is what the script did: "submit review", "after 48h0m0s".
	Action   string `json:"action"`
	Expected string `json:"expected"`
	Got      string `json:"got"`
}

// Env is what a case runs against besides its file: the process, and
// the tools registered for the baton-tools-1 profile.
type Env struct {
	Process *interpreter.Process
	Catalog *interpreter.ToolCatalog
	Roles   map[string]string
	// Children are the processes the test file names for its process
	// steps (processes:), by name; a process step whose child it does not
	// name is answered by the script alone.
	Children map[string]*interpreter.Process
}

// start is the start of a case's run.
func (env Env) start(inputs map[string]any, mode string, starter interpreter.Actor) interpreter.Start {
	return interpreter.Start{
		RunID: RunID, Process: env.Process, Version: 1, Roles: env.Roles, Inputs: inputs, Mode: mode, Starter: starter,
		Children: interpreter.BindLocal(env.Process, env.Children),
	}
}

// caseRun is one case running.
type caseRun struct {
	env    Env
	t      Target
	c      *Case
	leases map[string]*held // by agent|step
	n      int
	taken  map[Route]bool
}

// held is a lease an agent holds, as far as the script knows.
type held struct {
	id      string
	expires time.Time
}

// RunCase runs one case on t and returns its result.
func RunCase(env Env, file string, c *Case, t Target) *Result {
	r := &caseRun{env: env, t: t, c: c, leases: map[string]*held{}, taken: map[Route]bool{}}
	res := &Result{File: file, Case: c.Name, Pos: c.Pos, taken: r.taken}
	v, err := t.Start(env.start(r.inputs(), c.Mode, c.Starter))
	if err != nil {
		res.Failure = &Failure{Pos: c.Pos, Action: "start", Expected: "the run starts", Got: describeErr(err)}
		return res
	}
	observe(env.Process, v, r.taken)
	res.End = v
	for _, a := range c.Actions {
		res.Actions++
		v, f := r.do(a)
		if v != nil {
			observe(env.Process, v, r.taken)
			res.End = v
		}
		if f != nil {
			res.Failure = f
			return res
		}
	}
	res.OK = true
	return res
}

// inputs are the case's inputs, or samples of the process's; "now",
// "now+2h" and "now-1d" stand for times relative to the run's start.
func (r *caseRun) inputs() map[string]any {
	in := r.c.Inputs
	if in == nil {
		in = interpreter.Samples(r.env.Process.Inputs)
	}
	out := make(map[string]any, len(in))
	start := r.t.Now().Add(writeStep)
	for k, v := range in {
		if s, ok := v.(string); ok {
			if t, ok := relativeTime(s, start); ok {
				v = t
			}
		}
		out[k] = v
	}
	return out
}

func relativeTime(s string, start time.Time) (string, bool) {
	if s == "now" {
		return start.Format(time.RFC3339), true
	}
	if len(s) < 5 || !strings.HasPrefix(s, "now") || (s[3] != '+' && s[3] != '-') {
		return "", false
	}
	d, err := parseTestDuration(s[4:])
	if err != nil {
		return "", false
	}
	if s[3] == '-' {
		d = -d
	}
	return start.Add(d).Format(time.RFC3339), true
}

func (r *caseRun) leaseID() string {
	r.n++
	return fmt.Sprintf("l_%d", r.n)
}

func (r *caseRun) fail(a *Action, expected, got string) *Failure {
	pos := a.Pos
	if a.Expect != nil && expected != "" && !strings.HasPrefix(expected, "the action") {
		pos = a.Expect.Pos
	}
	return &Failure{Pos: pos, Step: a.Step, Action: a.What(), Expected: expected, Got: got}
}

// do runs one action and checks its expectations. It returns the run
// view after it (nil when there is none) and the failure, if any.
func (r *caseRun) do(a *Action) (*interpreter.View, *Failure) {
	out, err := r.act(a)
	var refusal *interpreter.Error
	switch {
	case errors.As(err, &refusal):
		if a.Expect == nil || a.Expect.Refused == nil {
			v, _ := r.t.View()
			return v, r.fail(a, "the action accepted", "refused: "+describeErr(refusal))
		}
		if f := r.refused(a, refusal); f != nil {
			v, _ := r.t.View()
			return v, f
		}
	case err != nil:
		v, _ := r.t.View()
		return v, r.fail(a, "the action done", err.Error())
	case a.Expect != nil && a.Expect.Refused != nil:
		v, _ := r.t.View()
		return v, r.fail(a, "refused: "+describeRefusal(a.Expect.Refused), "accepted")
	}
	v, err := r.t.View()
	if err != nil {
		return nil, r.fail(a, "the run's view", err.Error())
	}
	if a.Expect != nil {
		if f := r.expect(a, v, out); f != nil {
			return v, f
		}
	}
	return v, nil
}

func (r *caseRun) refused(a *Action, got *interpreter.Error) *Failure {
	want := a.Expect.Refused
	if want.Code != "" && string(got.Code) != want.Code {
		return r.fail(a, "refused: "+describeRefusal(want), "refused: "+describeErr(got))
	}
	for _, is := range want.Issues {
		if !slices.Contains(got.Issues, is) {
			return r.fail(a, "refused: "+describeRefusal(want), "refused: "+describeErr(got))
		}
	}
	return nil
}

func describeRefusal(r *Refusal) string {
	s := r.Code
	if s == "" {
		s = "any code"
	}
	if len(r.Issues) > 0 {
		s += " [" + strings.Join(r.Issues, "; ") + "]"
	}
	return s
}

func describeErr(err error) string {
	var e *interpreter.Error
	if errors.As(err, &e) {
		s := string(e.Code) + ": " + e.Message
		if len(e.Issues) > 0 {
			s += " [" + strings.Join(e.Issues, "; ") + "]"
		}
		return s
	}
	return err.Error()
}

// result is what an action returned besides the view.
type result struct {
	claim *interpreter.ClaimResult
	call  *interpreter.CallResult
}

func (r *caseRun) step(a *Action) (*interpreter.Step, error) {
	s := r.env.Process.Step(a.Step)
	if s == nil {
		ids := make([]string, 0, len(r.env.Process.Steps))
		for _, s := range r.env.Process.Steps {
			ids = append(ids, s.ID)
		}
		return nil, fmt.Errorf("the process has no step %q; its steps are %s", a.Step, strings.Join(ids, ", "))
	}
	return s, nil
}

func (r *caseRun) act(a *Action) (result, error) {
	var out result
	switch a.Kind {
	case ActExpect:
		return out, nil
	case ActAfter:
		return out, r.t.Advance(a.After)
	case ActCancel:
		reason := ""
		if a.Note != nil {
			reason = *a.Note
		}
		_, err := r.t.Write(interpreter.Cancel{Actor: a.Actor, Reason: reason}, Scripted{})
		return out, err
	case ActEvent:
		_, err := r.t.Write(interpreter.SendEvent{Name: a.Event, Data: a.Data, Actor: a.Actor}, Scripted{})
		return out, err
	case ActDecide:
		return out, r.decide(a)
	case ActChild:
		return out, r.endChildren(a)
	}
	if a.Kind == ActCall && a.Step == "" {
		a.Step = r.callStep(a)
	}
	s, err := r.step(a)
	if err != nil {
		return out, err
	}
	key := a.Actor.ID + "|" + s.ID
	if a.Kind == ActClaim {
		c, err := r.claim(a.Actor, s.ID)
		out.claim = c
		return out, err
	}
	l := r.leases[key]
	if l != nil && r.view().StepState(s.ID) != string(interpreter.StepClaimed) {
		// The lease ended without the script's word (a check sent the
		// step back, or time ran it out).
		delete(r.leases, key)
		l = nil
	}
	if l == nil {
		// Work without a claim of its own claims first.
		c, err := r.claim(a.Actor, s.ID)
		if err != nil {
			return out, err
		}
		out.claim = c
		l = r.leases[key]
	}
	switch a.Kind {
	case ActSubmit:
		sub := r.submission(a, s.Output, s.Evidence)
		_, err := r.t.Write(interpreter.Submit{StepID: s.ID, LeaseID: l.id, Actor: a.Actor, Submission: sub}, Scripted{Check: a.Check})
		if err == nil || !isRetryable(err) {
			delete(r.leases, key)
		}
		return out, err
	case ActEscalate:
		note := "I cannot go on with this step."
		if a.Note != nil {
			note = *a.Note
		}
		_, err := r.t.Write(interpreter.Escalate{StepID: s.ID, LeaseID: l.id, Actor: a.Actor, Note: note}, Scripted{})
		if err == nil {
			delete(r.leases, key)
		}
		return out, err
	case ActRenew, ActExpire:
		if a.Kind == ActRenew || a.Progress != "" {
			next := r.leaseID()
			raw, err := r.t.Write(interpreter.Renew{StepID: s.ID, LeaseID: l.id, Actor: a.Actor, NewLeaseID: next, Lease: leaseLength, Progress: a.Progress}, Scripted{})
			if err != nil {
				return out, err
			}
			var rr interpreter.RenewResult
			if err := json.Unmarshal(raw, &rr); err != nil {
				return out, err
			}
			l.id = next
			if t, err := time.Parse(time.RFC3339, rr.ExpiresAt); err == nil {
				l.expires = t
			}
		}
		if a.Kind == ActExpire {
			delete(r.leases, key)
			return out, r.t.Advance(l.expires.Sub(r.t.Now()) + time.Second)
		}
		return out, nil
	case ActCall:
		cr, err := r.call(a, s, l)
		out.call = cr
		return out, err
	}
	return out, fmt.Errorf("no action %s", a.Kind)
}

// callStep is the step a call without step: is made in: the one the
// agent holds a lease on, else the first that lists the tool, else the
// first with tools.
func (r *caseRun) callStep(a *Action) string {
	first, any := "", ""
	for _, s := range r.env.Process.Steps {
		if len(s.Tools) == 0 {
			continue
		}
		if r.leases[a.Actor.ID+"|"+s.ID] != nil {
			return s.ID
		}
		if any == "" {
			any = s.ID
		}
		if first == "" && s.ToolUse(a.Tool) != nil {
			first = s.ID
		}
	}
	if first != "" {
		return first
	}
	return any
}

func (r *caseRun) view() *interpreter.View {
	v, err := r.t.View()
	if err != nil {
		return nil
	}
	return v
}

func isRetryable(err error) bool {
	var e *interpreter.Error
	return errors.As(err, &e) && (e.Code == interpreter.CodeRetry || e.Code == interpreter.CodeNotAccepted)
}

func (r *caseRun) claim(agent interpreter.Actor, stepID string) (*interpreter.ClaimResult, error) {
	id := r.leaseID()
	raw, err := r.t.Write(interpreter.Claim{StepID: stepID, Actor: agent, LeaseID: id, Lease: leaseLength}, Scripted{})
	if err != nil {
		return nil, err
	}
	var c interpreter.ClaimResult
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	l := &held{id: id}
	if t, err := time.Parse(time.RFC3339, c.ExpiresAt); err == nil {
		l.expires = t
	}
	r.leases[agent.ID+"|"+stepID] = l
	return &c, nil
}

// submission is the work an action submits: what it gives, and samples
// and stand-ins for what it leaves out.
func (r *caseRun) submission(a *Action, output interpreter.Fields, evidence []string) interpreter.Submission {
	sub := interpreter.Submission{Output: a.Output, Evidence: a.Evidence, Summary: a.Summary, Next: a.Next, Reason: a.Reason}
	if !a.HasOutput {
		sub.Output = interpreter.Samples(output)
	}
	if !a.HasEvidence {
		for i, k := range evidence {
			sub.Evidence = append(sub.Evidence, interpreter.Evidence{Kind: k, Ref: standInRef(k, i)})
		}
	}
	if sub.Next != nil && sub.Reason == nil {
		why := "The script chose it."
		sub.Reason = &why
	}
	if a.Kind == ActSubmit && sub.Summary == nil {
		sum := "Done as the script says."
		sub.Summary = &sum
	}
	for _, e := range sub.Evidence {
		if e.Kind != "file" {
			continue
		}
		if sub.Files == nil {
			sub.Files = map[string]interpreter.FileCheck{}
		}
		sum := sha256.Sum256([]byte(e.Ref))
		sub.Files[e.Ref] = interpreter.FileCheck{Found: true, Matches: true, SHA256: hex.EncodeToString(sum[:])}
	}
	return sub
}

// actor is the script's actor with its role bound to the group the run
// assigns it.
func (r *caseRun) actor(a interpreter.Actor) interpreter.Actor {
	if a.Kind == interpreter.ActorPerson && len(a.Groups) == 1 && a.ID == roleMember(a.Groups[0]) {
		if g, ok := r.env.Roles[a.Groups[0]]; ok {
			a.Groups = []string{g}
		}
	}
	return a
}

func (r *caseRun) decide(a *Action) error {
	v, err := r.t.View()
	if err != nil {
		return err
	}
	who := r.actor(a.Actor)
	var on []interpreter.WorkItem
	for _, it := range v.WorkItems {
		if it.StepID == a.Step {
			on = append(on, it)
		}
	}
	if len(on) == 0 {
		return fmt.Errorf("no work item is open on step %s; open: %s", a.Step, describeWork(v))
	}
	it := on[0]
	for _, w := range on {
		if mayDecide(who, w) {
			it = w
			break
		}
	}
	c := interpreter.Decide{WorkItemID: it.ID, Snapshot: it.Snapshot, Decision: a.Decision, Actor: who, Note: a.Note}
	if a.Decision == interpreter.DecisionCompleted {
		c.Submission = r.submission(a, it.Output, it.Evidence)
	} else if a.HasOutput || a.HasEvidence || a.Next != nil {
		c.Submission = r.submission(a, nil, nil)
	}
	_, err = r.t.Write(c, Scripted{Check: a.Check})
	return err
}

// mayDecide says whether a work item is assigned to who.
func mayDecide(who interpreter.Actor, w interpreter.WorkItem) bool {
	if w.AssignedTo.Person != "" {
		return strings.EqualFold(w.AssignedTo.Person, who.ID)
	}
	return slices.Contains(who.Groups, w.AssignedTo.Group)
}

// call makes a tool call, resolved against the registration as the
// gateway resolves it.
func (r *caseRun) call(a *Action, s *interpreter.Step, l *held) (*interpreter.CallResult, error) {
	args, e := interpreter.CheckCallArguments(a.Arguments)
	if e != nil {
		return nil, e
	}
	digest, err := interpreter.CallDigest(a.Tool, args)
	if err != nil {
		return nil, err
	}
	cmd := interpreter.CallTool{
		StepID: s.ID, LeaseID: l.id, Actor: a.Actor, Tool: a.Tool, Arguments: args, CallDigest: digest,
		Key: interpreter.IdempotencyKey(Org, RunID, s.ID, digest), Timeout: 30 * time.Second,
	}
	if use := s.ToolUse(a.Tool); use != nil {
		var reg interpreter.CatalogTool
		ok := false
		if r.env.Catalog != nil {
			reg, ok = r.env.Catalog.Lookup(a.Tool)
		}
		if !ok {
			cmd.ResolveError = a.Tool + " is not registered"
		} else if res, err := interpreter.ResolveTool(*use, reg, r.env.Roles); err != nil {
			cmd.ResolveError = err.Error()
		} else {
			cmd.Resolved = res
		}
	}
	raw, err := r.t.Write(cmd, Scripted{Call: a.Answer})
	if err != nil {
		return nil, err
	}
	var cr interpreter.CallResult
	if err := json.Unmarshal(raw, &cr); err != nil {
		return nil, err
	}
	return &cr, nil
}
