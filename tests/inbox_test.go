package tests

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/activities"
	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// The web inbox, driven as a browser drives it: pages and form posts over
// HTTP with a cookie jar, against a real gateway, PostgreSQL and Temporal.
// What the pages claim is checked again over MCP.

const fieldsSrc = `---
name: inbox-fields
description: A reviewer fills in figures of every kind and picks a route, then an approver signs.
inputs:
  ref: string
steps:
  - id: fill
    person: reviewers
    task: Fill in the figures and choose the route.
    output:
      total: number
      tier: { type: string, one_of: [gold, silver] }
      checked: boolean
      tags: { type: list, items: string }
      memo: { type: string, optional: true, description: Anything the approver should know }
    evidence: [file]
    next:
      - { to: sign, when: The figures are complete }
      - { to: give_up, when: They cannot be found }
  - id: sign
    person: approvers
    approve: Approve the figures.
    on_reject: fill
    next: done
  - id: give_up
    finish: abandoned
  - id: done
    finish: signed
---

# Figures

Fill in **the figures** from the ledger. <script>alert("body")</script>

[a bad link](javascript:alert(1)) and [a good one](https://example.com/ledger).
`

var (
	rita  = personID("rita@example.com", "reviewers")
	alma  = personID("alma@example.com", "approvers")
	ames  = personID("ames@example.com", "approvers")
	stan  = personID("stan@example.com")
	opsID = auth.Identity{ID: "u_ops", Kind: auth.KindOperator, Groups: []string{"operators"}}
)

func startFields(t *testing.T, b *baton, starter *user, ref string) view {
	t.Helper()
	var v view
	starter.ok("start_run", map[string]any{"process": "inbox-fields", "inputs": map[string]any{"ref": ref}, "requestId": rid()}, &v)
	return v
}

// No page and no form works without a session; sign-in refuses agents and
// forms it did not make; the session cookie is HttpOnly and SameSite=Lax.
func TestInboxNeedsSession(t *testing.T) {
	b := startInbox(t, options{})
	b.publish(fieldsSrc)
	starter := b.connect(stan)
	v := startFields(t, b, starter, "one")
	w := b.browser(t)
	itemPath := "/inbox/runs/" + v.Run.ID + "/items/" + v.WorkItems[0].ID
	for _, path := range []string{"/inbox/", "/inbox/escalations", "/inbox/runs", "/inbox/runs/" + v.Run.ID, itemPath, "/inbox/nothing-here"} {
		p := w.get(path)
		if p.status != http.StatusOK || p.url != "/inbox/signin?next="+url.QueryEscape(path) || !p.has("Sign in to the Baton inbox") {
			t.Fatalf("GET %s without a session ended at %s (%d)", path, p.url, p.status)
		}
		if strings.Contains(p.body, "inbox-fields") || strings.Contains(p.body, "Fill in the figures") {
			t.Fatalf("GET %s without a session shows the run", path)
		}
	}
	p := w.postMultipart(itemPath, url.Values{"decision": {"approved"}, "snapshot": {v.WorkItems[0].Snapshot}, "requestId": {rid()}})
	if !strings.HasPrefix(p.url, "/inbox/signin") {
		t.Fatalf("a post without a session ended at %s (%d)", p.url, p.status)
	}

	// A forged session cookie is no session.
	u, _ := url.Parse(b.url + "/inbox/")
	w.c.Jar.SetCookies(u, []*http.Cookie{{Name: "baton_inbox", Value: "eyJpZCI6Im1hbGxvcnkifQ.AAAA", Path: "/inbox/"}})
	if p := w.get("/inbox/"); !strings.HasPrefix(p.url, "/inbox/signin") {
		t.Fatalf("a forged cookie reached %s", p.url)
	}

	// The sign-in form needs its CSRF token and the cookie it came with.
	fresh := b.browser(t)
	p = fresh.post("/inbox/signin", url.Values{"kind": {"person"}, "id": {"rita@example.com"}})
	if p.status != http.StatusForbidden || !p.has("out of date") {
		t.Fatalf("sign-in without a token: %d\n%s", p.status, p.body)
	}
	// Agents work over MCP.
	p = fresh.get("/inbox/signin")
	form := hiddenFields(p.body)
	form.Set("kind", "agent")
	form.Set("id", "a_screener")
	if p = fresh.post("/inbox/signin", form); p.status != http.StatusBadRequest || !p.has("Agents work over MCP") {
		t.Fatalf("agent sign-in: %d\n%s", p.status, p.body)
	}

	// Signing in returns to the page asked for.
	p = fresh.get("/inbox/runs/" + v.Run.ID)
	form = hiddenFields(p.body)
	if form.Get("next") != "/inbox/runs/"+v.Run.ID {
		t.Fatalf("sign-in form next = %q", form.Get("next"))
	}
	form.Set("kind", "person")
	form.Set("id", "Rita@Example.com")
	form.Set("groups", "reviewers")
	// Look at the cookie as it is set.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Jar: fresh.c.Jar}
	resp, err := noFollow.PostForm(b.url+"/inbox/signin", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var sc *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "baton_inbox" {
			sc = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/inbox/runs/"+v.Run.ID || sc == nil {
		t.Fatalf("sign-in answered %d to %q with cookies %v", resp.StatusCode, resp.Header.Get("Location"), resp.Cookies())
	}
	if !sc.HttpOnly || sc.SameSite != http.SameSiteLaxMode || sc.Path != "/inbox/" || sc.Secure {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Lax, Path=/inbox/, not Secure on loopback", sc)
	}
	p = fresh.get("/inbox/runs/" + v.Run.ID)
	if p.status != http.StatusOK || !p.has("rita@example.com") || !p.has("inbox-fields") {
		t.Fatalf("signed in, the run page: %d\n%s", p.status, p.body)
	}

	// Signing out ends the session in this browser.
	out := fresh.post("/inbox/signout", url.Values{"csrf": {hiddenFields(p.body).Get("csrf")}})
	if !strings.HasPrefix(out.url, "/inbox/signin") {
		t.Fatalf("sign out ended at %s", out.url)
	}
	if p := fresh.get("/inbox/"); !strings.HasPrefix(p.url, "/inbox/signin") {
		t.Fatalf("after sign-out, /inbox/ is %s", p.url)
	}
}

// My work is get_work for this person, oldest first, with process, step,
// group and due time; other people see their own.
func TestInboxMyWork(t *testing.T) {
	b := startInbox(t, options{})
	b.publish(fieldsSrc)
	starter := b.connect(stan)
	var runs []string
	for _, ref := range []string{"first", "second", "third"} {
		runs = append(runs, startFields(t, b, starter, ref).Run.ID)
	}
	w := b.browser(t)
	p := w.signIn(rita)
	if p.url != "/inbox/" {
		t.Fatalf("signed in at %s", p.url)
	}
	last := -1
	for _, id := range runs {
		i := strings.Index(p.body, "run "+id)
		if i < 0 || i < last {
			t.Fatalf("run %s missing or out of order in my work:\n%s", id, p.body)
		}
		last = i
	}
	for _, s := range []string{"Task: fill", "inbox-fields v1", "Assigned to group reviewers", "Fill in the figures and choose the route."} {
		if !p.has(s) {
			t.Fatalf("my work lacks %q:\n%s", s, p.body)
		}
	}
	other := b.browser(t)
	if p := other.signIn(stan); !p.has("Nothing is waiting for you.") || strings.Contains(p.body, runs[0]) {
		t.Fatalf("stan's work:\n%s", p.body)
	}
}

// A task's form is generated from its fields; bad values come back next to
// the fields they name and change nothing; a good post with a file decides
// once, even when posted twice.
func TestInboxTaskForm(t *testing.T) {
	b := startInbox(t, options{})
	b.publish(fieldsSrc)
	starter := b.connect(stan)
	mcp := b.connect(rita)
	v := startFields(t, b, starter, "one")
	item := v.WorkItems[0]
	itemURL := "/inbox/runs/" + v.Run.ID + "/items/" + item.ID
	w := b.browser(t)
	w.signIn(rita)
	p := w.get(itemURL)
	if p.status != http.StatusOK {
		t.Fatalf("item page %d\n%s", p.status, p.body)
	}
	form := formByID(t, p.body, "complete")
	for _, s := range []string{
		`<option value="&#34;gold&#34;">gold</option>`, `(one of gold, silver)`, `(list of string)`,
		`(string, optional)`, `Anything the approver should know`, `required: file`,
		`value="sign"`, `The figures are complete`, `They cannot be found`, `name="o.total"`, `inputmode="decimal"`,
	} {
		if !strings.Contains(form, s) {
			t.Fatalf("the form lacks %q:\n%s", s, form)
		}
	}
	// The body is Markdown, rendered without its raw HTML or script links.
	if !strings.Contains(p.body, "<strong>the figures</strong>") || strings.Contains(p.body, `<script>alert("body")`) ||
		strings.Contains(p.body, "javascript:") || !strings.Contains(p.body, `href="https://example.com/ledger"`) {
		t.Fatalf("the body is not rendered safely:\n%s", p.body)
	}

	// Bad values: every issue beside its field, nothing changed.
	bad := hiddenFields(form)
	bad.Set("decision", "completed")
	bad.Set("o.total", "12,5")
	bad.Set("o.checked", "true")
	bad.Set("o.tags", "a\r\nb")
	p = w.postMultipart(itemURL, bad)
	if p.status != http.StatusUnprocessableEntity {
		t.Fatalf("bad values answered %d\n%s", p.status, p.body)
	}
	form = formByID(t, p.body, "complete")
	for field, issue := range map[string]string{"total": "output.total: expected number", "tier": "output.tier: missing"} {
		if block := fieldBlock(t, form, field); !strings.Contains(block, issue) || !strings.Contains(block, `class="invalid"`) {
			t.Fatalf("field %s lacks %q:\n%s", field, issue, block)
		}
	}
	for _, issue := range []string{"evidence: file required", "next: required, one of sign, give_up", "reason: required"} {
		if !strings.Contains(form, escHTML(issue)) {
			t.Fatalf("the form lacks the issue %q:\n%s", issue, form)
		}
	}
	if !strings.Contains(fieldBlock(t, form, "total"), `value="12,5"`) {
		t.Fatal("the typed total was not kept")
	}
	if after := getRun(mcp, v.Run.ID); after.StepState("fill") != "waiting" || len(after.WorkItems) != 1 || after.Run.UpdatedAt != v.Run.UpdatedAt {
		t.Fatalf("a refused decision changed the run: %+v", after.Run)
	}

	// Good values with a file.
	good := hiddenFields(form)
	if good.Get("requestId") == bad.Get("requestId") {
		t.Fatal("the form shown again kept the refused requestId")
	}
	good.Set("decision", "completed")
	good.Set("o.total", "12.50")
	good.Set("o.tier", `"gold"`)
	good.Set("o.checked", "true")
	good.Set("o.tags", "alpha\nbeta\n")
	good.Set("next", "sign")
	good.Set("reason", "All figures found.")
	good.Set("summary", "Read the ledger.")
	file := upFile{"evidence.file", "ledger.txt", "ledger lines"}
	p = w.postMultipart(itemURL, good, file)
	if p.status != http.StatusOK || p.url != "/inbox/runs/"+v.Run.ID+"?decided="+item.ID+"&decision=completed" || !p.has("Work item "+item.ID+": complete.") {
		t.Fatalf("the decision ended at %s (%d)\n%s", p.url, p.status, p.body)
	}
	after := getRun(mcp, v.Run.ID)
	rec := after.Data.Steps["fill"]
	if after.StepState("fill") != "done" || rec.Output["total"] != json.Number("12.50") || rec.Output["tier"] != "gold" ||
		rec.Output["checked"] != true || len(rec.Output["tags"].([]any)) != 2 || rec.Output["memo"] != nil ||
		rec.Next != "sign" || rec.Reason != "All figures found." || rec.By != "rita@example.com" || len(rec.Evidence) != 1 {
		t.Fatalf("run data after the decision: %+v", rec.Record)
	}
	// The run page links the file with a working signed link.
	link := regexp.MustCompile(`href="` + regexp.QuoteMeta(b.url) + `(/files/` + rec.Evidence[0].Ref + `\?[^"]+)"`).FindStringSubmatch(p.body)
	if link == nil {
		t.Fatalf("no file link on the run page:\n%s", p.body)
	}
	if f := w.get(strings.ReplaceAll(link[1], "&amp;", "&")); f.status != http.StatusOK || f.body != "ledger lines" {
		t.Fatalf("the file link gave %d %q", f.status, f.body)
	}

	// A double click posts the same form again: the same answer, one
	// decision, one upload.
	p = w.postMultipart(itemURL, good, file)
	if p.status != http.StatusOK || !strings.HasPrefix(p.url, "/inbox/runs/"+v.Run.ID+"?decided=") {
		t.Fatalf("the second click ended at %s (%d)\n%s", p.url, p.status, p.body)
	}
	again := getRun(mcp, v.Run.ID)
	if len(again.Data.Steps["fill"].History) != 0 || len(again.WorkItems) != 1 || again.WorkItems[0].StepID != "sign" ||
		again.Data.Steps["fill"].Evidence[0].Ref != rec.Evidence[0].Ref {
		t.Fatalf("the second click decided again: %+v", again.WorkItems)
	}
}

func escHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// completeFill decides the fill task over MCP, so the run waits on sign.
func completeFill(t *testing.T, reviewer *user, v view) view {
	t.Helper()
	w := itemFor(v, "fill")
	v2 := v
	reviewer.ok("decide", decideArgs(v, w, "completed", map[string]any{
		"output":   map[string]any{"total": 3, "tier": "silver", "checked": false, "tags": []any{"x"}},
		"evidence": []any{map[string]any{"kind": "file", "ref": upload(t, reviewer, "sheet")}},
		"next":     "sign", "reason": "Done.",
	}), &v2)
	return v2
}

// An approval: the wrong group is forbidden, a rejection needs a note, a
// rejection with one reworks the run, and a second member's late decision
// learns it was already decided.
func TestInboxApproval(t *testing.T) {
	b := startInbox(t, options{})
	b.publish(fieldsSrc)
	starter := b.connect(stan)
	reviewer := b.connect(rita)
	v := completeFill(t, reviewer, startFields(t, b, starter, "one"))
	sign := itemFor(v, "sign")
	itemURL := "/inbox/runs/" + v.Run.ID + "/items/" + sign.ID

	// Rita reviews, she does not approve.
	wr := b.browser(t)
	wr.signIn(rita)
	p := wr.get(itemURL)
	if p.status != http.StatusOK || !p.has("Approve the figures.") || !p.has("assigned to group approvers") {
		t.Fatalf("rita's view of the approval: %d\n%s", p.status, p.body)
	}
	f := hiddenFields(formByID(t, p.body, "decide"))
	f.Set("decision", "approved")
	if p = wr.postMultipart(itemURL, f); p.status != http.StatusForbidden || !p.has("is not assigned to you") {
		t.Fatalf("wrong group: %d\n%s", p.status, p.body)
	}

	// Ames opens the item now and decides later.
	wa2 := b.browser(t)
	wa2.signIn(ames)
	late := hiddenFields(formByID(t, wa2.get(itemURL).body, "decide"))

	wa := b.browser(t)
	wa.signIn(alma)
	p = wa.get(itemURL)
	form := formByID(t, p.body, "decide")
	for _, s := range []string{`value="approved"`, `value="rejected"`, `value="failed"`, "Required to reject or fail; optional when approving."} {
		if !strings.Contains(form, s) {
			t.Fatalf("the approval form lacks %q:\n%s", s, form)
		}
	}
	if strings.Contains(p.body, `id="complete"`) {
		t.Fatal("an approval shows the completion form")
	}
	f = hiddenFields(form)
	f.Set("decision", "rejected")
	f.Set("note", "   ")
	p = wa.postMultipart(itemURL, f)
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(formByID(t, p.body, "decide"), "note: required") {
		t.Fatalf("a rejection without a note: %d\n%s", p.status, p.body)
	}
	if after := getRun(reviewer, v.Run.ID); itemFor(after, "sign") == nil || after.Run.UpdatedAt != v.Run.UpdatedAt {
		t.Fatal("a refused rejection changed the run")
	}
	f = hiddenFields(formByID(t, p.body, "decide"))
	f.Set("decision", "rejected")
	f.Set("note", "Total looks low; recount.")
	p = wa.postMultipart(itemURL, f)
	if p.status != http.StatusOK || !p.has("Work item "+sign.ID+": reject.") {
		t.Fatalf("the rejection: %d at %s\n%s", p.status, p.url, p.body)
	}
	after := getRun(reviewer, v.Run.ID)
	if after.StepState("fill") != "waiting" || after.StepState("sign") != "null" || len(after.Data.Steps["fill"].History) != 1 ||
		after.Data.Steps["sign"].Decision != "rejected" || *after.Data.Steps["sign"].Note != "Total looks low; recount." {
		t.Fatalf("after the rejection: %s", after.StepStates())
	}
	if !p.has("Total looks low; recount.") || !p.has("History: 1 earlier completion") {
		t.Fatalf("the run page does not show the rework:\n%s", p.body)
	}

	// Ames's late approval: the item was decided.
	late.Set("decision", "approved")
	p = wa2.postMultipart(itemURL, late)
	if p.status != http.StatusConflict || !p.has("already decided") || strings.Contains(p.body, `id="decide"`) {
		t.Fatalf("a late decision: %d\n%s", p.status, p.body)
	}
}

// Someone else's item: a step assigned to the run's initiator is theirs.
func TestInboxSomeoneElsesItem(t *testing.T) {
	b := startInbox(t, options{})
	mira := b.connect(personID("mira@example.com"))
	v := startSrc(t, b, mira, `---
name: inbox-own
description: The person who asked confirms.
steps:
  - id: confirm
    person: initiator
    approve: Confirm your own request.
    next: done
  - id: done
    finish: confirmed
---
`, nil)
	itemURL := "/inbox/runs/" + v.Run.ID + "/items/" + v.WorkItems[0].ID
	wb := b.browser(t)
	wb.signIn(personID("bob@example.com", "approvers"))
	p := wb.get(itemURL)
	if !p.has("assigned to mira@example.com") {
		t.Fatalf("the item does not say whose it is:\n%s", p.body)
	}
	f := hiddenFields(formByID(t, p.body, "decide"))
	f.Set("decision", "approved")
	if p = wb.postMultipart(itemURL, f); p.status != http.StatusForbidden {
		t.Fatalf("bob approving mira's item: %d\n%s", p.status, p.body)
	}
	wm := b.browser(t)
	wm.signIn(personID("mira@example.com"))
	f = hiddenFields(formByID(t, wm.get(itemURL).body, "decide"))
	f.Set("decision", "approved")
	if p = wm.postMultipart(itemURL, f); p.status != http.StatusOK || !p.has("confirmed") {
		t.Fatalf("mira approving: %d\n%s", p.status, p.body)
	}
	if after := getRun(mira, v.Run.ID); after.Run.State != "ended" || *after.Run.Outcome != "confirmed" {
		t.Fatalf("run %+v", after.Run)
	}
}

// A stale snapshot: the run data changed after the page was shown. The
// page comes back with the fresh data and keeps what was typed.
func TestInboxStaleSnapshot(t *testing.T) {
	b := startInbox(t, options{})
	starter := b.connect(stan)
	v := startSrc(t, b, starter, `---
name: inbox-pair
description: Two people work in parallel.
steps:
  - id: both
    parallel: [left, right]
    next: done
  - id: left
    person: lefties
    task: Do the left part.
    output: { note: string }
    next: join
  - id: right
    person: righties
    task: Do the right part.
    output: { note: string }
    next: join
  - id: done
    finish: paired
---
`, nil)
	left, right := itemFor(v, "left"), itemFor(v, "right")
	wl := b.browser(t)
	wl.signIn(personID("lea@example.com", "lefties"))
	leftURL := "/inbox/runs/" + v.Run.ID + "/items/" + left.ID
	stale := hiddenFields(formByID(t, wl.get(leftURL).body, "complete"))

	wr := b.browser(t)
	wr.signIn(personID("rob@example.com", "righties"))
	rightURL := "/inbox/runs/" + v.Run.ID + "/items/" + right.ID
	f := hiddenFields(formByID(t, wr.get(rightURL).body, "complete"))
	f.Set("decision", "completed")
	f.Set("o.note", "Right done.")
	if p := wr.postMultipart(rightURL, f); p.status != http.StatusOK {
		t.Fatalf("right: %d\n%s", p.status, p.body)
	}

	stale.Set("decision", "completed")
	stale.Set("o.note", "Left done.")
	p := wl.postMultipart(leftURL, stale)
	if p.status != http.StatusConflict || !p.has("The run data changed since you read it.") {
		t.Fatalf("a stale decision: %d\n%s", p.status, p.body)
	}
	fresh := hiddenFields(formByID(t, p.body, "complete"))
	if fresh.Get("snapshot") == stale.Get("snapshot") || !strings.Contains(p.body, "Left done.") || !p.has("Right done.") {
		t.Fatalf("the page shown again lacks the fresh snapshot, the typed note or the new data:\n%s", p.body)
	}
	fresh.Set("decision", "completed")
	fresh.Set("o.note", "Left done.")
	if p = wl.postMultipart(leftURL, fresh); p.status != http.StatusOK {
		t.Fatalf("left again: %d\n%s", p.status, p.body)
	}
	if after := getRun(starter, v.Run.ID); after.Run.State != "ended" || *after.Run.Outcome != "paired" {
		t.Fatalf("run %+v", after.Run)
	}
}

// Every form needs the session's CSRF token: none, a wrong one or another
// session's is refused and sends nothing.
func TestInboxCSRF(t *testing.T) {
	b := startInbox(t, options{})
	b.publish(fieldsSrc)
	starter := b.connect(stan)
	v := completeFill(t, b.connect(rita), startFields(t, b, starter, "one"))
	sign := itemFor(v, "sign")
	itemURL := "/inbox/runs/" + v.Run.ID + "/items/" + sign.ID
	other := b.browser(t)
	otherToken := hiddenFields(other.signIn(alma).body).Get("csrf")
	wa := b.browser(t)
	wa.signIn(alma)
	f := hiddenFields(formByID(t, wa.get(itemURL).body, "decide"))
	if f.Get("csrf") == "" || f.Get("csrf") == otherToken {
		t.Fatalf("csrf tokens %q and %q", f.Get("csrf"), otherToken)
	}
	f.Set("decision", "approved")
	for name, token := range map[string]string{"none": "", "wrong": "AAAA", "another session's": otherToken} {
		g := url.Values{}
		for k, vs := range f {
			g[k] = vs
		}
		g.Set("csrf", token)
		if token == "" {
			g.Del("csrf")
		}
		p := wa.postMultipart(itemURL, g)
		if p.status != http.StatusForbidden || !p.has("did not come from your inbox session") {
			t.Fatalf("%s token: %d\n%s", name, p.status, p.body)
		}
	}
	ops := b.browser(t)
	ops.signIn(opsID)
	if p := ops.post("/inbox/runs/"+v.Run.ID+"/cancel", url.Values{"reason": {"no"}, "requestId": {rid()}}); p.status != http.StatusForbidden {
		t.Fatalf("cancel without a token: %d", p.status)
	}
	if after := getRun(starter, v.Run.ID); after.Run.UpdatedAt != v.Run.UpdatedAt || itemFor(after, "sign") == nil {
		t.Fatal("a refused form changed the run")
	}
	if p := wa.postMultipart(itemURL, f); p.status != http.StatusOK {
		t.Fatalf("with its token the form works: %d\n%s", p.status, p.body)
	}
}

// Operators: the escalation queue, returning an escalated step with a note,
// and cancelling a run with a reason, which people cannot.
func TestInboxOperators(t *testing.T) {
	b := startInbox(t, options{})
	b.publish(supplierSrc)
	agent := b.connect(agentID)
	mira := b.connect(personID("mira@example.com", "finance-approver"))
	v := startSupplier(t, b, mira)
	c := claimStep(agent, v.Run.ID, "check_vendor")
	agent.ok("escalate", map[string]any{"token": c.Token, "note": "The registry is down.", "requestId": rid()}, &v)
	esc := itemFor(v, "check_vendor")

	wo := b.browser(t)
	p := wo.signIn(opsID)
	if !p.has("Escalations") {
		t.Fatalf("an operator's menu lacks the escalations:\n%s", p.body)
	}
	p = wo.get("/inbox/escalations")
	if !p.has("Escalation: check_vendor") || !p.has("The registry is down.") {
		t.Fatalf("the escalation queue:\n%s", p.body)
	}
	itemURL := "/inbox/runs/" + v.Run.ID + "/items/" + esc.ID
	p = wo.get(itemURL)
	for _, s := range []string{`id="complete"`, `value="returned"`, `value="failed"`, "in the agent's place", "Escalated"} {
		if !strings.Contains(p.body, s) {
			t.Fatalf("the escalation page lacks %q:\n%s", s, p.body)
		}
	}
	f := hiddenFields(formByID(t, p.body, "decide"))
	f.Set("decision", "returned")
	if p = wo.postMultipart(itemURL, f); p.status != http.StatusUnprocessableEntity || !strings.Contains(formByID(t, p.body, "decide"), "note: required") {
		t.Fatalf("return without a note: %d\n%s", p.status, p.body)
	}
	f = hiddenFields(formByID(t, p.body, "decide"))
	f.Set("decision", "returned")
	f.Set("note", "Use the mirror.")
	if p = wo.postMultipart(itemURL, f); p.status != http.StatusOK {
		t.Fatalf("return: %d\n%s", p.status, p.body)
	}
	c = claimStep(agent, v.Run.ID, "check_vendor")
	if c.Handoff == nil || c.Handoff.Returned == nil || c.Handoff.Returned.Note != "Use the mirror." || c.Handoff.Returned.By != "u_ops" {
		t.Fatalf("handoff %+v", c.Handoff)
	}

	// People see runs but cannot cancel them.
	wm := b.browser(t)
	wm.signIn(personID("mira@example.com", "finance-approver"))
	runURL := "/inbox/runs/" + v.Run.ID
	pm := wm.get(runURL)
	if pm.status != http.StatusOK || strings.Contains(pm.body, "Cancel the run") || strings.Contains(pm.body, "escalations") {
		t.Fatalf("a person's run page offers cancelling or escalations:\n%s", pm.body)
	}
	if p := wm.post(runURL+"/cancel", url.Values{"csrf": {hiddenFields(pm.body).Get("csrf")}, "reason": {"mine"}, "requestId": {rid()}}); p.status != http.StatusForbidden || !p.has("Only an operator can cancel a run.") {
		t.Fatalf("a person cancelling: %d\n%s", p.status, p.body)
	}
	p = wo.get(runURL)
	f = hiddenFields(p.body[strings.Index(p.body, `action="`+runURL+`/cancel"`):])
	f.Set("reason", " ")
	p = wo.post(runURL+"/cancel", f)
	if p.status != http.StatusUnprocessableEntity || !p.has("reason: required") {
		t.Fatalf("cancel without a reason: %d\n%s", p.status, p.body)
	}
	f = hiddenFields(p.body[strings.Index(p.body, `action="`+runURL+`/cancel"`):])
	f.Set("reason", "Vendor withdrew.")
	p = wo.post(runURL+"/cancel", f)
	if p.status != http.StatusOK || !p.has("The run is cancelled.") || !p.has("Vendor withdrew.") || strings.Contains(p.body, "Cancel the run") {
		t.Fatalf("cancel: %d\n%s", p.status, p.body)
	}
	if after := getRun(mira, v.Run.ID); after.Run.State != "cancelled" || after.Run.Ended.By != "u_ops" {
		t.Fatalf("run %+v", after.Run)
	}
	if p := wo.get("/inbox/runs?state=cancelled"); !p.has(v.Run.ID) {
		t.Fatalf("the runs list lacks the cancelled run:\n%s", p.body)
	}
}

// An overdue notification links to the item's page.
func TestInboxOverdueLink(t *testing.T) {
	b := startInbox(t, options{})
	b.publish(fieldsSrc)
	v := startFields(t, b, b.connect(stan), "one")
	got := make(chan map[string]any, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &m)
		got <- m
	}))
	defer hook.Close()
	acts, err := activities.New(b.store, b.temporal, &activities.Options{WebhookURL: hook.URL, InboxURL: b.url + "/inbox/"})
	if err != nil {
		t.Fatal(err)
	}
	w := v.WorkItems[0]
	err = acts.NotifyOverdue(context.Background(), interpreter.Effect{
		Kind: interpreter.EffectOverdue, RunID: v.Run.ID, StepID: w.StepID, WorkItemID: w.ID,
		AssignedTo: &w.AssignedTo, Operators: "operators", Due: time.Now(), Org: "o_test",
	})
	if err != nil {
		t.Fatal(err)
	}
	m := <-got
	if m["org"] != "o_test" {
		t.Fatalf("notification %v does not name the organization", m)
	}
	link, _ := m["url"].(string)
	if link != b.url+"/inbox/runs/"+v.Run.ID+"/items/"+w.ID {
		t.Fatalf("notification url %q", link)
	}
	br := b.browser(t)
	br.signIn(rita)
	if p := br.get(strings.TrimPrefix(link, b.url)); p.status != http.StatusOK || !p.has("Task: fill") || !strings.Contains(p.body, `id="complete"`) {
		t.Fatalf("the link leads to %d\n%s", p.status, p.body)
	}
}
