package interpreter

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// This file runs the baton-tools-1 profile's call_tool (docs/
// profile-tools.md §5–§8) on the run: the journal of each step's calls,
// the approval of an approval_required call by a person, and the answer on
// a call whose outcome is unknown. A call that must be sent is two
// commands around the host's downstream call, as a check is (check_commands.go):
// CallTool journals it STARTED and answers *CallNeeded; callDone, which
// Machine.Answer makes from the need and the host's CallReply, journals
// the tool's answer.

// JournalResultBytes bounds a downstream result as the journal keeps it:
// the agent that made the call gets the whole result (up to
// MaxToolResultBytes); the journal, which travels with the run's state,
// keeps a result this long or a note that it was longer.
const JournalResultBytes = 8192

// JournalRunBytes bounds a run's journals together, each entry counted as
// its arguments, its result as kept and journalEntryBytes for the rest:
// the journal travels with the run's state, which Temporal carries in one
// payload of at most 2 MiB beside the run data and the process (docs/
// design.md, "A run stays far below what Temporal carries"). A new call
// that would pass it is not_accepted; a result that would is kept as a
// note of its length.
const JournalRunBytes = 262144

// journalEntryBytes is what an entry's fields other than its arguments
// and result take, about, as JSON.
const journalEntryBytes = 512

// StepTools is one step's part of the profile in a run: how many times it
// was claimed (a journal entry's attempt) and its journal, kept across
// attempts and rework for the life of the run.
type StepTools struct {
	Claims  int             `json:"claims"`
	Journal []*JournalEntry `json:"journal,omitempty"`
	// Sending lists the digests of the calls being sent right now.
	Sending []string `json:"sending,omitempty"`
}

// CallTool is an agent's call of one of its step's tools (profile-tools
// §6). The host resolves what the machine cannot know: the registration
// as it stands (Resolved, or ResolveError when the call may not be made)
// and the tool's input schema (ArgumentIssues).
type CallTool struct {
	StepID  string
	LeaseID string
	Actor   Actor
	// Tool is "server/tool"; Arguments are compacted, as first sent;
	// CallDigest is CallDigest of the two.
	Tool       string
	Arguments  json.RawMessage
	CallDigest string
	// Key is the call's idempotency key (IdempotencyKey).
	Key string
	// Resolved is the step's tool under the registration; ResolveError,
	// when set, says why the tool may not be called.
	Resolved     ResolvedTool
	ResolveError string
	// ArgumentIssues are the issues of the arguments against the tool's
	// input schema, when the host knows it.
	ArgumentIssues []string
	// HasTestURL reports whether the server has an endpoint for test runs.
	HasTestURL bool
	// Timeout is the server's timeout for one call.
	Timeout time.Duration
}

// CallNeeded is the answer of a call that must be sent: the host sends it
// (as the run's activity) and hands its CallReply to Machine.Answer.
type CallNeeded struct {
	StepID      string          `json:"stepId"`
	Tool        string          `json:"tool"`
	Arguments   json.RawMessage `json:"arguments"`
	Digest      string          `json:"digest"`
	Key         string          `json:"key"`
	Policy      Policy          `json:"policy"`
	Idempotency Idempotency     `json:"idempotency"`
	// Test sends it to the server's test endpoint.
	Test    bool          `json:"test,omitempty"`
	Timeout time.Duration `json:"timeout"`
}

// callDone journals the outcome of a call the host sent.
type callDone struct {
	StepID string
	Digest string
	// Result is the tool's answer (a CallToolResult), IsError its flag;
	// nil when there is no answer.
	Result  json.RawMessage
	IsError bool
	// NotSent is true when the call surely did not reach the tool; Why
	// says what happened when there is no answer.
	NotSent bool
	Why     string
}

// stepTools returns the step's part, made on first use.
func (m *Machine) stepTools(id string) *StepTools {
	if m.run.Tools == nil {
		m.run.Tools = map[string]*StepTools{}
	}
	st := m.run.Tools[id]
	if st == nil {
		st = &StepTools{}
		m.run.Tools[id] = st
	}
	return st
}

// Journal returns a step's journal, oldest first.
func (m *Machine) Journal(stepID string) []JournalEntry {
	st := m.run.Tools[stepID]
	if st == nil {
		return []JournalEntry{}
	}
	out := make([]JournalEntry, len(st.Journal))
	for i, e := range st.Journal {
		out[i] = *e
	}
	return out
}

func (st *StepTools) entry(digest string) *JournalEntry {
	for _, e := range st.Journal {
		if e.Digest == digest {
			return e
		}
	}
	return nil
}

func (st *StepTools) sending(digest string) bool { return slices.Contains(st.Sending, digest) }

func (c CallTool) apply(m *Machine, now time.Time) (any, error) {
	if err := m.live(now); err != nil {
		return nil, err
	}
	s, sr, err := m.leased(c.StepID, c.LeaseID, c.Actor)
	if err != nil {
		return nil, err
	}
	use := s.ToolUse(c.Tool)
	if use == nil {
		names := make([]string, len(s.Tools))
		for i, t := range s.Tools {
			names[i] = t.Ref
		}
		return nil, Refuse(CodeForbidden, fmt.Sprintf("Step %q may not call %s; its tools are %s.", s.ID, c.Tool, strings.Join(names, ", ")))
	}
	if c.ResolveError != "" {
		return nil, Refuse(CodeForbidden, fmt.Sprintf("%s may not be called now: %s.", c.Tool, c.ResolveError))
	}
	st := m.stepTools(s.ID)
	e := st.entry(c.CallDigest)
	if e != nil && e.Tool == c.Tool {
		// An entry was made under the policy of its first call; an
		// operator may have tightened the tool since. The tighter of the
		// two applies from now on: a read that ran is answered from the
		// journal once the tool writes, and a call not yet done that now
		// needs approval is proposed before it is sent again.
		e.Policy = e.Policy.Tightest(c.Resolved.Policy)
		switch e.State {
		case CallCompleted, CallFailed:
			if e.Policy != PolicyRead {
				return e.answer(true, "answered from the journal; it is not sent again"), nil
			}
		case CallProposed:
			return e.answer(true, "still waits for a person's decision; stop, and claim the step again after it"), nil
		case CallRejected:
			return e.answer(true, "was rejected by a person; read the note, and change the call if another one may do"), nil
		case CallUnknown:
			return e.answer(true, "has an outcome no one knows yet; a person was asked; stop, and claim the step again after their answer"), nil
		case CallStarted:
			if st.sending(c.CallDigest) {
				return nil, Refuse(CodeRetry, fmt.Sprintf("%s is being sent right now; retry with the same requestId.", c.Tool))
			}
		}
	}
	for _, o := range st.Journal {
		if o.Tool == c.Tool && o.State == CallApproved && o.Digest != c.CallDigest {
			return nil, ErrDivergentCall(c.Tool, o.Digest, o.Attempt, c.CallDigest)
		}
	}
	if e == nil {
		if len(c.ArgumentIssues) > 0 {
			return nil, Refuse(CodeNotAccepted, "The arguments do not match the tool's input schema: "+strings.Join(c.ArgumentIssues, "; ")+".", c.ArgumentIssues...)
		}
		if len(st.Journal) >= MaxToolCallsPerStep {
			issue := fmt.Sprintf("journal: at most %d calls in one step", MaxToolCallsPerStep)
			return nil, Refuse(CodeNotAccepted, "This step's journal is full.", issue)
		}
		if m.journalBytes()+journalEntryBytes+len(c.Arguments) > JournalRunBytes {
			issue := fmt.Sprintf("journal: over %d bytes in this run", JournalRunBytes)
			return nil, Refuse(CodeNotAccepted, "This run's journal of tool calls is full: no new call can be made in it; calls already journaled can still be repeated.", issue)
		}
		e = &JournalEntry{
			Tool: c.Tool, Arguments: c.Arguments, Digest: c.CallDigest, Policy: c.Resolved.Policy,
			Idempotency: c.Resolved.Idempotency, Agent: c.Actor.ID, Attempt: st.Claims, At: FormatTime(now),
			IdempotencyKey: c.Key, Result: nil,
		}
		st.Journal = append(st.Journal, e)
	}
	if e.Policy == PolicyApprovalRequired && (e.Decision == nil || e.Decision.Decision != DecisionApproved) {
		// A new call, or one journaled before the tool needed approval.
		e.State, e.StartedAt, e.EndedAt = CallProposed, nil, nil
		it := m.openCallItem(s, e, ItemCallApproval, Assignee{Group: c.Resolved.Approvers[0]}, now)
		it.Approvers, it.Floor = slices.Clone(c.Resolved.Approvers), slices.Clone(c.Resolved.Floor)
		if c.Resolved.ApprovalSLA > 0 {
			due := now.Add(c.Resolved.ApprovalSLA)
			it.Due = &due
		}
		m.takeLease(sr)
		m.refreshState()
		m.touch(now)
		return e.answer(false, "waits for a person's approval; stop now, and claim the step again after the decision, then repeat this exact call"), nil
	}
	// Run it: read, write, an approved call, or one to send again.
	started := FormatTime(now)
	e.StartedAt, e.EndedAt = &started, nil
	if m.run.Mode == ModeTest && !c.HasTestURL && e.Policy != PolicyRead {
		// Not sent: a test run causes no real effect (profile-tools §6.6).
		e.State, e.Test, e.EndedAt = CallCompleted, true, &started
		e.Result = TestRunResult(e.Tool)
		return e.answer(false, "was not sent, since this is a test run"), nil
	}
	e.State = CallStarted
	st.Sending = append(st.Sending, e.Digest)
	return &CallNeeded{
		StepID: s.ID, Tool: e.Tool, Arguments: e.Arguments, Digest: e.Digest, Key: e.IdempotencyKey,
		Policy: e.Policy, Idempotency: e.Idempotency, Test: m.run.Mode == ModeTest, Timeout: c.Timeout,
	}, nil
}

// apply settles the call: call_tool's data, or the refusal its caller
// gets.
func (c callDone) apply(m *Machine, now time.Time) (any, error) {
	st := m.run.Tools[c.StepID]
	var e *JournalEntry
	if st != nil {
		e = st.entry(c.Digest)
	}
	if e == nil || !st.sending(c.Digest) {
		return nil, fmt.Errorf("call done: no call %s of step %s is being sent", c.Digest, c.StepID)
	}
	st.Sending = slices.DeleteFunc(st.Sending, func(d string) bool { return d == c.Digest })
	ended := FormatTime(now)
	switch {
	case c.Result != nil:
		e.State, e.EndedAt = CallCompleted, &ended
		if c.IsError {
			e.State = CallFailed
		}
		e.Result = journalResult(c.Result, JournalRunBytes-(m.journalBytes()-len(e.Result)))
		out := e.answer(false, "ran")
		out.Result = c.Result
		return &settled{result: out}, nil
	case e.Idempotency == IdempotencyNone && e.Policy != PolicyRead && !c.NotSent:
		// It may have arrived and cannot be sent again: a person says
		// what happened (profile-tools §6.4).
		e.State = CallUnknown
		s, sr := m.stepRun(c.StepID)
		if m.run.State.Over() {
			return &settled{refusal: ErrRunEnded()}, nil
		}
		it := m.openCallItem(s, e, ItemCallOutcome, Assignee{Group: m.run.Operators}, now)
		it.Why, it.SentAt = c.Why, deref(e.StartedAt)
		if sr.State == StepClaimed {
			m.takeLease(sr)
		}
		m.refreshState()
		m.touch(now)
		return &settled{result: e.answer(false, "may or may not have happened; a person was asked; stop, and claim the step again after their answer")}, nil
	default:
		// Nothing journaled as done: the agent retries, and the call is
		// sent again (with the same key).
		if c.NotSent && e.Idempotency == IdempotencyNone && e.Policy != PolicyRead {
			e.State, e.StartedAt = CallApproved, nil
			if e.Decision == nil {
				st.Journal = slices.DeleteFunc(st.Journal, func(x *JournalEntry) bool { return x == e })
			}
		}
		server, _, _ := SplitToolRef(e.Tool)
		return &settled{refusal: Refuse(CodeRetry, fmt.Sprintf("%s could not be reached or did not answer (%s); nothing was recorded as done. Retry with the same requestId.", server, c.Why))}, nil
	}
}

// journalResult is a result as the journal keeps it, with room bytes left
// in the run's journals.
func journalResult(r json.RawMessage, room int) json.RawMessage {
	switch {
	case len(r) > JournalResultBytes:
		return TextResult(fmt.Sprintf("The tool's answer was %d bytes, more than the journal keeps (%d); the call that made it returned it whole.", len(r), JournalResultBytes), false)
	case len(r) > room:
		return TextResult(fmt.Sprintf("The tool's answer was %d bytes, more than this run's journal has room for (%d in all); the call that made it returned it whole.", len(r), JournalRunBytes), false)
	}
	return r
}

// journalBytes is what the run's journals take, as JournalRunBytes counts.
func (m *Machine) journalBytes() int {
	n := 0
	for _, st := range m.run.Tools {
		for _, e := range st.Journal {
			n += journalEntryBytes + len(e.Arguments) + len(e.Result)
		}
	}
	return n
}

// answer is call_tool's data for an entry.
func (e *JournalEntry) answer(reused bool, what string) *CallResult {
	out := &CallResult{Tool: e.Tool, Digest: e.Digest, Reused: reused, WorkItemID: e.WorkItemID, Message: e.Tool + " " + what + "."}
	switch e.State {
	case CallCompleted:
		out.Status, out.Result = StatusCompleted, e.Result
	case CallFailed:
		out.Status, out.Result = StatusFailed, e.Result
	case CallProposed:
		out.Status = StatusAwaitingApproval
	case CallRejected:
		out.Status, out.Result = StatusRejected, e.Result
	case CallUnknown:
		out.Status = StatusOutcomeUnknown
	}
	return out
}

// takeLease ends the lease and makes the step wait on a person.
func (m *Machine) takeLease(sr *StepRun) {
	sr.State = StepWaiting
	sr.Lease, sr.Progress = nil, ""
}

// openCallItem opens a work item about a call on its step.
func (m *Machine) openCallItem(s *Step, e *JournalEntry, kind ItemKind, a Assignee, now time.Time) *Item {
	it := m.openNewItem(s.ID, kind, a, nil, now)
	it.Call = e.Digest
	id := it.ID
	e.WorkItemID = &id
	return it
}

// decideCall applies a person's decision on an item about a call: an
// approval (approved, rejected) or an unknown outcome (completed,
// failed). The step is ready again either way; its due clock does not
// restart (profile-tools §4.3, §6.4).
func (m *Machine) decideCall(s *Step, sr *StepRun, it *Item, c Decide, now time.Time) error {
	e := m.stepTools(s.ID).entry(it.Call)
	if e == nil {
		return fmt.Errorf("decide: work item %s is about call %s, which the journal does not hold", it.ID, it.Call)
	}
	d := &CallDecision{Decision: c.Decision, By: c.Actor.ID, At: FormatTime(now), Note: nonBlank(c.Note)}
	switch it.Kind {
	case ItemCallApproval:
		e.Decision = d
		if c.Decision == DecisionApproved {
			e.State = CallApproved
		} else {
			e.State, e.Result = CallRejected, RejectedResult(*c.Note)
		}
	case ItemCallOutcome:
		ended := FormatTime(now)
		e.Resolution, e.EndedAt = d, &ended
		if c.Decision == DecisionCompleted {
			if issues := CheckValues("output", UnknownOutcomeOutput(), c.Output); len(issues) > 0 {
				return Refuse(CodeNotAccepted, "The answer was not accepted: "+strings.Join(issues, "; ")+".", issues...)
			}
			text, _ := c.Output["result"].(string)
			e.State, e.Result = CallCompleted, TextResult(text, false)
		} else {
			e.State, e.Result = CallFailed, TextResult(*c.Note, true)
		}
	}
	it.Open = false
	sr.State = StepReady
	return nil
}

// callItemView fills in what a work item about a call shows.
func (m *Machine) callItemView(w *WorkItem, it *Item) {
	s, _ := m.stepRun(it.StepID)
	e := m.stepTools(s.ID).entry(it.Call)
	if e == nil {
		return
	}
	ct := CallText{
		Tool: e.Tool, Arguments: e.Arguments, StepID: s.ID, Process: m.run.Process, Version: m.run.Version,
		RunID: m.run.ID, Agent: e.Agent, Attempt: e.Attempt, Digest: e.Digest, Test: m.run.Mode == ModeTest,
		SentAt: it.SentAt, Why: it.Why,
	}
	w.Output, w.Evidence, w.Next, w.Handoff = nil, nil, nil, nil
	if it.Kind == ItemCallApproval {
		w.Kind, w.Text = string(KindApprove), ApprovalText(ct)
	} else {
		w.Kind, w.Text, w.Output = string(KindTask), UnknownOutcomeText(ct), UnknownOutcomeOutput()
	}
	w.Due, w.Overdue = nil, false
	if it.Due != nil {
		d := FormatTime(*it.Due)
		w.Due = &d
		w.Overdue = it.Overdue
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
