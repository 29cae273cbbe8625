package inbox

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// What the templates show, made from the tools' results.

// kv is one named value: a string plainly, anything else as JSON in a
// block.
type kv struct {
	Key, Value string
	Block      bool
}

func values(m map[string]any) []kv {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]kv, len(keys))
	for i, k := range keys {
		out[i] = valueKV(k, m[k])
	}
	return out
}

func valueKV(k string, v any) kv {
	switch v.(type) {
	case map[string]any, []any:
		return kv{Key: k, Value: prettyJSON(v), Block: true}
	}
	s := plainText(v)
	return kv{Key: k, Value: s, Block: strings.Contains(s, "\n")}
}

// evidenceView is one evidence item: a file with its signed link, or a
// link (clickable only when it is an http or https URL).
type evidenceView struct {
	Kind, Ref, SHA256 string
	URL               string // the signed file link
	Link              string // a link item's URL
}

func evidenceViews(list []interpreter.Evidence) []evidenceView {
	out := make([]evidenceView, len(list))
	for i, e := range list {
		v := evidenceView{Kind: e.Kind, Ref: e.Ref, SHA256: e.SHA256, URL: e.URL}
		if e.Kind == "link" {
			if u, err := url.Parse(e.Ref); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
				v.Link = e.Ref
			}
		}
		out[i] = v
	}
	return out
}

// recordView is one completion of a step.
type recordView struct {
	Output   []kv
	Evidence []evidenceView
	Summary  string
	Next     string
	Reason   string
	Decision string
	Note     string
	HasNote  bool
	Check    *verdictView
	By, At   string
}

func newRecordView(r *interpreter.Record) *recordView {
	v := &recordView{
		Output: values(r.Output), Evidence: evidenceViews(r.Evidence), Summary: r.Summary,
		Next: r.Next, Reason: r.Reason, Decision: r.Decision, Check: newVerdictView(r.Check),
		By: r.By, At: when(r.At),
	}
	if r.Note != nil {
		v.Note, v.HasNote = *r.Note, true
	}
	return v
}

// verdictView is a check verdict (profile-check §3).
type verdictView struct {
	Verdict, Model, At  string
	Advisory, Truncated bool
	Questions           []questionView
}

type questionView struct {
	Ask, Kind, Answer, Result string
}

// newVerdictView reads a verdict as run data, a handoff or an escalation
// hold it; nil when there is none or it is not a verdict.
func newVerdictView(raw json.RawMessage) *verdictView {
	if len(raw) == 0 {
		return nil
	}
	var c *interpreter.CheckVerdict
	if err := interpreter.DecodeExact(raw, &c); err != nil || c == nil {
		return nil
	}
	v := &verdictView{Verdict: string(c.Verdict), Model: c.Model, At: when(c.At), Advisory: c.Advisory, Truncated: c.Truncated}
	for _, q := range c.Questions {
		v.Questions = append(v.Questions, questionView{Ask: q.Ask, Kind: strings.ReplaceAll(string(q.Kind), "_", "/"), Answer: answerText(q), Result: string(q.Result)})
	}
	return v
}

// answerText shows an evaluator's answer: the chance of yes for a yes/no
// question, the answer and its confidence for a choice, the level for a
// rubric.
func answerText(q interpreter.CheckQuestionResult) string {
	if q.Answer == nil {
		return "no answer"
	}
	conf := ""
	if q.Confidence != nil {
		conf = fmt.Sprintf(" (confidence %.2f)", *q.Confidence)
	}
	switch q.Kind {
	case "yes_no":
		if n, ok := q.Answer.(json.Number); ok {
			if p, err := n.Float64(); err == nil {
				return fmt.Sprintf("yes with probability %.2f", p)
			}
		}
	case "rubric":
		return "level " + plainText(q.Answer) + conf
	}
	return plainText(q.Answer) + conf
}

// handoffView is what earlier attempts left.
type handoffView struct {
	Progress string
	Returned *interpreter.Returned
	Issues   []string
	Check    *verdictView
}

func newHandoffView(h *interpreter.Handoff) *handoffView {
	if h == nil || (h.Progress == "" && h.Returned == nil && len(h.Issues) == 0 && isNull(h.Check)) {
		return nil
	}
	v := &handoffView{Progress: h.Progress, Returned: h.Returned, Issues: h.Issues, Check: newVerdictView(h.Check)}
	if v.Returned != nil {
		r := *v.Returned
		r.At = when(r.At)
		v.Returned = &r
	}
	return v
}

// when shows a timestamp of the tools in a person's terms, in UTC.
func when(stamp string) string {
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return stamp
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// due shows a due time and whether it has passed.
func due(stamp *string, now time.Time) (string, bool) {
	if stamp == nil || *stamp == "" {
		return "", false
	}
	t, err := time.Parse(time.RFC3339Nano, *stamp)
	if err != nil {
		return *stamp, false
	}
	return when(*stamp), !now.Before(t)
}

// assignedText says who may decide an item.
func assignedText(a interpreter.Assignee) string {
	if a.Group != "" {
		return "group " + a.Group
	}
	if a.Person != "" {
		return a.Person
	}
	return "nobody"
}

// kindLabel names an item for a person.
func kindLabel(it *interpreter.WorkItem) string {
	switch {
	case it.Escalation != nil:
		return "Escalation"
	case it.Kind == "approve":
		if _, ok := parseToolCall(it.Text); ok {
			return "Tool call approval"
		}
		return "Approval"
	case it.Kind == "task":
		return "Task"
	}
	return it.Kind
}

// firstLine is a short line of an item's text for a list.
func firstLine(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(line); len(r) > 140 {
		line = string(r[:139]) + "…"
	}
	return line
}

// stepSection is one step of a run: its state and its run data.
type stepSection struct {
	ID, Kind, State string
	Due             string
	Overdue         bool
	Current         *recordView
	History         []*recordView
}

func stepSections(v *interpreter.View) []stepSection {
	out := make([]stepSection, 0, len(v.Steps))
	for _, s := range v.Steps {
		sec := stepSection{ID: s.ID, Kind: string(s.Kind), State: "not reached", Due: when(s.Due)}
		if s.State != nil {
			sec.State = *s.State
		}
		if s.Overdue != nil {
			sec.Overdue = *s.Overdue
		}
		if d := runData(v).Steps[s.ID]; d != nil {
			if d.Record != nil && !recordEmpty(d.Record) {
				sec.Current = newRecordView(d.Record)
			}
			for _, h := range d.History {
				if h != nil {
					sec.History = append(sec.History, newRecordView(h))
				}
			}
		}
		out = append(out, sec)
	}
	return out
}

// runHeader is a run's header lines.
type runHeader struct {
	ID, Process, Mode, State, Outcome string
	Version                           int
	StartedBy, StartedAt, UpdatedAt   string
	EndedBy, EndedAt, EndedNote       string
	Ended, Test, Open                 bool
	URL                               string
}

func newRunHeader(r interpreter.RunInfo) runHeader {
	h := runHeader{
		ID: r.ID, Process: r.Process, Version: r.Version, Mode: r.Mode, State: r.State,
		StartedBy: r.StartedBy, StartedAt: when(r.StartedAt), UpdatedAt: when(r.UpdatedAt),
		Test: r.Mode == "test", Open: r.State == "active" || r.State == "waiting", URL: Path + "runs/" + url.PathEscape(r.ID),
	}
	if r.Outcome != nil {
		h.Outcome = *r.Outcome
	}
	if r.Ended != nil {
		h.Ended, h.EndedBy, h.EndedAt = true, r.Ended.By, when(r.Ended.At)
		if r.Ended.Note != nil {
			h.EndedNote = *r.Ended.Note
		}
	}
	return h
}

// runData is a run view's run data, empty when the view carries none.
func runData(v *interpreter.View) *interpreter.Data {
	if v.Data == nil {
		return &interpreter.Data{}
	}
	return v.Data
}

// recordEmpty reports whether a record holds nothing: a step rewound by a
// rejection has history and no current completion.
func recordEmpty(r *interpreter.Record) bool {
	return r.Output == nil && r.Evidence == nil && r.Summary == "" && r.Next == "" && r.Reason == "" &&
		r.Decision == "" && r.Note == nil && isNull(r.Check) && r.By == "" && r.At == ""
}

// isNull reports whether a raw JSON value is absent or null.
func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}
