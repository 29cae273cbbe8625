package inbox

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"

	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// The decisions, as decide names them, and how the item page offers them.
var decisionLabels = map[string]string{
	"completed": "Complete",
	"approved":  "Approve",
	"rejected":  "Reject",
	"returned":  "Return to the agent",
	"failed":    "Fail the run",
}

// itemPage is one work item with its run and the forms of its decisions.
type itemPage struct {
	frame
	Run        runHeader
	Open       bool // the item is open: its forms are shown
	Action     string
	ItemID     string
	StepID     string
	Kind       string
	Text       string
	ToolCall   *toolCall
	Assigned   string
	Due        string
	Overdue    bool
	Test       bool
	Handoff    *handoffView
	Escalation *escalationView
	Complete   *completeForm
	Decide     *noteForm
	Inputs     []kv
	Steps      []stepSection
	Body       template.HTML
}

type escalationView struct {
	Note, By, At string
	Check        *verdictView
	Candidate    *recordView
}

// completeForm is the form of the completed decision: the output fields,
// evidence, summary, and the route with its reason.
type completeForm struct {
	RequestID, Snapshot string
	Fields              []formField
	EvidenceKinds       []string
	Kept                []keptFile
	Links               string
	Summary             string
	Routes              []routeChoice
	Reason              string
	OutputIssues        []string
	EvidenceIssues      []string
	SummaryIssues       []string
	NextIssues          []string
	ReasonIssues        []string
	NoteIssues          []string
}

type keptFile struct{ Ref, Label string }

type routeChoice struct {
	To, When string
	Selected bool
}

// noteForm is the form of every other decision: a note and a button each.
type noteForm struct {
	RequestID, Snapshot string
	Note                string
	Buttons             []button
	NoteIssues          []string
	Hint                string
}

type button struct{ Decision, Label string }

// posted is a refused decision: what the person sent, so the page shows
// it again with the issues beside the fields they name.
type posted struct {
	form     url.Values
	decision string
	kept     []keptFile
	err      *interpreter.Error
	issues   issuesByPart
}

// item shows one work item.
func (in *Inbox) item(w http.ResponseWriter, r *http.Request, s *session) {
	in.showItem(w, r, s, http.StatusOK, nil)
}

func (in *Inbox) showItem(w http.ResponseWriter, r *http.Request, s *session, code int, p *posted) {
	runID, itemID := r.PathValue("run"), r.PathValue("item")
	var v interpreter.View
	if err := in.call(r.Context(), s, "get_run", map[string]any{"runId": runID}, &v); err != nil {
		in.failTool(w, r, s, err)
		return
	}
	page := itemPage{
		frame: in.frame(s, "Work item "+itemID, "work"), Run: newRunHeader(v.Run), Action: workflows.InboxLink(Path, runID, itemID), ItemID: itemID,
		Inputs: values(runData(&v).Inputs), Steps: stepSections(&v), Body: markdown(v.Body),
	}
	if p != nil && p.err != nil {
		// Every issue is listed at the top too, and again beside the
		// field it names.
		page.Error, page.Issues = p.err.Message, p.err.Issues
	}
	var it *interpreter.WorkItem
	for i := range v.WorkItems {
		if v.WorkItems[i].ID == itemID {
			it = &v.WorkItems[i]
		}
	}
	if it == nil {
		if page.Error == "" {
			page.Error = fmt.Sprintf("Work item %s is not open: it was decided, or the run moved on or ended. The run is below.", itemID)
		}
		if code == http.StatusOK {
			code = http.StatusNotFound
		}
		in.render(w, code, "item", page)
		return
	}
	page.Open, page.StepID, page.Kind, page.Text = true, it.StepID, kindLabel(it), it.Text
	page.Title = page.Kind + ": " + it.StepID
	page.ToolCall, _ = parseToolCall(it.Text)
	page.Assigned = assignedText(it.AssignedTo)
	page.Due, page.Overdue = due(it.Due, in.now())
	page.Test = it.Mode == "test" || v.Run.Mode == "test"
	page.Handoff = newHandoffView(it.Handoff)
	if e := it.Escalation; e != nil {
		page.Escalation = &escalationView{Note: e.Note, By: e.By, At: when(e.At), Check: newVerdictView(e.Check)}
		if c := e.Candidate; c != nil {
			page.Escalation.Candidate = newRecordView(c)
		}
	}
	var others []button
	for _, d := range it.Decide.Decisions {
		if d == "completed" {
			page.Complete = in.completeForm(it, p)
			continue
		}
		others = append(others, button{Decision: d, Label: decisionLabels[d]})
	}
	if len(others) > 0 {
		page.Decide = &noteForm{RequestID: newRequestID(), Snapshot: it.Snapshot, Buttons: others, Hint: noteHint(others)}
		if p != nil && p.decision != "completed" {
			page.Decide.Note = p.form.Get("note")
			page.Decide.NoteIssues = p.issues.note
		}
	}
	in.render(w, code, "item", page)
}

// noteHint says when the note is needed, for the decisions offered.
func noteHint(bs []button) string {
	var need []string
	optional := false
	for _, b := range bs {
		if b.Decision == "approved" {
			optional = true
			continue
		}
		need = append(need, strings.ToLower(strings.Fields(b.Label)[0]))
	}
	hint := "Required to " + strings.Join(need, " or ")
	if len(need) == 0 {
		hint = "Optional"
	}
	if optional && len(need) > 0 {
		hint += "; optional when approving"
	}
	return hint + "."
}

// completeForm lays out the completed decision's form: empty, filled with
// a check's held submission, or as the person posted it.
func (in *Inbox) completeForm(it *interpreter.WorkItem, p *posted) *completeForm {
	f := &completeForm{RequestID: newRequestID(), Snapshot: it.Snapshot, EvidenceKinds: it.Evidence}
	var cand *interpreter.Record
	if it.Escalation != nil {
		cand = it.Escalation.Candidate
	}
	var form url.Values
	if p != nil && p.decision == "completed" {
		form = p.form
	}
	for _, fd := range it.Output {
		var v any
		has := false
		if cand != nil && form == nil {
			v, has = cand.Output[fd.Name]
		}
		ff := newFormField(fd, v, has, form)
		if p != nil {
			ff.Issues = p.issues.output[fd.Name]
		}
		f.Fields = append(f.Fields, ff)
	}
	switch {
	case form != nil:
		f.Kept, f.Links = p.kept, form.Get("evidence.links")
		f.Summary, f.Reason = form.Get("summary"), form.Get("reason")
	case cand != nil:
		var links []string
		for _, e := range cand.Evidence {
			if e.Kind == "file" {
				f.Kept = append(f.Kept, keptFile{Ref: e.Ref, Label: e.Ref})
			} else {
				links = append(links, e.Ref)
			}
		}
		f.Links, f.Summary, f.Reason = strings.Join(links, "\n"), cand.Summary, cand.Reason
	}
	chosen := ""
	if form != nil {
		chosen = form.Get("next")
	} else if cand != nil {
		chosen = cand.Next
	}
	for _, rt := range it.Next {
		f.Routes = append(f.Routes, routeChoice{To: rt.To, When: rt.When, Selected: rt.To == chosen})
	}
	if p != nil && p.decision == "completed" {
		is := p.issues
		f.OutputIssues, f.EvidenceIssues, f.SummaryIssues = is.outputAll, is.evidence, is.summary
		f.NextIssues, f.ReasonIssues, f.NoteIssues = is.next, is.reason, is.note
	}
	return f
}

// decide submits a decision through upload and decide.
func (in *Inbox) decide(w http.ResponseWriter, r *http.Request, s *session) {
	runID, itemID := r.PathValue("run"), r.PathValue("item")
	form := r.PostForm
	reqID := form.Get("requestId")
	decision := form.Get("decision")
	args := map[string]any{
		"runId": runID, "workItemId": itemID, "snapshot": form.Get("snapshot"),
		"decision": decision, "requestId": reqID,
	}
	if out, ok := readOutput(form); ok {
		args["output"] = out
	}
	p := &posted{form: form, decision: decision}

	// Evidence: files attached before, new files (uploaded first, each
	// with a requestId derived from the form's), and links.
	var ev []any
	labels := map[string]string{}
	for k, vals := range form {
		if ref, ok := strings.CutPrefix(k, "evidence.label."); ok && len(vals) > 0 {
			labels[ref] = vals[0]
		}
	}
	for _, ref := range form["evidence.keep"] {
		if ref = strings.TrimSpace(ref); ref != "" {
			ev = append(ev, map[string]any{"kind": "file", "ref": ref})
			label := labels[ref]
			if label == "" {
				label = ref
			}
			p.kept = append(p.kept, keptFile{Ref: ref, Label: label})
		}
	}
	var uploadIssues []string
	if r.MultipartForm != nil {
		for i, fh := range r.MultipartForm.File["evidence.file"] {
			if fh.Size == 0 && fh.Filename == "" {
				continue
			}
			id, err := in.upload(r, s, fh, fmt.Sprintf("%s-file-%d", reqID, i))
			if err != nil {
				e, ok := refusal(err)
				if !ok {
					in.failTool(w, r, s, err)
					return
				}
				msg := e.Message
				if len(e.Issues) > 0 {
					msg = strings.Join(e.Issues, "; ")
				}
				uploadIssues = append(uploadIssues, fmt.Sprintf("file %s: %s", fh.Filename, msg))
				continue
			}
			ev = append(ev, map[string]any{"kind": "file", "ref": id})
			p.kept = append(p.kept, keptFile{Ref: id, Label: fh.Filename})
		}
	}
	for _, line := range strings.Split(normalizeLines(form.Get("evidence.links")), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			ev = append(ev, map[string]any{"kind": "link", "ref": line})
		}
	}
	if ev != nil {
		args["evidence"] = ev
	}
	for _, name := range []string{"summary", "reason", "note"} {
		if v, ok := form[name]; ok && strings.TrimSpace(v[0]) != "" {
			args[name] = normalizeLines(v[0])
		}
	}
	if v := form.Get("next"); v != "" {
		args["next"] = v
	}
	if len(uploadIssues) > 0 {
		p.err = interpreter.Refuse(interpreter.CodeInvalid, "A file could not be uploaded, so nothing was decided.", uploadIssues...)
		p.issues = issuesByPart{evidence: uploadIssues}
		in.showItem(w, r, s, http.StatusUnprocessableEntity, p)
		return
	}
	if err := in.call(r.Context(), s, "decide", args, nil); err != nil {
		e, ok := refusal(err)
		if !ok {
			in.failTool(w, r, s, err)
			return
		}
		p.err, p.issues = e, sortIssues(e.Issues)
		in.showItem(w, r, s, status(e), p)
		return
	}
	q := url.Values{"decided": {itemID}, "decision": {decision}}
	http.Redirect(w, r, workflows.InboxLink(Path, runID, "")+"?"+q.Encode(), http.StatusSeeOther)
}

// upload stores one posted file through the upload tool. The arguments
// are written straight into one buffer of their final size, the file
// base64-encoded into it as it is read: no copy of the file, of its
// base64 or of the arguments is made on the way.
func (in *Inbox) upload(r *http.Request, s *session, fh *multipart.FileHeader, reqID string) (string, error) {
	f, err := fh.Open()
	if err != nil {
		return "", err
	}
	defer f.Close()
	ct := fh.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/octet-stream"
	}
	name := fh.Filename
	if name == "" {
		name = "file"
	}
	head, err := json.Marshal(map[string]string{"fileName": name, "contentType": ct, "requestId": reqID})
	if err != nil {
		return "", err
	}
	var args bytes.Buffer
	args.Grow(len(head) + len(`,"contentBase64":""`) + base64.StdEncoding.EncodedLen(int(fh.Size)))
	args.Write(head[:len(head)-1]) // without its closing brace
	args.WriteString(`,"contentBase64":"`)
	enc := base64.NewEncoder(base64.StdEncoding, &args)
	if _, err := io.Copy(enc, f); err != nil {
		return "", err
	}
	enc.Close()
	args.WriteString(`"}`)
	var up uploaded
	err = in.callRaw(r.Context(), s, "upload", args.Bytes(), &up)
	return up.ID, err
}

// issuesByPart sorts a refusal's issues to the parts of the form they
// name, by the issue grammar "<path>: <problem>".
type issuesByPart struct {
	output                                map[string][]string // by output field
	outputAll                             []string            // about the output as a whole
	evidence, summary, next, reason, note []string
	other                                 []string
}

func sortIssues(issues []string) issuesByPart {
	var b issuesByPart
	b.output = map[string][]string{}
	for _, is := range issues {
		path, _, _ := strings.Cut(is, ": ")
		head := path
		if i := strings.IndexAny(head, ".[ "); i >= 0 {
			head = head[:i]
		}
		switch head {
		case "output":
			rest := strings.TrimPrefix(path, "output")
			if name, ok := strings.CutPrefix(rest, "."); ok {
				if i := strings.IndexAny(name, ".["); i >= 0 {
					name = name[:i]
				}
				b.output[name] = append(b.output[name], is)
				continue
			}
			b.outputAll = append(b.outputAll, is)
		case "evidence":
			b.evidence = append(b.evidence, is)
		case "summary":
			b.summary = append(b.summary, is)
		case "next":
			b.next = append(b.next, is)
		case "reason":
			b.reason = append(b.reason, is)
		case "note":
			b.note = append(b.note, is)
		default:
			b.other = append(b.other, is)
		}
	}
	return b
}
