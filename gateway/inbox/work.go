package inbox

import (
	"net/http"
	"net/url"

	"github.com/baton-run/baton/workflows"
)

// workRow is one line of a work list.
type workRow struct {
	URL, RunID, ItemID        string
	Process                   string
	Version                   int
	StepID, Kind, Line        string
	Due                       string
	Overdue, Test, Escalation bool
	Assigned                  string
	Handoff                   *handoffView
	EscalationNote            string
}

type workPage struct {
	frame
	Rows       []workRow
	NextCursor string
	Empty      string
}

func (in *Inbox) workRows(list *workList, onlyEscalations bool) []workRow {
	var rows []workRow
	now := in.now()
	for _, x := range list.Items {
		it := x.WorkItem
		if onlyEscalations && it.Escalation == nil {
			continue
		}
		d, over := due(it.Due, now)
		row := workRow{
			URL: workflows.InboxLink(Path, x.RunID, it.ID), RunID: x.RunID, ItemID: it.ID, Process: x.Process, Version: x.Version,
			StepID: it.StepID, Kind: kindLabel(&it), Line: firstLine(it.Text), Due: d, Overdue: over,
			Test: x.Mode == "test" || it.Mode == "test", Assigned: assignedText(it.AssignedTo),
			Handoff: newHandoffView(it.Handoff), Escalation: it.Escalation != nil,
		}
		if it.Escalation != nil {
			row.EscalationNote = it.Escalation.Note
		}
		rows = append(rows, row)
	}
	return rows
}

// work is "my work": get_work for this person or operator, oldest first.
func (in *Inbox) work(w http.ResponseWriter, r *http.Request, s *session) {
	p := workPage{frame: in.frame(s, "My work", "work"), Empty: "Nothing is waiting for you."}
	args := map[string]any{"limit": 50}
	if c := r.URL.Query().Get("cursor"); c != "" {
		args["cursor"] = c
	}
	var list workList
	if err := in.call(r.Context(), s, "get_work", args, &list); err != nil {
		in.failTool(w, r, s, err)
		return
	}
	p.Rows = in.workRows(&list, false)
	if list.NextCursor != nil {
		p.NextCursor = Path + "?cursor=" + url.QueryEscape(*list.NextCursor)
	}
	in.render(w, http.StatusOK, "work", p)
}

// escalationPages bounds how many pages of get_work the escalation queue
// reads.
const escalationPages = 10

// escalations is the operators' queue: the escalated steps among their
// work, oldest first.
func (in *Inbox) escalations(w http.ResponseWriter, r *http.Request, s *session) {
	p := workPage{frame: in.frame(s, "Escalations", "escalations"), Empty: "No escalation is waiting."}
	if !s.operator() {
		p.Empty = "No escalation is waiting for you. Escalated steps go to the operators."
	}
	args := map[string]any{"limit": 100}
	for i := 0; i < escalationPages; i++ {
		var list workList
		if err := in.call(r.Context(), s, "get_work", args, &list); err != nil {
			in.failTool(w, r, s, err)
			return
		}
		p.Rows = append(p.Rows, in.workRows(&list, true)...)
		if list.NextCursor == nil {
			break
		}
		args["cursor"] = *list.NextCursor
	}
	in.render(w, http.StatusOK, "work", p)
}

type runsPage struct {
	frame
	State      string
	States     []string
	Rows       []runRow
	NextCursor string
}

type runRow struct {
	URL, ID, Process, State, Outcome, StartedAt, UpdatedAt string
	Version                                                int
	Inputs                                                 []kv
}

// runs lists runs by state, newest activity first as list_runs orders
// them.
func (in *Inbox) runs(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	p := runsPage{frame: in.frame(s, "Runs", "runs"), State: q.Get("state"), States: []string{"active", "waiting", "ended", "cancelled"}}
	args := map[string]any{"limit": 50}
	if p.State != "" {
		args["state"] = p.State
	}
	if c := q.Get("cursor"); c != "" {
		args["cursor"] = c
	}
	var list runList
	if err := in.call(r.Context(), s, "list_runs", args, &list); err != nil {
		in.failTool(w, r, s, err)
		return
	}
	for _, x := range list.Items {
		row := runRow{
			URL: workflows.InboxLink(Path, x.ID, ""), ID: x.ID, Process: x.Process, Version: x.Version, State: x.State,
			StartedAt: when(x.StartedAt), UpdatedAt: when(x.UpdatedAt), Inputs: values(x.Inputs),
		}
		if x.Outcome != nil {
			row.Outcome = *x.Outcome
		}
		p.Rows = append(p.Rows, row)
	}
	if list.NextCursor != nil {
		next := url.Values{"cursor": {*list.NextCursor}}
		if p.State != "" {
			next.Set("state", p.State)
		}
		p.NextCursor = Path + "runs?" + next.Encode()
	}
	in.render(w, http.StatusOK, "runs", p)
}
