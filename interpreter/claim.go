package interpreter

import (
	"fmt"
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
	// Process and Version name the run's pinned process, whose body a
	// caller that asked for answers without it (the gateway) adds back.
	Process string `json:"process,omitempty"`
	Version int    `json:"version,omitempty"`
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
		return nil, Refuse(CodeNotFound, fmt.Sprintf("Run %s has no step %q.", m.run.ID, c.StepID))
	}
	if s.Kind != KindAgent {
		return nil, Refuse(CodeForbidden, fmt.Sprintf("Step %q is not an agent step (its kind is %s); only agent steps are claimed.", s.ID, s.Kind))
	}
	if c.Actor.Kind != ActorAgent {
		return nil, Refuse(CodeForbidden, "Only an agent identity can claim a step.")
	}
	if sr.State == StepClaimed && sr.Lease != nil {
		if sr.Lease.Holder == c.Actor.ID {
			return nil, Refuse(CodeConflict, "You already hold this step; use your token, or renew it.", IssueClaimedByYou)
		}
		return nil, Refuse(CodeConflict, "Another agent holds this step.", IssueClaimedByOther)
	}
	if sr.State != StepReady {
		return nil, Refuse(CodeConflict, fmt.Sprintf("Step %q is not ready (it is %s).", s.ID, sr.State), IssueNotReady)
	}
	exp := now.Add(c.Lease)
	sr.State = StepClaimed
	sr.Lease = &Lease{ID: c.LeaseID, Holder: c.Actor.ID, ExpiresAt: exp}
	sr.Progress = ""
	m.claimedAttempt(s.ID, now)
	if len(s.Tools) > 0 {
		m.stepTools(s.ID).Claims++
	}
	m.refreshState()
	m.touch(now)
	res := &ClaimResult{
		RunID:     m.run.ID,
		StepID:    s.ID,
		LeaseID:   c.LeaseID,
		ExpiresAt: FormatTime(exp),
		Mode:      m.run.Mode,
		Step:      claimStep(s, m.proc),
		Handoff:   handoffView(sr.Handoff),
		Body:      m.proc.Body,
		Data:      m.shownData(),
		Process:   m.run.Process,
		Version:   m.run.Version,
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
		return nil, nil, Refuse(CodeNotFound, fmt.Sprintf("Run %s has no step %q.", m.run.ID, stepID))
	}
	if sr.State != StepClaimed || sr.Lease == nil || sr.Lease.ID != leaseID {
		return nil, nil, Refuse(CodeStale, "This token's lease has ended or was replaced. Call get_work again.")
	}
	if by.ID != "" && (by.Kind != ActorAgent || by.ID != sr.Lease.Holder) {
		return nil, nil, Refuse(CodeForbidden, "This token belongs to the agent that claimed the step; claim a step of your own.")
	}
	return s, sr, nil
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
