package interpreter

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// This file runs the check profile's check on a submission (profile-check
// §3), in two commands around the evaluator, which the host calls between
// them (the Need and Reply of needs.go):
//
//  1. A Submit (or a person's completed Decide on a task) to a checked
//     step applies the objective rules of core §6 rule 3. When they pass,
//     nothing is recorded yet: the step (or item) is marked as being
//     checked, so its lease does not run out and other submissions wait,
//     and the command answers a *CheckNeeded with what the evaluator is
//     shown.
//  2. checkDone, which Machine.Answer makes from the need and the host's
//     CheckReply, carries the evaluator's answers (or its failure) and
//     applies the verdict: pass completes the step, fail refuses the
//     submission (the verdict and the issues going to the handoff), unsure
//     escalates it with the submission held as the candidate, advisory
//     records the verdict and completes whatever it is.
//
// Every verdict is judged here, by JudgeCheck, so the run's answer is a
// function of the evaluator's answers alone.

// CheckNeeded is the answer of a submission that passed the objective
// rules of a checked step: the host asks the evaluator about Request and
// hands its CheckReply to Machine.Answer.
type CheckNeeded struct {
	CheckID string        `json:"checkId"`
	StepID  string        `json:"stepId"`
	Request *CheckRequest `json:"request"`
	// submission, by and workItemID are the checked submission, its
	// author and, for a person's task, its work item.
	submission Submission
	by         string
	workItemID string
}

// checkDone applies the evaluator's answers to the check CheckID.
type checkDone struct {
	CheckID string
	StepID  string
	// WorkItemID is set when a person's task completion was checked.
	WorkItemID string
	// Submission and By are the checked submission and its author.
	Submission Submission
	By         string
	// Request is what the evaluator was shown (CheckNeeded.Request).
	Request *CheckRequest
	// Answers are the evaluator's answers; nil when it did not answer.
	Answers *CheckAnswers
	// Failure says why the evaluator did not answer; Model what it is.
	Failure string
	Model   string
}

func errBeingChecked() *Error {
	return Refuse(CodeConflict, "A submission of this step is being checked; wait for its answer before sending another.")
}

// startCheck applies the objective rules to a submission of a checked step
// (on a copy, so nothing is recorded) and, when they pass, marks the step
// and the item (when a person's task is checked) as being checked.
func (m *Machine) startCheck(s *Step, sr *StepRun, it *Item, sub Submission, needSummary bool, by string, now time.Time) (any, error) {
	if err := m.clone().accept(s, sub, needSummary, by, nil, now); err != nil {
		return nil, err
	}
	req, err := NewCheckRequest(m.proc, s, m.shownData(), sub, m.run.Limits.Check)
	if err != nil {
		return nil, err
	}
	m.run.NextCheck++
	id := fmt.Sprintf("c_%d", m.run.NextCheck)
	sr.Checking = id
	if it != nil {
		it.Checking = id
	}
	need := &CheckNeeded{CheckID: id, StepID: s.ID, Request: req, submission: sub, by: by}
	if it != nil {
		need.workItemID = it.ID
	}
	return need, nil
}

// apply settles the check: the run view when the submission was accepted
// (the step completed, or escalated on an unsure verdict), or the refusal
// its caller gets.
func (c checkDone) apply(m *Machine, now time.Time) (any, error) {
	if c.Request == nil {
		return nil, errors.New("check done: the request the evaluator was shown is required")
	}
	s, sr := m.stepRun(c.StepID)
	if s == nil || sr.Checking != c.CheckID {
		return &settled{refusal: Refuse(CodeStale, "The step is no longer the one that was checked. Call get_work again.")}, nil
	}
	sr.Checking = ""
	var it *Item
	if c.WorkItemID != "" {
		if it = m.item(c.WorkItemID); it != nil {
			it.Checking = ""
		}
	}
	// The run may have ended while the evaluator worked. Time has not
	// acted on the step meanwhile (its lease waited for the check), and
	// the loop applies what it changed elsewhere once this is done.
	if m.run.State.Over() {
		return &settled{refusal: ErrRunEnded()}, nil
	}
	if (it == nil && sr.State != StepClaimed) || (it != nil && !it.Open) {
		return &settled{refusal: Refuse(CodeStale, "The step is no longer the one that was checked. Call get_work again.")}, nil
	}
	limits := m.run.Limits.Check
	var verdict *CheckVerdict
	var lines []string
	if c.Answers != nil && c.Failure == "" {
		var err error
		if verdict, lines, err = JudgeCheck(s, c.Request, c.Answers, limits, now); err != nil {
			c.Failure, c.Model = err.Error(), c.Answers.Model
			verdict = nil
		}
	}
	if verdict == nil {
		if !s.Advisory {
			// Nothing changed: the caller sends the same requestId again.
			return &settled{refusal: Refuse(CodeRetry, "The check's evaluator did not answer ("+c.Failure+"); retry with the same requestId.")}, nil
		}
		verdict = NewCheckErrorVerdict(s, c.Model, now)
	}
	vb, err := json.Marshal(verdict)
	if err != nil {
		return nil, err
	}
	m.checkedAttempt(s.ID, verdict, now)
	switch {
	case s.Advisory || verdict.Verdict == VerdictPass:
		trial := m.clone()
		if err := trial.accept(s, c.Submission, it == nil, c.By, vb, now); err != nil {
			e, _ := err.(*Error)
			return &settled{refusal: e}, nil
		}
		if it != nil {
			m.noticeDecided(len(m.effects), it, DecisionCompleted, c.By, now)
		}
		m.adopt(trial)
	case verdict.Verdict == VerdictFail:
		// Run data does not change; the next attempt reads the verdict
		// and its lines in the handoff (profile-check §3).
		if sr.Handoff == nil {
			sr.Handoff = &Handoff{}
		}
		sr.Handoff.Check, sr.Handoff.Issues = vb, lines
		if it != nil {
			// A person's task shows its handoff on its work item
			// (tools.md: "a task bounced by a check carries
			// handoff.check"), so get_run changed.
			m.touch(now)
		}
		e := Refuse(CodeNotAccepted, "A check failed the submission: "+joinIssues(lines)+".", lines...)
		return &settled{refusal: e}, nil
	default: // unsure: escalate as escalate does, the submission held.
		cand := m.candidate(s, c.Submission, c.By, now)
		esc := &Escalation{Note: "The check was unsure of this submission; decide it in the submitter's place.", By: c.By, At: FormatTime(now), Check: vb, Candidate: cand}
		if it != nil {
			it.Open = false
		}
		sr.State = StepWaiting
		sr.Lease, sr.Progress = nil, ""
		sr.PendingCheck = vb
		m.openNewItem(s.ID, ItemEscalation, Assignee{Group: m.run.Operators}, esc, now)
	}
	m.refreshState()
	m.touch(now)
	return &settled{result: m.View(now)}, nil
}

// candidate is the record a held submission would make.
func (m *Machine) candidate(s *Step, sub Submission, by string, now time.Time) *Record {
	rec := &Record{Output: sub.Output, By: by, At: FormatTime(now)}
	if rec.Output == nil {
		rec.Output = map[string]any{}
	}
	for _, e := range sub.Evidence {
		item := Evidence{Kind: e.Kind, Ref: e.Ref}
		if fc, ok := sub.Files[e.Ref]; ok && e.Kind == "file" {
			item.SHA256 = fc.SHA256
		}
		rec.Evidence = append(rec.Evidence, item)
	}
	if sub.Summary != nil {
		rec.Summary = *sub.Summary
	}
	if s.NextList {
		if sub.Next != nil {
			rec.Next = *sub.Next
		}
		if sub.Reason != nil {
			rec.Reason = *sub.Reason
		}
	}
	return rec
}

// candidateSubmission is the submission a held candidate stands for, its
// file evidence verified when it was submitted. A person completing the
// item may still add a summary of their own.
func candidateSubmission(c *Record, person Submission) Submission {
	sub := Submission{Output: c.Output, Files: map[string]FileCheck{}}
	for _, e := range c.Evidence {
		sub.Evidence = append(sub.Evidence, Evidence{Kind: e.Kind, Ref: e.Ref})
		if e.Kind == "file" {
			sub.Files[e.Ref] = FileCheck{Found: true, Matches: true, SHA256: e.SHA256}
		}
	}
	if c.Summary != "" {
		s := c.Summary
		sub.Summary = &s
	}
	if person.Summary != nil {
		sub.Summary = person.Summary
	}
	if c.Next != "" {
		n, r := c.Next, c.Reason
		sub.Next, sub.Reason = &n, &r
	}
	return sub
}

// checkLines are the issues lines of a recorded verdict.
func checkLines(s *Step, verdict json.RawMessage, limits CheckLimits) []string {
	var v CheckVerdict
	if err := json.Unmarshal(verdict, &v); err != nil {
		return nil
	}
	return CheckIssues(s, &v, limits)
}

func joinIssues(lines []string) string {
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += "; "
		}
		out += l
	}
	return out
}
