package interpreter

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file holds the one rule of what people hear about a run
// (docs/notifications.md): the machine asks its host to tell them, as an
// effect of kind EffectNotice, when a work item opens, is decided or goes
// overdue, when a step's due passes, when a call waits for or gets its
// approval, and when the run ends. A run in test mode asks for none (spec
// §3.3). The host decides who hears it and how.

// EffectNotice asks the host to deliver Effect.Notice to the channels of
// the run's organization.
const EffectNotice EffectKind = "notice"

// NoticeType is the kind of event a notice tells of.
type NoticeType string

// The events of docs/notifications.md.
const (
	// NoticeWorkOpened: a work item opened for a person or a group (a
	// task, an approval, an escalation, a tool-call approval, the question
	// whether a call happened).
	NoticeWorkOpened NoticeType = "work.opened"
	// NoticeWorkOverdue: a step's due or a call approval's SLA passed
	// (spec §2.2, profile-tools §4.4).
	NoticeWorkOverdue NoticeType = "work.overdue"
	// NoticeWorkDecided: a person decided a work item.
	NoticeWorkDecided NoticeType = "work.decided"
	// NoticeRunEnded: the run ended or was cancelled.
	NoticeRunEnded NoticeType = "run.ended"
	// NoticeCallAwaitingApproval: a call of the tools profile waits for a
	// person's approval; the same item's work.opened comes with it.
	NoticeCallAwaitingApproval NoticeType = "call.awaiting_approval"
	// NoticeCallDecided: a person approved or rejected a call; the same
	// item's work.decided comes with it.
	NoticeCallDecided NoticeType = "call.decided"
)

// NoticeTypes are every notice type, in the order the docs list them.
var NoticeTypes = []NoticeType{
	NoticeWorkOpened, NoticeWorkOverdue, NoticeWorkDecided, NoticeRunEnded,
	NoticeCallAwaitingApproval, NoticeCallDecided,
}

// Notice is one event a run's people hear about. Its ID is the same each
// time the same event is delivered (retries, replays, a continued run), and
// differs for every other event.
type Notice struct {
	ID   string     `json:"id"`
	Type NoticeType `json:"type"`
	// At is when it happened.
	At  time.Time `json:"at"`
	Run NoticeRun `json:"run"`
	// WorkItem is the item the event is about; nil for run.ended and for
	// an overdue step without one (an agent step: Step says which).
	WorkItem *NoticeItem `json:"workItem,omitempty"`
	Step     *NoticeStep `json:"step,omitempty"`
	// Operators is the run's operators group, which hears of overdue work
	// with its assignee (spec §2.2).
	Operators string `json:"operators"`
}

// NoticeRun is the run a notice is about.
type NoticeRun struct {
	ID      string `json:"id"`
	Process string `json:"process"`
	Version int    `json:"version"`
	Mode    string `json:"mode"`
	// StartedBy is who started the run; run.ended is for them.
	StartedBy Actor `json:"startedBy"`
	// Outcome is run.ended's: the finish step's outcome, failed,
	// rejected, or cancelled.
	Outcome string `json:"outcome,omitempty"`
}

// NoticeItem is the work item a notice is about.
type NoticeItem struct {
	ID     string   `json:"id"`
	StepID string   `json:"stepId"`
	Kind   ItemKind `json:"kind"`
	// AssignedTo is who may decide it; AlsoGroups the other groups that
	// may (a call's approvers after the first).
	AssignedTo Assignee   `json:"assignedTo"`
	AlsoGroups []string   `json:"alsoGroups,omitempty"`
	Due        *time.Time `json:"due,omitempty"`
	// Title is one line naming the item for a person, from the process's
	// text (never run data).
	Title string `json:"title"`
	// Tool is the call's tool (server/tool) on an item about a call.
	Tool string `json:"tool,omitempty"`
	// Decision and DecidedBy are work.decided's and call.decided's.
	Decision  string `json:"decision,omitempty"`
	DecidedBy string `json:"decidedBy,omitempty"`
}

// NoticeStep is the step an overdue notice is about when no work item is.
type NoticeStep struct {
	ID  string    `json:"id"`
	Due time.Time `json:"due"`
}

// NoticeID is the id of the event of type typ about subject in a run:
// "ev_" and 32 hex digits of a SHA-256 over the three.
func NoticeID(runID string, typ NoticeType, subject string) string {
	h := sha256.Sum256([]byte(runID + "\x00" + string(typ) + "\x00" + subject))
	return "ev_" + hex.EncodeToString(h[:16])
}

// notice asks the host to deliver a notice of typ about item (may be nil)
// at at; subject makes its id. Test runs ask for none (spec §3.3). The
// item's details are read when the host takes the effect (TakeEffects),
// once the command that opened it has set them all.
func (m *Machine) notice(typ NoticeType, subject string, at time.Time, item *NoticeItem, step *NoticeStep) {
	if m.run.Mode == ModeTest || m.checking {
		return
	}
	n := &Notice{ID: NoticeID(m.run.ID, typ, subject), Type: typ, At: at.UTC(), WorkItem: item, Step: step}
	m.effects = append(m.effects, Effect{Kind: EffectNotice, RunID: m.run.ID, Notice: n})
}

// noticeOpened tells of a work item just opened, and of a call waiting
// for approval.
func (m *Machine) noticeOpened(it *Item, now time.Time) {
	m.notice(NoticeWorkOpened, "item/"+it.ID, now, &NoticeItem{ID: it.ID}, nil)
	if it.Kind == ItemCallApproval {
		m.notice(NoticeCallAwaitingApproval, "item/"+it.ID, now, &NoticeItem{ID: it.ID}, nil)
	}
}

// noticeDecided tells of a person's decision on a work item, and of a
// call's approval or rejection, before the effects asked for since mark
// (what the decision caused: the next item, the run's end).
func (m *Machine) noticeDecided(mark int, it *Item, decision, by string, now time.Time) {
	n := len(m.effects)
	m.notice(NoticeWorkDecided, "item/"+it.ID, now, &NoticeItem{ID: it.ID, Decision: decision, DecidedBy: by}, nil)
	if it.Kind == ItemCallApproval {
		m.notice(NoticeCallDecided, "item/"+it.ID, now, &NoticeItem{ID: it.ID, Decision: decision, DecidedBy: by}, nil)
	}
	if mark < n {
		added := slices.Clone(m.effects[n:])
		copy(m.effects[mark+len(added):], m.effects[mark:n])
		copy(m.effects[mark:], added)
	}
}

// noticeStepOverdue tells of a step whose due passed: about its open work
// item when it has one.
func (m *Machine) noticeStepOverdue(s *Step, sr *StepRun) {
	subject := "step/" + s.ID + "/" + strconv.FormatInt(sr.AttemptSeq, 10)
	due := *sr.Due
	if it := m.openItem(s.ID); it != nil {
		m.notice(NoticeWorkOverdue, subject, due, &NoticeItem{ID: it.ID}, nil)
		return
	}
	m.notice(NoticeWorkOverdue, subject, due, nil, &NoticeStep{ID: s.ID, Due: due})
}

// noticeItemOverdue tells of a work item whose own due (a call approval's
// SLA) passed.
func (m *Machine) noticeItemOverdue(it *Item) {
	m.notice(NoticeWorkOverdue, "item/"+it.ID, *it.Due, &NoticeItem{ID: it.ID}, nil)
}

// noticeEnded tells whoever started the run that it ended.
func (m *Machine) noticeEnded(ended *Ended) {
	at, _ := time.Parse(TimeLayout, ended.At)
	m.notice(NoticeRunEnded, "run", at, nil, nil)
}

// completeNotices fills in what the effects' notices say of the run and
// their items, as they are now.
func (m *Machine) completeNotices(effects []Effect) []Effect {
	for i := range effects {
		n := effects[i].Notice
		if n == nil {
			continue
		}
		c := *n
		c.Run = NoticeRun{ID: m.run.ID, Process: m.run.Process, Version: m.run.Version, Mode: m.run.Mode, StartedBy: m.run.StartedBy}
		if c.Type == NoticeRunEnded {
			c.Run.Outcome = m.run.Outcome
			if m.run.State == RunCancelled {
				c.Run.Outcome = string(RunCancelled)
			}
		}
		c.Operators = m.run.Operators
		if n.WorkItem != nil {
			w := *n.WorkItem
			m.noticeItem(&w)
			c.WorkItem = &w
		}
		effects[i].Notice = &c
	}
	return effects
}

// noticeItem fills in an item's details from the run.
func (m *Machine) noticeItem(w *NoticeItem) {
	it := m.item(w.ID)
	if it == nil {
		return
	}
	s, sr := m.stepRun(it.StepID)
	w.StepID, w.Kind, w.AssignedTo = it.StepID, it.Kind, it.AssignedTo
	if it.Kind == ItemCallApproval && len(it.Approvers) > 1 {
		w.AlsoGroups = append([]string(nil), it.Approvers[1:]...)
	}
	switch {
	case it.Due != nil:
		d := *it.Due
		w.Due = &d
	case it.Call == "" && sr.Due != nil:
		d := *sr.Due
		w.Due = &d
	}
	if it.Call != "" {
		if e := m.stepTools(s.ID).entry(it.Call); e != nil {
			w.Tool = e.Tool
		}
	}
	w.Title = itemTitle(s, it.Kind, w.Tool)
}

// itemTitle is a work item's one-line title: its step's instruction, or
// what a call's item asks. It holds the process's words only, never run
// data, so it may travel where run data may not.
func itemTitle(s *Step, kind ItemKind, tool string) string {
	line := noticeLine(s.Text)
	switch kind {
	case ItemEscalation:
		return "Escalated: " + line
	case ItemCallApproval:
		return "Approve a call of " + tool + " (step " + s.ID + ")"
	case ItemCallOutcome:
		return "Say whether a call of " + tool + " happened (step " + s.ID + ")"
	}
	return line
}

// noticeLine is the first non-blank line of text, at most 140 characters.
func noticeLine(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.TrimSpace(line)
	if r := []rune(line); len(r) > 140 {
		line = string(r[:139]) + "…"
	}
	return line
}
