package interpreter

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Machine runs one run of a pinned process: (state, command, now) → new
// state and a result, or a typed *Error that changes nothing. It does no I/O
// and reads no clock; it is not safe for concurrent use.
type Machine struct {
	proc    *Process
	run     *Run
	branch  map[string]branchRef
	effects []Effect
	// needs are the asynchronous needs made since TakeNeeds last ran.
	needs []Need
	data  *dataMemo // what the run data measures and hashes to, shared with clones
	// checking says the machine is Check's clone, whose result no one
	// reads: its views are left empty.
	checking bool
	// attemptRepairs counts the attempts settleAttempts had to end or
	// make after a command: none while every change goes through its hook.
	attemptRepairs int
}

// branchRef places a step inside a parallel branch.
type branchRef struct {
	parallel string // the parallel step
	entry    string // the branch's entry step
}

// EffectKind names a side effect the machine asks its host to perform.
type EffectKind string

// EffectOverdue asks the host to notify a step's assignee and the operators
// that its due time passed. Never emitted for runs in test mode.
const EffectOverdue EffectKind = "overdue"

// Effect is a side effect for the host (the workflow) to perform. Effects
// never feed back into the machine.
type Effect struct {
	Kind       EffectKind `json:"kind"`
	RunID      string     `json:"runId"`
	StepID     string     `json:"stepId"`
	WorkItemID string     `json:"workItemId,omitempty"`
	AssignedTo *Assignee  `json:"assignedTo,omitempty"`
	Operators  string     `json:"operators"`
	Due        time.Time  `json:"due"`
	// Org is the run's organization, which the machine does not know:
	// the host fills it in before it performs the effect.
	Org string `json:"org,omitempty"`
	// Notice is an EffectNotice's event (notices.go).
	Notice *Notice `json:"notice,omitempty"`
}

// Command is one write to a run. Apply and Check take any command.
type Command interface {
	apply(m *Machine, now time.Time) (any, error)
}

// Restore rebuilds a machine from its pinned process and saved state.
func Restore(proc *Process, state []byte) (*Machine, error) {
	var r Run
	if err := DecodeExact(state, &r); err != nil {
		return nil, fmt.Errorf("restore run state: %w", err)
	}
	if r.Hash != proc.Hash {
		return nil, fmt.Errorf("restore run %s: state pins process hash %s, got %s", r.ID, r.Hash, proc.Hash)
	}
	m := newMachine(proc, &r)
	// A state saved before attempts were recorded gets the open ones.
	m.settleAttempts(r.UpdatedAt)
	return m, nil
}

func newMachine(proc *Process, r *Run) *Machine {
	m := &Machine{proc: proc, run: r, branch: map[string]branchRef{}}
	for _, s := range proc.Steps {
		if s.Kind != KindParallel {
			continue
		}
		for _, entry := range s.Branches {
			for _, id := range branchSteps(proc, entry) {
				m.branch[id] = branchRef{parallel: s.ID, entry: entry}
			}
		}
	}
	return m
}

// branchSteps lists the steps of the branch starting at entry: every step
// reachable along next and on_timeout edges, stopping at join.
func branchSteps(p *Process, entry string) []string {
	var out []string
	seen := map[string]bool{}
	stack := []string{entry}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id == Join || seen[id] {
			continue
		}
		s := p.Step(id)
		if s == nil {
			continue
		}
		seen[id] = true
		out = append(out, id)
		for _, r := range p.NextOf(s) {
			stack = append(stack, r.To)
		}
		if s.OnTimeout != "" {
			stack = append(stack, s.OnTimeout)
		}
	}
	return out
}

// Process returns the pinned process.
func (m *Machine) Process() *Process { return m.proc }

// Run returns the run's state. Callers must not modify it.
func (m *Machine) Run() *Run { return m.run }

// State returns the run's state as JSON, for continue-as-new and tests.
func (m *Machine) State() ([]byte, error) { return json.Marshal(m.run) }

// EffectsPending reports whether effects were requested since the last
// TakeEffects.
func (m *Machine) EffectsPending() bool { return len(m.effects) > 0 }

// TakeEffects returns the effects requested since the last call and forgets
// them.
func (m *Machine) TakeEffects() []Effect {
	e := m.effects
	m.effects = nil
	return m.completeNotices(e)
}

// Apply runs a command. On a refusal it returns an *Error and the machine is
// unchanged; otherwise the run moved on and the result is the command's.
func (m *Machine) Apply(cmd Command, now time.Time) (any, error) {
	c := m.clone()
	res, err := cmd.apply(c, now)
	if err != nil {
		return nil, err
	}
	m.attemptRepairs += c.settleAttempts(now)
	m.adopt(c)
	return res, nil
}

// adopt takes a clone's state, and the effects and needs it made, as the
// machine's own.
func (m *Machine) adopt(c *Machine) {
	m.run = c.run
	m.effects = append(m.effects, c.effects...)
	m.needs = append(m.needs, c.needs...)
}

// Check reports whether Apply would accept the command at now, without
// changing anything. It is what a Temporal update validator calls.
func (m *Machine) Check(cmd Command, now time.Time) error {
	c := m.clone()
	c.checking = true
	_, err := cmd.apply(c, now)
	return err
}

func (m *Machine) clone() *Machine {
	return &Machine{proc: m.proc, run: m.run.clone(), branch: m.branch, data: m.memo()}
}

// Clone returns a copy of the machine that commands applied to either
// never change in the other: a host keeps it to go back to the state
// before a command it then discards.
func (m *Machine) Clone() *Machine {
	c := m.clone()
	c.effects = slices.Clone(m.effects)
	c.needs = slices.Clone(m.needs)
	return c
}

// Tick applies everything that time alone changes at now: lease expiry, due
// times passing, waits ending and wait_for timeouts. It reports whether
// anything changed.
func (m *Machine) Tick(now time.Time) bool {
	if !m.tick(now) {
		return false
	}
	m.attemptRepairs += m.settleAttempts(now)
	return true
}

func (m *Machine) tick(now time.Time) bool {
	changed := false
	for !m.run.State.Over() {
		fired := false
		for i, sr := range m.run.Steps {
			s := m.proc.Steps[i]
			// A lease ending and a due time passing show in the view from
			// their deadline on (see View), so they are stamped with it.
			if sr.State == StepClaimed && sr.Lease != nil && sr.Checking == "" && !now.Before(sr.Lease.ExpiresAt) {
				m.changedAt(sr.Lease.ExpiresAt)
				m.expiredAttempt(sr.ID)
				m.expireLease(sr)
				changed = true
			}
			if sr.State.Open() && sr.Due != nil && !sr.Overdue && !now.Before(*sr.Due) {
				sr.Overdue = true
				m.overdueAttempt(sr.ID, *sr.Due)
				m.changedAt(*sr.Due)
				m.notifyOverdue(s, sr)
				changed = true
			}
			if sr.State == StepWaiting && sr.Timer != nil && !now.Before(*sr.Timer) {
				m.timerFired(s, sr, now)
				m.changedAt(now)
				changed, fired = true, true
				break
			}
		}
		if !fired {
			break
		}
	}
	if !m.run.State.Over() {
		for _, it := range m.run.Items {
			// A call's approval SLA (profile-tools §4.4).
			if it.Open && it.Due != nil && !it.Overdue && !now.Before(*it.Due) {
				it.Overdue = true
				m.changedAt(*it.Due)
				m.notifyItemOverdue(it)
				changed = true
			}
		}
	}
	if changed {
		m.refreshState()
	}
	return changed
}

// notifyItemOverdue asks the host to notify an item's assignees and the
// operators that its own due time passed.
func (m *Machine) notifyItemOverdue(it *Item) {
	if m.run.Mode == ModeTest {
		return
	}
	a := it.AssignedTo
	m.effects = append(m.effects, Effect{Kind: EffectOverdue, RunID: m.run.ID, StepID: it.StepID, WorkItemID: it.ID, AssignedTo: &a, Operators: m.run.Operators, Due: *it.Due})
	m.noticeItemOverdue(it)
}

func (m *Machine) expireLease(sr *StepRun) {
	sr.State = StepReady
	sr.Lease = nil
	if sr.Progress != "" {
		if sr.Handoff == nil {
			sr.Handoff = &Handoff{}
		}
		sr.Handoff.Progress = sr.Progress
		sr.Progress = ""
	}
}

func (m *Machine) notifyOverdue(s *Step, sr *StepRun) {
	if m.run.Mode == ModeTest {
		return
	}
	e := Effect{Kind: EffectOverdue, RunID: m.run.ID, StepID: s.ID, Operators: m.run.Operators, Due: *sr.Due}
	if it := m.openItem(s.ID); it != nil {
		e.WorkItemID = it.ID
		a := it.AssignedTo
		e.AssignedTo = &a
	}
	m.effects = append(m.effects, e)
	m.noticeStepOverdue(s, sr)
}

func (m *Machine) timerFired(s *Step, sr *StepRun, now time.Time) {
	rec := &Record{By: "server", At: FormatTime(now)}
	m.complete(s, rec, now)
	switch s.Kind {
	case KindWaitFor:
		to := s.OnTimeout
		if to == "" {
			to = m.single(s)
		}
		m.advance(s, to, now)
	default:
		m.advance(s, m.single(s), now)
	}
}

// live applies what time changed by now and refuses a run that has ended,
// by then, with run_ended: every write checks it before anything else
// (SPEC-DECISIONS §2), including a run a timer ended a moment ago.
func (m *Machine) live(now time.Time) error {
	if !m.run.State.Over() {
		m.tick(now)
	}
	if m.run.State.Over() {
		return ErrRunEnded()
	}
	return nil
}

// NextDeadline returns the earliest time at which Tick would change
// something, and false when nothing is scheduled.
func (m *Machine) NextDeadline() (time.Time, bool) {
	var best time.Time
	found := false
	consider := func(t time.Time) {
		if !found || t.Before(best) {
			best, found = t, true
		}
	}
	if m.run.State.Over() {
		return best, false
	}
	for _, sr := range m.run.Steps {
		if sr.State == StepClaimed && sr.Lease != nil && sr.Checking == "" {
			consider(sr.Lease.ExpiresAt)
		}
		if sr.State.Open() && sr.Due != nil && !sr.Overdue {
			consider(*sr.Due)
		}
		if sr.State == StepWaiting && sr.Timer != nil {
			consider(*sr.Timer)
		}
	}
	for _, it := range m.run.Items {
		if it.Open && it.Due != nil && !it.Overdue {
			consider(*it.Due)
		}
	}
	return best, found
}

// touch counts a change to what get_run shows, made at now: run data,
// step states, work items or the run's state. Only such a change moves
// run.updatedAt (SPEC-DECISIONS §30): a renew, a held event or the issues
// of a refused submission change nothing the view shows and never call it.
func (m *Machine) touch(now time.Time) { m.changedAt(now) }

// changedAt counts a change that the view shows from time at on.
func (m *Machine) changedAt(at time.Time) {
	m.run.Seq++
	if at.After(m.run.UpdatedAt) {
		m.run.UpdatedAt = at
	}
}

func (m *Machine) order() int64 {
	m.run.Seq++
	return m.run.Seq
}

func (m *Machine) stepRun(id string) (*Step, *StepRun) {
	i := m.proc.Index(id)
	if i < 0 {
		return nil, nil
	}
	return m.proc.Steps[i], m.run.Steps[i]
}

// single is the one next step of a step whose next is not a list.
func (m *Machine) single(s *Step) string {
	r := m.proc.NextOf(s)
	if len(r) == 0 {
		return ""
	}
	return r[0].To
}

func (m *Machine) refreshState() {
	if m.run.State.Over() {
		return
	}
	m.run.State = RunWaiting
	for _, sr := range m.run.Steps {
		if sr.State == StepReady || sr.State == StepClaimed {
			m.run.State = RunActive
			return
		}
	}
}

// activate makes a step ready (or waiting) as a fresh attempt, resolving
// server steps at once.
func (m *Machine) activate(id string, now time.Time) {
	if m.run.State.Over() {
		return
	}
	s, sr := m.stepRun(id)
	if s == nil {
		return
	}
	m.dropChildren(sr, "server", fmt.Sprintf("parent run %s started step %s again", m.run.ID, s.ID))
	*sr = StepRun{ID: sr.ID, AttemptSeq: m.order(), DoneSeq: sr.DoneSeq, ReadySince: now}
	if s.Due != nil {
		due := now.Add(s.Due.D)
		sr.Due = &due
	}
	m.beginAttempt(s, sr, now)
	switch s.Kind {
	case KindAgent:
		sr.State = StepReady
	case KindTask, KindApprove:
		a, fail := m.assignee(s)
		if fail != "" {
			m.failStep(s, fail, "server", now)
			return
		}
		sr.State = StepWaiting
		kind := ItemTask
		if s.Kind == KindApprove {
			kind = ItemApprove
		}
		m.openNewItem(s.ID, kind, a, nil, now)
	case KindWait:
		t := now.Add(s.Wait.D)
		sr.State, sr.Timer = StepWaiting, &t
	case KindWaitUntil:
		t, fail := m.waitUntil(s)
		if fail != "" {
			m.failStep(s, fail, "server", now)
			return
		}
		sr.State = StepWaiting
		if !t.After(now) {
			m.complete(s, &Record{By: "server", At: FormatTime(now)}, now)
			m.advance(s, m.single(s), now)
			return
		}
		sr.Timer = &t
	case KindWaitFor:
		sr.State = StepWaiting
		if s.Timeout != nil {
			t := now.Add(s.Timeout.D)
			sr.Timer = &t
		}
		for i, ev := range m.run.Held {
			if ev.Name == s.Text {
				m.run.Held = append(m.run.Held[:i:i], m.run.Held[i+1:]...)
				m.consume(s, ev.Data, ev.Sender, now)
				return
			}
		}
	case KindFinish:
		sr.State = StepDone
		sr.DoneSeq = m.order()
		m.end(RunEnded, s.Text, &Ended{By: "server", At: FormatTime(now)})
	case KindParallel:
		sr.State = StepWaiting
		sr.Due = nil
		for _, entry := range s.Branches {
			m.activate(entry, now)
		}
	case KindProcess:
		sr.State = StepWaiting
		m.startChildren(s, sr, now)
	}
}

// consume completes a wait_for step with an event's data.
func (m *Machine) consume(s *Step, data map[string]any, sender string, now time.Time) {
	if data == nil {
		data = map[string]any{}
	}
	m.complete(s, &Record{Output: data, By: sender, At: FormatTime(now)}, now)
	m.advance(s, m.single(s), now)
}

// assignee resolves who decides a person step, or a note saying why it
// cannot be resolved.
func (m *Machine) assignee(s *Step) (Assignee, string) {
	switch {
	case s.Person == "initiator":
		return Assignee{Person: m.run.StartedBy.ID}, ""
	case IsPath(s.Person):
		v, ok := m.lookup(s.Person)
		str, isStr := v.(string)
		if !ok || !isStr || strings.TrimSpace(str) == "" {
			return Assignee{}, fmt.Sprintf("person %s resolves to nothing", s.Person)
		}
		return Assignee{Person: str}, ""
	default:
		g := m.run.Roles[s.Person]
		if g == "" {
			g = s.Person
		}
		return Assignee{Group: g}, ""
	}
}

// waitUntil resolves a wait_until step's time, or a note saying why not.
func (m *Machine) waitUntil(s *Step) (time.Time, string) {
	v, ok := m.lookup(s.Text)
	if !ok {
		return time.Time{}, fmt.Sprintf("wait_until %s is missing", s.Text)
	}
	str, _ := v.(string)
	t, ok := ParseDatetime(str)
	if !ok {
		return time.Time{}, fmt.Sprintf("wait_until %s is not a datetime", s.Text)
	}
	return t, ""
}

// lookup reads a path inputs.<f> or steps.<id>.output.<f> from run data.
func (m *Machine) lookup(path string) (any, bool) {
	parts := strings.Split(path, ".")
	switch {
	case len(parts) == 2 && parts[0] == "inputs":
		v, ok := m.run.Data.Inputs[parts[1]]
		return v, ok && v != nil
	case len(parts) == 4 && parts[0] == "steps" && parts[2] == "output":
		d := m.run.Data.Steps[parts[1]]
		if d == nil || d.Record == nil || d.Output == nil {
			return nil, false
		}
		v, ok := d.Output[parts[3]]
		return v, ok && v != nil
	}
	return nil, false
}

// complete records a completion of s (rec nil for steps that record
// nothing) and marks it done.
func (m *Machine) complete(s *Step, rec *Record, now time.Time) {
	m.completeAttempt(s, rec, now)
	_, sr := m.stepRun(s.ID)
	if rec != nil {
		m.record(s.ID, rec)
	}
	sr.State = StepDone
	sr.DoneSeq = m.order()
	sr.Lease, sr.Timer, sr.Due, sr.Overdue = nil, nil, nil, false
	sr.Progress, sr.Handoff = "", nil
	if it := m.openItem(s.ID); it != nil {
		it.Open = false
	}
}

// record makes rec the step's current completion, moving the previous one
// into history.
func (m *Machine) record(id string, rec *Record) {
	d := m.run.Data.Steps[id]
	if d == nil {
		d = &StepData{History: []*Record{}}
		m.run.Data.Steps[id] = d
	}
	if d.Record != nil {
		d.History = append(d.History, d.Record)
	}
	d.Record = rec
}

// retire moves a step's current completion into history.
func (m *Machine) retire(id string) {
	d := m.run.Data.Steps[id]
	if d != nil && d.Record != nil {
		d.History = append(d.History, d.Record)
		d.Record = nil
	}
}

// advance continues the run after s completed towards step to.
func (m *Machine) advance(s *Step, to string, now time.Time) {
	if m.run.State.Over() || to == "" {
		return
	}
	m.routeAttempt(s, to)
	if to == Join {
		m.join(s, now)
		return
	}
	m.activate(to, now)
}

// join notes that the branch holding s reached join, and continues after
// the parallel step when it was the last.
func (m *Machine) join(s *Step, now time.Time) {
	ref, ok := m.branch[s.ID]
	if !ok {
		return
	}
	p, pr := m.stepRun(ref.parallel)
	for _, e := range pr.Joined {
		if e == ref.entry {
			return
		}
	}
	pr.Joined = append(pr.Joined, ref.entry)
	if len(pr.Joined) < len(p.Branches) {
		return
	}
	m.complete(p, nil, now)
	m.advance(p, m.single(p), now)
}

// failStep fails a step and so ends the run failed (spec §3.5).
func (m *Machine) failStep(s *Step, note, by string, now time.Time) {
	n := note
	m.failRecord(s, &Record{Decision: DecisionFailed, Note: &n, By: by, At: FormatTime(now)}, now)
}

// failRecord fails a step with rec, a failed decision with its note, and
// so ends the run failed.
func (m *Machine) failRecord(s *Step, rec *Record, now time.Time) {
	m.failAttempt(s, rec.By, now)
	_, sr := m.stepRun(s.ID)
	by, note := rec.By, *rec.Note
	m.record(s.ID, rec)
	sr.State = StepFailed
	sr.Lease, sr.Timer, sr.Progress = nil, nil, ""
	if it := m.openItem(s.ID); it != nil {
		it.Open = false
	}
	m.end(RunEnded, DecisionFailed, &Ended{By: by, At: rec.At, Note: &note})
}

// end ends the run: unfinished steps cancelled, work items removed, leases
// dropped, held events discarded (spec §3.5, SPEC-DECISIONS §14).
func (m *Machine) end(state RunState, outcome string, ended *Ended) {
	m.endRunAttempts(ended)
	by, why := "server", fmt.Sprintf("parent run %s ended %s", m.run.ID, outcome)
	if state == RunCancelled {
		by, why = ended.By, fmt.Sprintf("parent run %s cancelled", m.run.ID)
	}
	if ended.Note != nil {
		why += ": " + *ended.Note
	}
	for _, sr := range m.run.Steps {
		m.dropChildren(sr, by, why)
		if sr.State.Open() {
			sr.State = StepCancelled
		}
		sr.Lease, sr.Timer, sr.Progress = nil, nil, ""
	}
	for _, it := range m.run.Items {
		it.Open = false
	}
	m.run.Held = nil
	m.run.State = state
	m.run.Outcome = outcome
	m.run.Ended = ended
	m.noticeEnded(ended)
}

func (m *Machine) openItem(stepID string) *Item {
	for _, it := range m.run.Items {
		if it.Open && it.StepID == stepID {
			return it
		}
	}
	return nil
}

func (m *Machine) item(id string) *Item {
	for _, it := range m.run.Items {
		if it.ID == id {
			return it
		}
	}
	return nil
}

func (m *Machine) openNewItem(stepID string, kind ItemKind, a Assignee, esc *Escalation, now time.Time) *Item {
	m.run.NextItem++
	it := &Item{ID: fmt.Sprintf("w_%d", m.run.NextItem), StepID: stepID, Kind: kind, AssignedTo: a, Escalation: esc, Since: now, Open: true}
	m.run.Items = append(m.run.Items, it)
	m.noticeOpened(it, now)
	return it
}

// Snapshot is the hash of the run data as it is now (spec §3.4), as the
// tools show it. It is hashed again only when the data shown changed
// since the last time (see shownParts).
func (m *Machine) Snapshot() string {
	c := m.memo()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snapshot != "" && c.shown.same(m) {
		return c.snapshot
	}
	c.snapshot, c.shown = snapshotOf(m.shownData()), shownPartsOf(m)
	return c.snapshot
}

// snapshotOf hashes shown run data.
func snapshotOf(d *Data) string {
	b, _ := json.Marshal(d)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// TimeLayout is the wire's time format: UTC, to the millisecond, as run
// data, views and every tool result show a time.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime formats t in TimeLayout.
func FormatTime(t time.Time) string {
	return t.UTC().Format(TimeLayout)
}
