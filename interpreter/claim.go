package interpreter

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Claim takes a ready agent step for the caller for one lease.
type Claim struct {
	StepID string
	Actor  Actor
	// LeaseID names the new lease; the caller makes it unique (for example
	// from the request id). The gateway signs tokens over run, step and it.
	LeaseID string
	// Lease is the lease length.
	Lease time.Duration
}

// ClaimStep is a step as claim and work items give it to the actor.
type ClaimStep struct {
	ID           string   `json:"id"`
	Instructions string   `json:"instructions"`
	Output       Fields   `json:"output"`
	Evidence     []string `json:"evidence"`
	Next         []Route  `json:"next"`
}

// ClaimResult is a claim's result without its token, which the gateway
// signs over RunID, StepID and LeaseID.
type ClaimResult struct {
	RunID     string    `json:"runId"`
	StepID    string    `json:"stepId"`
	LeaseID   string    `json:"leaseId"`
	ExpiresAt string    `json:"expiresAt"`
	Mode      string    `json:"mode"`
	Step      ClaimStep `json:"step"`
	Handoff   *Handoff  `json:"handoff"`
	Body      string    `json:"body"`
	Data      *Data     `json:"data"`
	// Tools and Journal are the step's tools and its journal, for the
	// baton-tools-1 extension the host renders; empty for a step without
	// tools.
	Tools   []ToolUse      `json:"tools,omitempty"`
	Journal []JournalEntry `json:"journal,omitempty"`
}

func (c Claim) apply(m *Machine, now time.Time) (any, error) {
	if c.LeaseID == "" || c.Lease <= 0 {
		return nil, fmt.Errorf("claim: lease id and a positive lease length are required")
	}
	if err := m.live(now); err != nil {
		return nil, err
	}
	s, sr := m.stepRun(c.StepID)
	if s == nil {
		return nil, refuse(CodeNotFound, fmt.Sprintf("Run %s has no step %q.", m.run.ID, c.StepID))
	}
	if s.Kind != KindAgent {
		return nil, refuse(CodeForbidden, fmt.Sprintf("Step %q is not an agent step (its kind is %s); only agent steps are claimed.", s.ID, s.Kind))
	}
	if c.Actor.Kind != ActorAgent {
		return nil, refuse(CodeForbidden, "Only an agent identity can claim a step.")
	}
	if sr.State == StepClaimed && sr.Lease != nil {
		if sr.Lease.Holder == c.Actor.ID {
			return nil, refuse(CodeConflict, "You already hold this step; use your token, or renew it.", IssueClaimedByYou)
		}
		return nil, refuse(CodeConflict, "Another agent holds this step.", IssueClaimedByOther)
	}
	if sr.State != StepReady {
		return nil, refuse(CodeConflict, fmt.Sprintf("Step %q is not ready (it is %s).", s.ID, sr.State), IssueNotReady)
	}
	exp := now.Add(c.Lease)
	sr.State = StepClaimed
	sr.Lease = &Lease{ID: c.LeaseID, Holder: c.Actor.ID, ExpiresAt: exp}
	sr.Progress = ""
	if len(s.Tools) > 0 {
		m.stepTools(s.ID).Claims++
	}
	m.refreshState()
	m.touch(now)
	res := &ClaimResult{
		RunID:     m.run.ID,
		StepID:    s.ID,
		LeaseID:   c.LeaseID,
		ExpiresAt: stamp(exp),
		Mode:      m.run.Mode,
		Step:      claimStep(s, m.proc),
		Handoff:   handoffView(sr.Handoff),
		Body:      m.proc.Body,
		Data:      m.shownData(),
	}
	if len(s.Tools) > 0 {
		res.Tools, res.Journal = s.Tools, m.Journal(s.ID)
	}
	return res, nil
}

func claimStep(s *Step, p *Process) ClaimStep {
	cs := ClaimStep{ID: s.ID, Instructions: s.Text, Output: s.Output, Evidence: s.Evidence}
	if s.NextList {
		cs.Next = s.Next
	}
	return cs
}

func handoffView(h *Handoff) *Handoff {
	if h.empty() {
		return nil
	}
	return h
}

// leased returns the step held by a live lease, or a stale refusal. A
// live lease belongs to the agent that claimed it: another identity
// presenting its token, even a person or operator whose id is the same
// text, is forbidden (spec §6 rule 2; docs/design.md). An
// empty actor is the host itself (a signal) and is not checked.
func (m *Machine) leased(stepID, leaseID string, by Actor) (*Step, *StepRun, error) {
	s, sr := m.stepRun(stepID)
	if s == nil {
		return nil, nil, refuse(CodeNotFound, fmt.Sprintf("Run %s has no step %q.", m.run.ID, stepID))
	}
	if sr.State != StepClaimed || sr.Lease == nil || sr.Lease.ID != leaseID {
		return nil, nil, refuse(CodeStale, "This token's lease has ended or was replaced. Call get_work again.")
	}
	if by.ID != "" && (by.Kind != ActorAgent || by.ID != sr.Lease.Holder) {
		return nil, nil, refuse(CodeForbidden, "This token belongs to the agent that claimed the step; claim a step of your own.")
	}
	return s, sr, nil
}

// Renew extends a lease with a new lease id; the old one is stale at once.
type Renew struct {
	StepID     string
	LeaseID    string
	Actor      Actor
	NewLeaseID string
	Lease      time.Duration
	// Progress, when not empty, replaces the progress note kept on the step.
	Progress string
}

// RenewResult is a renew's result without its token.
type RenewResult struct {
	RunID     string `json:"runId"`
	StepID    string `json:"stepId"`
	LeaseID   string `json:"leaseId"`
	ExpiresAt string `json:"expiresAt"`
}

func (c Renew) apply(m *Machine, now time.Time) (any, error) {
	if c.NewLeaseID == "" || c.Lease <= 0 {
		return nil, fmt.Errorf("renew: new lease id and a positive lease length are required")
	}
	if err := m.live(now); err != nil {
		return nil, err
	}
	_, sr, err := m.leased(c.StepID, c.LeaseID, c.Actor)
	if err != nil {
		return nil, err
	}
	exp := now.Add(c.Lease)
	sr.Lease = &Lease{ID: c.NewLeaseID, Holder: sr.Lease.Holder, ExpiresAt: exp}
	if c.Progress != "" {
		sr.Progress = c.Progress
	}
	// Neither the lease nor the progress note shows in get_run: a renew
	// leaves run.updatedAt as it was (SPEC-DECISIONS §30).
	return &RenewResult{RunID: m.run.ID, StepID: c.StepID, LeaseID: c.NewLeaseID, ExpiresAt: stamp(exp)}, nil
}

// FileCheck is what the host found for one file evidence reference.
type FileCheck struct {
	// Found is true when the upload exists in the organization.
	Found bool
	// Matches is true when the stored bytes still hash to SHA256.
	Matches bool
	SHA256  string
}

// Submission is the work offered to complete an agent or task step.
type Submission struct {
	Output   Values
	Evidence []Evidence
	// Summary is required (non-blank) from agents, optional from people.
	Summary *string
	Next    *string
	Reason  *string
	// Files holds the host's verification of each file reference in
	// Evidence, by ref.
	Files map[string]FileCheck
}

// Submit completes a claimed agent step.
type Submit struct {
	StepID  string
	LeaseID string
	Actor   Actor
	Submission
}

func (c Submit) apply(m *Machine, now time.Time) (any, error) {
	if err := m.live(now); err != nil {
		return nil, err
	}
	s, sr, err := m.leased(c.StepID, c.LeaseID, c.Actor)
	if err != nil {
		return nil, err
	}
	if sr.Checking != "" {
		return nil, errBeingChecked()
	}
	if s.Check != nil {
		// The objective rules first; a check follows (checking.go).
		return m.startCheck(s, sr, nil, c.Submission, true, c.Actor.ID, now)
	}
	if err := m.accept(s, c.Submission, true, c.Actor.ID, nil, now); err != nil {
		return nil, err
	}
	m.refreshState()
	m.touch(now)
	return m.View(now), nil
}

// accept applies the acceptance rules of spec §6 rule 3 and, when every
// rule holds, completes the step and moves on. Otherwise it returns
// not_accepted with every issue; the caller discards the changed state.
func (m *Machine) accept(s *Step, sub Submission, needSummary bool, by string, check json.RawMessage, now time.Time) error {
	var issues []string
	output := sub.Output
	if output == nil {
		output = map[string]any{}
	}
	issues = append(issues, CheckValues("output", s.Output, output)...)

	verified := map[string]bool{}
	evidence := make([]Evidence, 0, len(sub.Evidence))
	for i, e := range sub.Evidence {
		item := Evidence{Kind: e.Kind, Ref: e.Ref}
		switch e.Kind {
		case "file":
			fc, ok := sub.Files[e.Ref]
			switch {
			case !ok || !fc.Found:
				issues = append(issues, fmt.Sprintf("evidence %s: not found", e.Ref))
			case !fc.Matches:
				issues = append(issues, fmt.Sprintf("evidence %s: content does not match its hash", e.Ref))
			default:
				verified["file"] = true
				item.SHA256 = fc.SHA256
			}
		case "link":
			if strings.TrimSpace(e.Ref) == "" {
				issues = append(issues, fmt.Sprintf("evidence[%d].ref: missing", i))
			} else {
				verified["link"] = true
			}
		default:
			issues = append(issues, fmt.Sprintf("evidence[%d].kind: not one of file, link", i))
		}
		evidence = append(evidence, item)
	}
	for _, k := range s.Evidence {
		if !verified[k] && !hasKind(sub.Evidence, k) {
			issues = append(issues, fmt.Sprintf("evidence: %s required", k))
		}
	}

	to := ""
	if s.NextList {
		names := routeNames(s.Next)
		switch {
		case sub.Next == nil || strings.TrimSpace(*sub.Next) == "":
			issues = append(issues, "next: required, one of "+names)
		case !hasRoute(s.Next, *sub.Next):
			issues = append(issues, "next: not one of "+names)
		default:
			to = *sub.Next
		}
		if sub.Reason == nil || strings.TrimSpace(*sub.Reason) == "" {
			issues = append(issues, "reason: required")
		}
	} else {
		if sub.Next != nil {
			issues = append(issues, "next: not allowed, this step has one next")
		}
		if sub.Reason != nil {
			issues = append(issues, "reason: not allowed, this step has one next")
		}
		to = m.single(s)
	}
	if needSummary && (sub.Summary == nil || strings.TrimSpace(*sub.Summary) == "") {
		issues = append(issues, "summary: missing")
	}

	rec := &Record{Output: output, Check: check, By: by, At: stamp(now)}
	if len(sub.Evidence) > 0 {
		rec.Evidence = evidence
	}
	if sub.Summary != nil && strings.TrimSpace(*sub.Summary) != "" {
		rec.Summary = *sub.Summary
	}
	if s.NextList {
		rec.Next = to
		if sub.Reason != nil {
			rec.Reason = *sub.Reason
		}
	}
	m.record(s.ID, rec)
	if size := m.dataSize(); size > m.run.Limits.RunDataBytes {
		issues = append(issues, fmt.Sprintf("run data: over %d bytes", m.run.Limits.RunDataBytes))
	}
	if len(issues) > 0 {
		return refuse(CodeNotAccepted, "The submission was not accepted: "+strings.Join(issues, "; ")+".", issues...)
	}
	// The record is in place; mark the step done without recording again.
	m.complete(s, nil, now)
	m.advance(s, to, now)
	return nil
}

func hasKind(ev []Evidence, kind string) bool {
	for _, e := range ev {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

func hasRoute(routes []Route, to string) bool {
	for _, r := range routes {
		if r.To == to {
			return true
		}
	}
	return false
}

func routeNames(routes []Route) string {
	names := make([]string, len(routes))
	for i, r := range routes {
		names[i] = r.To
	}
	return strings.Join(names, ", ")
}

// NoteRefusal records the issues of a refused submission into the step's
// handoff, so whoever attempts the step next sees them (spec §3.3). Refused
// submissions themselves change nothing; the host sends this afterwards. It
// does not change run data, so snapshots stay current. A lease that is no
// longer current makes it a no-op.
type NoteRefusal struct {
	StepID  string
	LeaseID string
	Issues  []string
}

func (c NoteRefusal) apply(m *Machine, now time.Time) (any, error) {
	if err := m.live(now); err != nil {
		return nil, err
	}
	_, sr, err := m.leased(c.StepID, c.LeaseID, Actor{})
	if err != nil {
		return nil, err
	}
	if sr.Handoff == nil {
		sr.Handoff = &Handoff{}
	}
	sr.Handoff.Issues = append([]string(nil), c.Issues...)
	// The handoff of a claimed step shows in no view: keeping the issues
	// changes nothing get_run answers (SPEC-DECISIONS §30).
	return nil, nil
}

// Escalate hands a claimed agent step to the operators with a note.
type Escalate struct {
	StepID  string
	LeaseID string
	Actor   Actor
	Note    string
}

func (c Escalate) apply(m *Machine, now time.Time) (any, error) {
	if strings.TrimSpace(c.Note) == "" {
		return nil, refuse(CodeInvalid, "An escalation needs a note saying why the step cannot be finished.", "note: required")
	}
	if err := m.live(now); err != nil {
		return nil, err
	}
	s, sr, err := m.leased(c.StepID, c.LeaseID, c.Actor)
	if err != nil {
		return nil, err
	}
	sr.State = StepWaiting
	sr.Lease, sr.Progress = nil, ""
	m.openNewItem(s.ID, ItemEscalation, Assignee{Group: m.run.Operators}, &Escalation{Note: c.Note, By: c.Actor.ID, At: stamp(now)}, now)
	m.refreshState()
	m.touch(now)
	return m.View(now), nil
}

// ClaimWire is claim's result on the wire (tools.md).
type ClaimWire struct {
	Token     string    `json:"token"`
	ExpiresAt string    `json:"expiresAt"`
	Mode      string    `json:"mode"`
	Step      ClaimStep `json:"step"`
	Handoff   *Handoff  `json:"handoff"`
	Body      string    `json:"body"`
	Data      *Data     `json:"data"`
	// Extensions holds what a server profile adds, by profile name.
	Extensions map[string]any `json:"extensions,omitempty"`
}

// Wire returns the tools.md shape of the result with the signed token.
func (r *ClaimResult) Wire(token string) ClaimWire {
	return ClaimWire{Token: token, ExpiresAt: r.ExpiresAt, Mode: r.Mode, Step: r.Step, Handoff: r.Handoff, Body: r.Body, Data: r.Data}
}

// RenewWire is renew's result on the wire (tools.md).
type RenewWire struct {
	Token     string `json:"token"`
	ExpiresAt string `json:"expiresAt"`
}

// Wire returns the tools.md shape of the result with the signed token.
func (r *RenewResult) Wire(token string) RenewWire {
	return RenewWire{Token: token, ExpiresAt: r.ExpiresAt}
}
