package interpreter

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
)

// This file runs the process steps of the baton-subprocess-1 profile
// (docs/profile-subprocess.md §2–§5). A process step that becomes ready
// asks its host to start its children (*ChildNeeded, an asynchronous
// need: any write or tick may make it, and the host takes it with
// TakeNeeds); each child's end comes back as the command ChildEnded. Once
// every child has ended, the step records their outcomes and the run
// routes on them. Children still running when their step's attempt is
// dropped (the run ended, or rework rewound the step) are cancelled
// (*ChildCancelNeeded).

// Fanout is a process step's current attempt: how many children it runs
// and those started so far.
type Fanout struct {
	// Total is 1, or the length of the for_each list.
	Total int `json:"total"`
	// Children are the children started so far, in item order: a step
	// with concurrency starts the next as an earlier one ends.
	Children []Child `json:"children,omitempty"`
}

// Child is one child run of a process step.
type Child struct {
	RunID   string  `json:"runId"`
	Ended   bool    `json:"ended,omitempty"`
	Outcome string  `json:"outcome,omitempty"`
	Note    *string `json:"note,omitempty"`
}

// ChildOutcome is one child's entry in a process step's output: its run,
// the outcome it ended with (cancelled for a cancelled run) and its
// ended.note.
type ChildOutcome struct {
	RunID   string  `json:"runId"`
	Outcome string  `json:"outcome"`
	Note    *string `json:"note"`
}

// ChildNeeded asks the host to start one child run of a process step. Start
// holds the child's start but for what the host reads from the registry:
// the bound version's definition, role bindings and own child bindings
// (Binding names it). Its end comes back as ChildEnded; a child the host
// cannot start as NotStarted's command.
type ChildNeeded struct {
	StepID string `json:"stepId"`
	// Index is the child's item index (0 for a step without for_each).
	Index   int          `json:"index"`
	Binding ChildBinding `json:"binding"`
	Start   Start        `json:"start"`
}

// NotStarted is the command that tells the run its child could not start,
// and why: the step fails, and the run with it.
func (n *ChildNeeded) NotStarted(why string) ChildNotStarted {
	return ChildNotStarted{RunID: n.Start.RunID, Why: why}
}

// ChildCancelNeeded asks the host to cancel a running child run: its step's
// attempt is over. By and Note are the child's cancellation's.
type ChildCancelNeeded struct {
	RunID string `json:"runId"`
	By    string `json:"by"`
	Note  string `json:"note"`
}

func (*ChildNeeded) need()       {}
func (*ChildCancelNeeded) need() {}

// ParentRef names the run and the process step a child run was started by.
type ParentRef struct {
	RunID  string `json:"runId"`
	StepID string `json:"stepId"`
}

// ChildEnded tells the run that one of its children ended: its outcome
// (cancelled for a cancelled run) and its ended.note.
type ChildEnded struct {
	RunID   string
	Outcome string
	Note    *string
}

// ChildNotStarted tells the run that its host could not start a child: the
// bound version could not be read, or the child refused its inputs.
type ChildNotStarted struct {
	RunID string
	Why   string
}

// ChildRunID is the id of a process step's child: derived from the parent
// run, the step, its attempt and the item index, so a start made again
// (a replay, a retry) names the same run.
func ChildRunID(parent, step string, attempt int64, index int) string {
	h := sha256.Sum256([]byte(parent + "\x00" + step + "\x00" + strconv.FormatInt(attempt, 10) + "\x00" + strconv.Itoa(index)))
	return "r_" + hex.EncodeToString(h[:10])
}

// BindLocal binds every process step of p to its child among children, by
// name, at the version the step names (1 when it names none): for hosts
// that run processes they hold rather than published versions (the
// in-process driver, process tests). A child children lacks is bound by
// name alone, with no hash.
func BindLocal(p *Process, children map[string]*Process) Bindings {
	return bindLocal(p, children, map[string]bool{p.Name: true})
}

// bindLocal is BindLocal below the processes on the way to p, which a
// cycle would come back to.
func bindLocal(p *Process, children map[string]*Process, above map[string]bool) Bindings {
	var out Bindings
	for _, s := range p.Steps {
		if s.Kind != KindProcess || s.Call == nil {
			continue
		}
		b := ChildBinding{Step: s.ID, Process: s.Call.Process, Version: max(s.Call.Version, 1)}
		if c := children[s.Call.Process]; c != nil {
			b.Hash, b.Initiator = c.Hash, c.UsesInitiator()
			if !above[c.Name] {
				above[c.Name] = true
				b.Initiator = b.Initiator || bindLocal(c, children, above).NeedsInitiator()
				delete(above, c.Name)
			}
		}
		out = append(out, b)
	}
	return out
}

// TakeNeeds returns the asynchronous needs made since the last call (the
// children to start and to cancel) and forgets them.
func (m *Machine) TakeNeeds() []Need {
	n := m.needs
	m.needs = nil
	return n
}

// children is the run's child limit.
func (l Limits) children() int {
	if l.Children > 0 {
		return l.Children
	}
	return DefaultMaxChildren
}

// startChildren begins a process step's attempt: it fails the step when
// its list cannot be run, completes it at once over an empty list, and
// otherwise asks for its first children.
func (m *Machine) startChildren(s *Step, sr *StepRun, now time.Time) {
	b, ok := m.run.Children.For(s.ID)
	if !ok || s.Call == nil {
		m.failStep(s, fmt.Sprintf("process step %s has no bound version of %s", s.ID, s.Text), "server", now)
		return
	}
	total := 1
	if s.Call.ForEach != "" {
		items, fail := m.forEach(s)
		if fail != "" {
			m.failStep(s, fail, "server", now)
			return
		}
		total = len(items)
	}
	if limit := m.run.Limits.children(); total > limit {
		m.failStep(s, fmt.Sprintf("for_each %s has %d items, more than the %d children a step may start", s.Call.ForEach, total, limit), "server", now)
		return
	}
	if total == 0 {
		m.complete(s, &Record{Output: map[string]any{"items": []any{}}, By: "server", At: FormatTime(now)}, now)
		m.advance(s, m.single(s), now)
		return
	}
	sr.Fanout = &Fanout{Total: total}
	m.fill(s, sr, b)
}

// forEach reads a for_each step's list, or a note saying why it cannot.
func (m *Machine) forEach(s *Step) ([]any, string) {
	v, ok := m.lookup(s.Call.ForEach)
	if !ok {
		return nil, fmt.Sprintf("for_each %s is missing", s.Call.ForEach)
	}
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Sprintf("for_each %s is not a list", s.Call.ForEach)
	}
	return items, ""
}

// fill asks for the step's next children, in item order, while fewer than
// its concurrency run.
func (m *Machine) fill(s *Step, sr *StepRun, b ChildBinding) {
	f := sr.Fanout
	running := 0
	for _, c := range f.Children {
		if !c.Ended {
			running++
		}
	}
	var items []any
	for len(f.Children) < f.Total && (s.Call.Concurrency <= 0 || running < s.Call.Concurrency) {
		i := len(f.Children)
		var item any
		if s.Call.ForEach != "" {
			if items == nil {
				items, _ = m.forEach(s)
			}
			if i < len(items) {
				item = items[i]
			}
		}
		id := ChildRunID(m.run.ID, s.ID, sr.AttemptSeq, i)
		f.Children = append(f.Children, Child{RunID: id})
		running++
		m.needs = append(m.needs, &ChildNeeded{StepID: s.ID, Index: i, Binding: b, Start: Start{
			RunID: id, Version: b.Version, Inputs: s.Call.ChildInputs(m.lookup, item), Mode: m.run.Mode,
			Starter: m.run.StartedBy, Operators: m.run.Operators, Limits: m.run.Limits,
			Parent: &ParentRef{RunID: m.run.ID, StepID: s.ID},
		}})
	}
}

// child finds a child of a waiting process step's current attempt.
func (m *Machine) child(runID string) (*Step, *StepRun, *Child, int) {
	for i, sr := range m.run.Steps {
		if sr.State != StepWaiting || sr.Fanout == nil {
			continue
		}
		for j := range sr.Fanout.Children {
			if c := &sr.Fanout.Children[j]; c.RunID == runID {
				return m.proc.Steps[i], sr, c, j
			}
		}
	}
	return nil, nil, nil, 0
}

func errNoChild(runID string) *Error {
	return Refuse(CodeNotFound, fmt.Sprintf("Run %s is no running child of this run.", runID))
}

func (c ChildEnded) apply(m *Machine, now time.Time) (any, error) {
	if err := m.live(now); err != nil {
		return nil, err
	}
	s, sr, ch, _ := m.child(c.RunID)
	if ch == nil || ch.Ended {
		return nil, errNoChild(c.RunID)
	}
	ch.Ended, ch.Outcome, ch.Note = true, c.Outcome, c.Note
	if ch.Outcome == "" {
		ch.Outcome = OutcomeCancelled
	}
	m.touch(now)
	b, _ := m.run.Children.For(s.ID)
	m.fill(s, sr, b)
	if allEnded(sr.Fanout) {
		m.joinChildren(s, sr, now)
	}
	m.refreshState()
	return nil, nil
}

func (c ChildNotStarted) apply(m *Machine, now time.Time) (any, error) {
	if err := m.live(now); err != nil {
		return nil, err
	}
	s, _, ch, i := m.child(c.RunID)
	if ch == nil || ch.Ended {
		return nil, errNoChild(c.RunID)
	}
	which := "the child of " + s.ID
	if s.Call.ForEach != "" {
		which = fmt.Sprintf("child %d of %s", i+1, s.ID)
	}
	ch.Ended, ch.Outcome = true, DecisionFailed
	m.failStep(s, fmt.Sprintf("%s cannot start: %s", which, c.Why), "server", now)
	m.touch(now)
	return nil, nil
}

// OutcomeCancelled is the outcome a parent sees of a cancelled child.
const OutcomeCancelled = "cancelled"

func allEnded(f *Fanout) bool {
	if len(f.Children) < f.Total {
		return false
	}
	for _, c := range f.Children {
		if !c.Ended {
			return false
		}
	}
	return true
}

// joinChildren completes a process step whose children have all ended,
// with their outcomes as its output, and routes on them (profile §3, §4):
// one child's outcome goes where on_outcome names it, else to next; a
// for_each step goes to a route for failed, then for cancelled, when a
// child ended so, else to next. A child that failed or was cancelled
// without a route fails the step and the run.
func (m *Machine) joinChildren(s *Step, sr *StepRun, now time.Time) {
	f := sr.Fanout
	var out map[string]any
	items := make([]any, len(f.Children))
	for i, c := range f.Children {
		items[i] = map[string]any{"runId": c.RunID, "outcome": c.Outcome, "note": noteValue(c.Note)}
	}
	if s.Call.ForEach == "" {
		out = items[0].(map[string]any)
	} else {
		out = map[string]any{"items": items}
	}
	var to string
	var unrouted *Child
	if s.Call.ForEach == "" {
		c := &f.Children[0]
		if r, ok := s.Call.Route(c.Outcome); ok {
			to = r
		} else if c.Outcome == DecisionFailed || c.Outcome == OutcomeCancelled {
			unrouted = c
		} else {
			to = m.single(s)
		}
	} else {
		to = m.single(s)
		for _, outcome := range []string{DecisionFailed, OutcomeCancelled} {
			c := firstEnded(f, outcome)
			if c == nil {
				continue
			}
			if r, ok := s.Call.Route(outcome); ok {
				to = r
			} else {
				unrouted = c
			}
			break
		}
	}
	if unrouted != nil {
		note := fmt.Sprintf("child run %s ended %s", unrouted.RunID, unrouted.Outcome)
		if unrouted.Note != nil {
			note += ": " + strconv.Quote(*unrouted.Note)
		}
		m.failRecord(s, &Record{Output: out, Decision: DecisionFailed, Note: &note, By: "server", At: FormatTime(now)}, now)
		return
	}
	m.complete(s, &Record{Output: out, By: "server", At: FormatTime(now)}, now)
	if _, tr := m.stepRun(to); tr != nil && tr.DoneSeq > 0 {
		// A route back to a step that ran before rewinds as a rejection
		// does (SPEC-DECISIONS §12, §31).
		m.rework(s, to, now)
		return
	}
	m.advance(s, to, now)
}

func firstEnded(f *Fanout, outcome string) *Child {
	for i := range f.Children {
		if f.Children[i].Outcome == outcome {
			return &f.Children[i]
		}
	}
	return nil
}

func noteValue(n *string) any {
	if n == nil {
		return nil
	}
	return *n
}

// dropChildren cancels the running children of a step whose attempt is
// over before they all ended, with note as the reason.
func (m *Machine) dropChildren(sr *StepRun, by, note string) {
	if sr.Fanout == nil {
		return
	}
	for _, c := range sr.Fanout.Children {
		if !c.Ended {
			m.needs = append(m.needs, &ChildCancelNeeded{RunID: c.RunID, By: by, Note: note})
		}
	}
	sr.Fanout = nil
}

// ChildCount is what a waiting process step shows of its children in the
// run view: how many it runs, how many run now and have ended, and the
// running ones' ids in item order.
type ChildCount struct {
	Total      int      `json:"total"`
	Running    int      `json:"running"`
	Ended      int      `json:"ended"`
	RunningIDs []string `json:"runningIds"`
}

// childCount is a waiting process step's ChildCount, nil for any other.
func childCount(sr *StepRun) *ChildCount {
	if sr.State != StepWaiting || sr.Fanout == nil {
		return nil
	}
	c := &ChildCount{Total: sr.Fanout.Total, RunningIDs: []string{}}
	for _, ch := range sr.Fanout.Children {
		if ch.Ended {
			c.Ended++
		} else {
			c.Running++
			c.RunningIDs = append(c.RunningIDs, ch.RunID)
		}
	}
	return c
}
