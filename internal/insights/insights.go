// Package insights holds the figures of process insights (docs/insights.md):
// where a process's runs wait, how long each step takes, who does the work,
// how often it goes back, and how the check profile's verdicts compare with
// people's decisions. internal/store computes them from the runs' rows and
// the record of step attempts; the CLI, the gateway's MCP resource and the
// inbox show them.
package insights

import (
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// Report is one process's figures over a window, computed from the runs'
// rows and the record of step attempts (docs/insights.md says what each
// figure means). Durations are in seconds. Only live runs count: test runs
// rehearse.
type Report struct {
	Org     string    `json:"org"`
	Process string    `json:"process"`
	Since   time.Time `json:"since"`
	Until   time.Time `json:"until"`
	// RecordedSince is when step attempts began to be recorded: the
	// figures of steps count nothing before it (nil on a database without
	// the record).
	RecordedSince *time.Time `json:"recordedSince"`
	Runs          Runs       `json:"runs"`
	Steps         []Step     `json:"steps"`
	Routes        []Route    `json:"routes"`
	Questions     []Question `json:"questions"`
	// Oldest are the ten oldest open steps.
	Oldest []OpenItem `json:"oldest"`
	// Days are the last seven days' starts and ends, oldest first (UTC).
	Days []Day `json:"days"`
}

// Runs are the runs of a window: started in it, ended in it (by
// outcome, "cancelled" for a cancelled run) and how long the ended ones
// took from start to end.
type Runs struct {
	Started  int            `json:"started"`
	Ended    int            `json:"ended"`
	Outcomes []OutcomeCount `json:"outcomes"`
	Duration Durations      `json:"duration"`
	// Open is how many runs of the process are open now.
	Open int `json:"open"`
}

// OutcomeCount is how many runs ended with an outcome, and how long they
// took.
type OutcomeCount struct {
	Outcome  string    `json:"outcome"`
	Count    int       `json:"count"`
	Duration Durations `json:"duration"`
}

// Durations are the median and 90th percentile of N durations, in
// seconds; both nil when N is 0.
type Durations struct {
	N      int      `json:"n"`
	Median *float64 `json:"median"`
	P90    *float64 `json:"p90"`
}

// Step is one step's attempts begun in the window, and its open
// work now.
type Step struct {
	Step string `json:"step"`
	Kind string `json:"kind"`
	// Title is the step's first line of instructions, from the process.
	Title string `json:"title,omitempty"`
	// Attempts begun in the window; Ended of them ended.
	Attempts int `json:"attempts"`
	Ended    int `json:"ended"`
	// ReadyToClaimed is the wait for an agent: ready to the first claim.
	// ClaimedToDone the agent's work: first claim to done, over attempts an
	// agent completed. ReadyToDecided a person's wait and decision, over
	// task and approve attempts a person decided. EscalatedToDecided the
	// wait of escalated work for the person who took it over.
	ReadyToClaimed     Durations `json:"readyToClaimed"`
	ClaimedToDone      Durations `json:"claimedToDone"`
	ReadyToDecided     Durations `json:"readyToDecided"`
	EscalatedToDecided Durations `json:"escalatedToDecided"`
	// Done by agents, by people (TakenOver of them after an escalation)
	// and by the server.
	Done         int `json:"done"`
	DoneByAgent  int `json:"doneByAgent"`
	DoneByPerson int `json:"doneByPerson"`
	DoneByServer int `json:"doneByServer"`
	TakenOver    int `json:"takenOver"`
	// Rework counts approvals rejected back to their on_reject step;
	// Rejected those that ended the run; Failed and Cancelled the rest.
	Rework    int `json:"rework"`
	Rejected  int `json:"rejected"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	// Escalated and Returned count attempts escalated, and returned to
	// their agent, at least once; Returns all the returns.
	Escalated int `json:"escalated"`
	Returned  int `json:"returned"`
	Returns   int `json:"returns"`
	// NotAccepted counts refused submissions; LeaseExpiries the leases
	// that ran out; Overdue the attempts whose due time passed.
	NotAccepted   int `json:"notAccepted"`
	LeaseExpiries int `json:"leaseExpiries"`
	Overdue       int `json:"overdue"`
	// Shares of Done, and rates per attempt (0 when there is nothing to
	// divide by).
	AgentShare            float64 `json:"agentShare"`
	PersonShare           float64 `json:"personShare"`
	TakenOverShare        float64 `json:"takenOverShare"`
	ReworkRate            float64 `json:"reworkRate"`
	ReturnRate            float64 `json:"returnRate"`
	NotAcceptedPerAttempt float64 `json:"notAcceptedPerAttempt"`
	// Open is the step's open work now, whenever it began.
	Open Open `json:"open"`
}

// Open is a step's open attempts now, by state, how many are
// overdue, and when the oldest became ready.
type Open struct {
	Ready   int        `json:"ready"`
	Claimed int        `json:"claimed"`
	Waiting int        `json:"waiting"`
	Overdue int        `json:"overdue"`
	Oldest  *time.Time `json:"oldest"`
	// OldestAge is Oldest's age at Until, in seconds.
	OldestAge *float64 `json:"oldestAge"`
}

// Total is the open attempts in every state.
func (o Open) Total() int { return o.Ready + o.Claimed + o.Waiting }

// Route is how many attempts of a step begun in the window ended
// with an outcome and went on to Next ("" for none: the run ended).
type Route struct {
	Step    string `json:"step"`
	Outcome string `json:"outcome"`
	Next    string `json:"next"`
	Count   int    `json:"count"`
}

// Question is one checked question's results over the window: how often
// the evaluator passed, failed and was unsure of a submission, and, of the
// unsure verdicts that went to a person (not advisory), what they decided.
type Question struct {
	Step string `json:"step"`
	// Index is the question's place in the step's check, from 0; Ask
	// is its text in the process's latest version.
	Index  int    `json:"index"`
	Ask    string `json:"ask,omitempty"`
	Pass   int    `json:"pass"`
	Fail   int    `json:"fail"`
	Unsure int    `json:"unsure"`
	// Completed, Returned and Failed are people's decisions on unsure
	// verdicts this question was unsure in; Undecided are still open.
	Completed int `json:"completed"`
	Returned  int `json:"returned"`
	Failed    int `json:"failed"`
	Undecided int `json:"undecided"`
}

// Count adds n results of the question in checks of one verdict:
// result is the question's (pass, fail or unsure), verdict, advisory and
// decision the check's. An unsure result counts a person's decision when
// the check went to a person: its verdict was unsure and not advisory.
func (q *Question) Count(result, verdict string, advisory bool, decision string, n int) {
	switch result {
	case "pass":
		q.Pass += n
	case "fail":
		q.Fail += n
	case "unsure":
		q.Unsure += n
		if verdict != "unsure" || advisory {
			return // no person was asked
		}
		switch decision {
		case "completed":
			q.Completed += n
		case "returned":
			q.Returned += n
		case "failed":
			q.Failed += n
		default:
			q.Undecided += n
		}
	}
}

// OpenItem is an open step of a run, for the oldest open work.
type OpenItem struct {
	RunID string `json:"runId"`
	Step  string `json:"step"`
	State string `json:"state"`
	// WorkItemID is the open work item, when a person has one.
	WorkItemID string     `json:"workItemId,omitempty"`
	ReadyAt    time.Time  `json:"readyAt"`
	Due        *time.Time `json:"due,omitempty"`
	Overdue    bool       `json:"overdue"`
	// Link leads to the item (or the run) in the inbox, when the
	// inbox's address is known (Report.Link).
	Link string `json:"link,omitempty"`
}

// Day is one day's run starts and ends.
type Day struct {
	Day     string `json:"day"` // YYYY-MM-DD, UTC
	Started int    `json:"started"`
	Ended   int    `json:"ended"`
}

// ProcessSummary is a process in an organization's insights list: its
// open steps now, how many of those are overdue, and the runs started in
// the window.
type ProcessSummary struct {
	Process string `json:"process"`
	Open    int    `json:"open"`
	Overdue int    `json:"overdue"`
	Started int    `json:"started"`
}

// OpenCount is how many attempts at a step of a process are open in one
// state now, in an organization: what the open-steps gauge shows.
type OpenCount struct {
	Org, Process, Step, State string
	Count                     int
}

// Describe fits the figures to a process's version: steps in its order
// (steps it no longer has follow), each with its title, and each checked
// question with its text.
func (r *Report) Describe(p *interpreter.Process) {
	if p == nil {
		return
	}
	rank := map[string]int{}
	for i, s := range p.Steps {
		rank[s.ID] = i
	}
	sort.SliceStable(r.Steps, func(i, j int) bool {
		ri, iok := rank[r.Steps[i].Step]
		rj, jok := rank[r.Steps[j].Step]
		if iok != jok {
			return iok
		}
		return iok && ri < rj
	})
	for i := range r.Steps {
		if s := p.Step(r.Steps[i].Step); s != nil {
			r.Steps[i].Title = title(s.Text)
		}
	}
	for i := range r.Questions {
		q := &r.Questions[i]
		if s := p.Step(q.Step); s != nil && s.Check != nil && q.Index < len(s.Check.Questions) {
			q.Ask = s.Check.Questions[q.Index].Ask
		}
	}
}

// title is the first line of a step's text, at most 80 characters.
func title(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(line); len(r) > 80 {
		line = string(r[:79]) + "…"
	}
	return line
}

// Link sets each oldest open item's link with link(runID, itemID), the
// item's address in the inbox (workflows.InboxLink); itemID is "" for a
// step without a work item.
func (r *Report) Link(link func(runID, itemID string) string) {
	for i := range r.Oldest {
		it := &r.Oldest[i]
		it.Link = link(it.RunID, it.WorkItemID)
	}
}

// Step returns the figures of step id, or nil.
func (r *Report) Step(id string) *Step {
	for i := range r.Steps {
		if r.Steps[i].Step == id {
			return &r.Steps[i]
		}
	}
	return nil
}

// Complete computes the shares and rates from the counts.
func (r *Report) Complete() {
	for i := range r.Steps {
		f := &r.Steps[i]
		f.AgentShare = ratio(f.DoneByAgent, f.Done)
		f.PersonShare = ratio(f.DoneByPerson, f.Done)
		f.TakenOverShare = ratio(f.TakenOver, f.Done)
		f.ReworkRate = ratio(f.Rework, f.Ended)
		f.ReturnRate = ratio(f.Returned, f.Attempts)
		f.NotAcceptedPerAttempt = ratio(f.NotAccepted, f.Attempts)
	}
}

func ratio(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// ParseWindow reads a window's length: a number of days (30d), of weeks
// (2w), or a Go duration (12h).
func ParseWindow(s string) (time.Duration, error) {
	bad := errors.New("want a positive number of days (30d), weeks (2w) or a Go duration (12h)")
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n := len(s); n > 1 && unit[s[n-1]] != 0 {
		v, err := strconv.Atoi(s[:n-1])
		if err != nil || v <= 0 || v > 3650 {
			return 0, bad
		}
		return time.Duration(v) * unit[s[n-1]], nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, bad
	}
	return d, nil
}

// Seconds formats a duration in seconds for reading: 850ms, 42s, 1h5m,
// 3.2d.
func Seconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
	return strconv.FormatFloat(d.Hours()/24, 'f', 1, 64) + "d"
}

// Text is "median / p90" for reading, or "—" when there were none.
func (d Durations) Text() string {
	if d.N == 0 || d.Median == nil || d.P90 == nil {
		return "—"
	}
	return Seconds(*d.Median) + " / " + Seconds(*d.P90)
}

// Share formats a fraction of of things as a percentage, or "—" when of
// is 0.
func Share(f float64, of int) string {
	if of == 0 {
		return "—"
	}
	return strconv.FormatFloat(f*100, 'f', 0, 64) + "%"
}
