package interpreter

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Decide is a person's decision on a work item (spec §3.4).
type Decide struct {
	WorkItemID string
	Snapshot   string
	Decision   string
	Actor      Actor
	Note       *string
	Submission
}

func blank(s *string) bool { return s == nil || strings.TrimSpace(*s) == "" }

// argumentIssues are the combinations of arguments decide forbids, checked
// before anything else (SPEC-DECISIONS §1).
func (c Decide) argumentIssues() []string {
	var issues []string
	switch c.Decision {
	case DecisionCompleted, DecisionApproved, DecisionRejected, DecisionReturned, DecisionFailed:
	default:
		return []string{"decision: not one of completed, approved, rejected, returned, failed"}
	}
	if c.Decision != DecisionCompleted {
		if c.Next != nil {
			issues = append(issues, "next: only with completed")
		}
		if c.Reason != nil {
			issues = append(issues, "reason: only with completed")
		}
		if c.Output != nil {
			issues = append(issues, "output: only with completed")
		}
		if c.Evidence != nil {
			issues = append(issues, "evidence: only with completed")
		}
		if c.Summary != nil {
			issues = append(issues, "summary: only with completed")
		}
	} else if c.Note != nil {
		issues = append(issues, "note: not allowed with completed")
	}
	switch c.Decision {
	case DecisionRejected, DecisionReturned, DecisionFailed:
		if blank(c.Note) {
			issues = append(issues, "note: required")
		}
	}
	return issues
}

func (c Decide) apply(m *Machine, now time.Time) (any, error) {
	if err := CheckDecideArguments(c); err != nil {
		return nil, err
	}
	it := m.item(c.WorkItemID)
	if it != nil && !hasString(it.Kind.Decisions(), c.Decision) {
		issue := fmt.Sprintf("decision: not one of %s", strings.Join(it.Kind.Decisions(), ", "))
		return nil, Refuse(CodeInvalid, fmt.Sprintf("Work item %s does not accept %q.", it.ID, c.Decision), issue)
	}
	if err := m.live(now); err != nil {
		return nil, err
	}
	if it != nil && !it.Open {
		return nil, Refuse(CodeConflict, fmt.Sprintf("Work item %s was already decided.", it.ID), IssueAlreadyDecided)
	}
	if it != nil && it.Checking != "" {
		return nil, errBeingChecked()
	}
	if it == nil {
		return nil, Refuse(CodeNotFound, fmt.Sprintf("Run %s has no work item %q.", m.run.ID, c.WorkItemID))
	}
	if c.Snapshot != m.Snapshot() {
		return nil, Refuse(CodeStale, "The run data changed since you read it. Call get_run for a fresh snapshot and decide again.")
	}
	if !c.Actor.Human() {
		return nil, Refuse(CodeForbidden, "Only a person decides work items.")
	}
	if !m.assigned(it, c.Actor) {
		return nil, Refuse(CodeForbidden, fmt.Sprintf("Work item %s is not assigned to you.", it.ID))
	}
	s, sr := m.stepRun(it.StepID)
	by := c.Actor.ID
	mark := len(m.effects)
	if it.Call != "" {
		if err := m.decideCall(s, sr, it, c, now); err != nil {
			return nil, err
		}
		m.noticeDecided(mark, it, c.Decision, by, now)
		m.refreshState()
		m.touch(now)
		return m.View(now), nil
	}
	var check json.RawMessage
	if it.Escalation != nil {
		// A check's unsure verdict goes with the escalation's outcome:
		// into the record when a person completes the step, into the
		// handoff when they return it (profile-check §3).
		check = it.Escalation.Check
		sr.PendingCheck = nil
		m.decidedAttempt(s.ID, it.Escalation, c.Decision)
	}
	switch c.Decision {
	case DecisionCompleted:
		sub := c.Submission
		if it.Escalation != nil && it.Escalation.Candidate != nil && sub.Output == nil {
			// completed without output takes the held candidate (tools.md).
			sub = candidateSubmission(it.Escalation.Candidate, sub)
		}
		if it.Kind == ItemTask && s.Check != nil {
			// A person's ordinary task completion is checked; an
			// escalated step completed by a person is not.
			return m.startCheck(s, sr, it, sub, false, by, now)
		}
		if err := m.accept(s, sub, false, by, check, now); err != nil {
			return nil, err
		}
	case DecisionApproved:
		rec := &Record{Decision: DecisionApproved, Note: nonBlank(c.Note), By: by, At: FormatTime(now)}
		m.complete(s, rec, now)
		m.advance(s, m.single(s), now)
	case DecisionRejected:
		rec := &Record{Decision: DecisionRejected, Note: c.Note, By: by, At: FormatTime(now)}
		m.complete(s, rec, now)
		if s.OnReject == "" {
			note := *c.Note
			m.end(RunEnded, DecisionRejected, &Ended{By: by, At: FormatTime(now), Note: &note})
			break
		}
		m.rework(s, s.OnReject, now)
	case DecisionReturned:
		it.Open = false
		if sr.Handoff == nil {
			sr.Handoff = &Handoff{}
		}
		sr.Handoff.Returned = &Returned{Note: *c.Note, By: by, At: FormatTime(now)}
		if len(check) > 0 {
			sr.Handoff.Check = check
			sr.Handoff.Issues = checkLines(s, check, m.run.Limits.Check)
		}
		if s.Kind == KindTask {
			a, fail := m.assignee(s)
			if fail != "" {
				m.failStep(s, fail, "server", now)
				break
			}
			m.openNewItem(s.ID, ItemTask, a, nil, now)
			break
		}
		sr.State = StepReady
	case DecisionFailed:
		m.failStep(s, *c.Note, by, now)
	}
	m.noticeDecided(mark, it, c.Decision, by, now)
	m.refreshState()
	m.touch(now)
	return m.View(now), nil
}

func nonBlank(s *string) *string {
	if blank(s) {
		return nil
	}
	return s
}

func hasString(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// assigned reports whether the actor may decide the item: a member of its
// group, the person it names, or, for escalations, any operator.
func (m *Machine) assigned(it *Item, a Actor) bool {
	if (it.Kind == ItemEscalation || it.Kind == ItemCallOutcome) && a.Kind == ActorOperator {
		return true
	}
	if it.Kind == ItemCallApproval {
		// The step's approvers and, when both name some, the
		// registration's too (profile-tools §3).
		return ResolvedTool{Approvers: it.Approvers, Floor: it.Floor}.MayApprove(a.Groups)
	}
	if it.AssignedTo.Group != "" {
		return a.inGroup(it.AssignedTo.Group)
	}
	return it.AssignedTo.Person != "" && strings.EqualFold(it.AssignedTo.Person, a.ID)
}

// rework returns the run to step target after approval rejected it (spec
// §3.1, SPEC-DECISIONS §12–13 and §31, profile-parallel §3). Every step
// whose current completion is later than the target's latest completion
// moves its current fields into history and becomes null; when the target
// never completed, nothing but the target moves. Returning to a parallel
// step rewinds its whole region: the branches completed after the fork,
// not after the join. Inside a parallel branch only that branch is
// touched. The rejecting approval keeps its decision current with state
// null. The target starts a fresh attempt.
func (m *Machine) rework(approval *Step, target string, now time.Time) {
	t, tr := m.stepRun(target)
	cutoff, completed := tr.DoneSeq, tr.DoneSeq > 0
	if t.Kind == KindParallel {
		cutoff, completed = tr.AttemptSeq, tr.State == StepDone
	}
	ref, inBranch := m.branch[target]
	for i, sr := range m.run.Steps {
		s := m.proc.Steps[i]
		if !completed || s.ID == approval.ID || s.ID == target {
			continue
		}
		if inBranch && m.branch[s.ID] != ref {
			continue
		}
		d := m.run.Data.Steps[s.ID]
		current := sr.State == StepDone || (d != nil && d.Record != nil)
		after := (current && sr.DoneSeq > cutoff) || (sr.State.Open() && sr.AttemptSeq > cutoff)
		if !after {
			continue
		}
		if sr.State.Open() {
			m.endAttempt(s, AttemptCancelled, ByServer, now)
		}
		m.retire(s.ID)
		if it := m.openItem(s.ID); it != nil {
			it.Open = false
		}
		m.rewind(sr)
	}
	_, ar := m.stepRun(approval.ID)
	m.rewind(ar)
	m.retire(t.ID)
	if it := m.openItem(t.ID); it != nil {
		it.Open = false
	}
	m.rewind(tr)
	m.activate(t.ID, now)
}

// rewind makes a step unreached again, keeping when it last completed;
// children it still runs are cancelled.
func (m *Machine) rewind(sr *StepRun) {
	m.dropChildren(sr, "server", fmt.Sprintf("parent run %s went back to an earlier step", m.run.ID))
	*sr = StepRun{ID: sr.ID, DoneSeq: sr.DoneSeq}
}

// CheckDecideArguments refuses, as invalid, the argument combinations
// decide forbids whatever the run's state (SPEC-DECISIONS §1). A host can
// call it before it reaches the run.
func CheckDecideArguments(c Decide) error {
	if issues := c.argumentIssues(); len(issues) > 0 {
		return Refuse(CodeInvalid, "These decide arguments do not go together: "+strings.Join(issues, "; ")+".", issues...)
	}
	return nil
}
