package inbox

import (
	"fmt"
	"html/template"
	"net/http"
	"regexp"
	"strings"

	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// runPage is one run: its header, step table, open items, run data with
// history, body, and for operators the cancel form.
type runPage struct {
	frame
	Run    runHeader
	Steps  []stepSection
	Items  []runItem
	Inputs []kv
	Body   template.HTML
	Cancel *cancelForm
	// Parent is the run whose process step started this one; Children
	// the runs this one's process steps started (baton-subprocess-1).
	Parent       *runLink
	Children     []runLink
	MoreChildren bool
}

// runLink links another run's page.
type runLink struct{ ID, URL, Step string }

type runItem struct {
	URL, ID, StepID, Kind, Assigned, Due string
	Overdue                              bool
}

type cancelForm struct {
	Action, RequestID, Reason string
	Issues                    []string
}

var itemIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// run shows a run.
func (in *Inbox) run(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	notice := ""
	if item, d := q.Get("decided"), q.Get("decision"); itemIDPattern.MatchString(item) && decisionLabels[d] != "" {
		notice = fmt.Sprintf("Work item %s: %s. The run as it stands now is below.", item, strings.ToLower(decisionLabels[d]))
	}
	if q.Get("cancelled") != "" {
		notice = "The run is cancelled."
	}
	in.showRun(w, r, s, http.StatusOK, notice, "", nil)
}

func (in *Inbox) showRun(w http.ResponseWriter, r *http.Request, s *session, code int, notice, reason string, refused error) {
	runID := r.PathValue("run")
	var v interpreter.View
	if err := in.call(r.Context(), s, "get_run", map[string]any{"runId": runID}, &v); err != nil {
		in.failTool(w, r, s, err)
		return
	}
	p := runPage{
		frame: in.frame(s, fmt.Sprintf("Run %s", v.Run.ID), "runs"), Run: newRunHeader(v.Run),
		Steps: stepSections(&v), Inputs: values(runData(&v).Inputs), Body: markdown(v.Body),
	}
	p.Notice = notice
	if f, ok := in.tools.(Families); ok {
		parent, step, children, more, err := f.Family(r.Context(), s.identity(), v.Run.ID)
		if err != nil {
			in.failTool(w, r, s, err)
			return
		}
		if parent != "" {
			p.Parent = &runLink{ID: parent, URL: workflows.InboxLink(Path, parent, ""), Step: step}
		}
		for _, c := range children {
			p.Children = append(p.Children, runLink{ID: c, URL: workflows.InboxLink(Path, c, "")})
		}
		p.MoreChildren = more
	}
	now := in.now()
	for i := range v.WorkItems {
		it := &v.WorkItems[i]
		d, over := due(it.Due, now)
		p.Items = append(p.Items, runItem{
			URL: workflows.InboxLink(Path, v.Run.ID, it.ID), ID: it.ID, StepID: it.StepID, Kind: kindLabel(it),
			Assigned: assignedText(it.AssignedTo), Due: d, Overdue: over,
		})
	}
	if s.operator() && p.Run.Open {
		p.Cancel = &cancelForm{Action: workflows.InboxLink(Path, v.Run.ID, "") + "/cancel", RequestID: newRequestID(), Reason: reason}
	}
	if e, ok := refusal(refused); ok {
		p.Error, p.Issues = e.Message, e.Issues
		if p.Cancel != nil {
			for _, is := range e.Issues {
				if strings.HasPrefix(is, "reason") {
					p.Cancel.Issues = append(p.Cancel.Issues, is)
				}
			}
		}
	}
	in.render(w, code, "run", p)
}

// cancel cancels a run through the cancel tool.
func (in *Inbox) cancel(w http.ResponseWriter, r *http.Request, s *session) {
	runID := r.PathValue("run")
	args := map[string]any{"runId": runID, "reason": normalizeLines(r.PostForm.Get("reason")), "requestId": r.PostForm.Get("requestId")}
	if err := in.call(r.Context(), s, "cancel", args, nil); err != nil {
		e, ok := refusal(err)
		if !ok {
			in.failTool(w, r, s, err)
			return
		}
		in.showRun(w, r, s, status(e), "", r.PostForm.Get("reason"), err)
		return
	}
	http.Redirect(w, r, workflows.InboxLink(Path, runID, "")+"?cancelled=1", http.StatusSeeOther)
}
