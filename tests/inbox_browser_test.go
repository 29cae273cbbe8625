package tests

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// inboxShots asks the browser test for screenshots, written under a new
// temporary folder that the test names in its log; never in the
// repository.
var inboxShots = flag.Bool("inbox.screenshots", false, "write the browser test's screenshots under a temporary folder")

// chromium finds Debian's chromium, which .ci/run installs when missing.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("BATON_CHROMIUM"), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Fatal("the browser test needs Chromium: apt-get install -y chromium (as .ci/run does), or set BATON_CHROMIUM to its path")
	return ""
}

// A person signs in with a real browser, finds the approval of a run an
// agent moved forward over MCP, rejects it with a note and sees the run
// rework; then an operator completes the escalated step with a file.
func TestInboxBrowser(t *testing.T) {
	path := chromium(t)
	b := startInbox(t, options{})
	b.publish(supplierSrc)
	agent := b.connect(agentID)
	mira := b.connect(personID("mira@example.com", "finance-approver"))
	v := startSupplier(t, b, mira)
	runID := v.Run.ID
	c := claimStep(agent, runID, "check_vendor")
	agent.ok("submit", map[string]any{
		"token": c.Token, "requestId": rid(), "summary": "Screened Acme on both lists.",
		"output":   map[string]any{"cleared": true, "summary": "No matches."},
		"evidence": []any{map[string]any{"kind": "file", "ref": upload(t, agent, "screening report")}},
		"next":     "approve", "reason": "Cleared on both lists.",
	}, &v)
	approval := itemFor(v, "approve")
	if approval == nil {
		t.Fatalf("no approval after the agent's submission: %s", v.StepStates())
	}

	shots := ""
	if *inboxShots {
		dir, err := os.MkdirTemp("", "baton-inbox-shots-")
		if err != nil {
			t.Fatal(err)
		}
		shots = dir
		t.Logf("screenshots in %s", dir)
	}
	alloc, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(412, 915), // a phone
	)
	defer cancel()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()

	step := 0
	shot := func(name string) {
		if shots == "" {
			return
		}
		step++
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		file := fmt.Sprintf("%02d-%s.png", step, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(filepath.Join(shots, file), buf, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	click := func(what, sel string) {
		t.Helper()
		resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if resp.Status != http.StatusOK {
			t.Fatalf("%s: status %d", what, resp.Status)
		}
	}
	text := func() string {
		t.Helper()
		// A query can meet a document the browser is replacing; ask again.
		var err error
		for range 5 {
			var s string
			if s, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main"), chromedp.NodeVisible)); err == nil {
				return s
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("read the page: %v", err)
		return ""
	}
	location := func() string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimPrefix(s, b.url)
	}

	// The person: no session, so the inbox asks who they are.
	do("open the inbox", chromedp.Navigate(b.url+"/inbox/"))
	if !strings.HasPrefix(location(), "/inbox/signin") {
		t.Fatalf("without a session the inbox is at %s", location())
	}
	shot("sign in")
	do("fill in the person",
		chromedp.SetValue(chromedp.CSS(`form:has(input[name=kind][value=person]) input[name=id]`), "mira@example.com"),
		chromedp.SetValue(chromedp.CSS(`form:has(input[name=kind][value=person]) input[name=groups]`), "finance-approver"))
	click("sign in as mira", `form:has(input[name=kind][value=person]) button[type=submit]`)
	if location() != "/inbox/" || !strings.Contains(text(), "Approval: approve") {
		t.Fatalf("my work at %s:\n%s", location(), text())
	}
	shot("my work")
	click("open the approval", `a[href="/inbox/runs/`+runID+`/items/`+approval.ID+`"]`)
	body := text()
	for _, s := range []string{"Approve only when the vendor is cleared", "No matches.", "Cleared on both lists.", "Supplier onboarding"} {
		if !strings.Contains(body, s) {
			t.Fatalf("the approval page lacks %q:\n%s", s, body)
		}
	}
	shot("approval")
	do("write the note", chromedp.SetValue(chromedp.CSS(`textarea#note`), "Check the parent company too."))
	click("reject", `button[name=decision][value=rejected]`)
	body = text()
	if !strings.HasPrefix(location(), "/inbox/runs/"+runID+"?") || !strings.Contains(body, "Work item "+approval.ID+": reject.") ||
		!strings.Contains(body, "Check the parent company too.") || !strings.Contains(body, "History: 1 earlier completion") {
		t.Fatalf("after rejecting, at %s:\n%s", location(), body)
	}
	shot("rework")
	after := getRun(mira, runID)
	if after.StepState("check_vendor") != "ready" || after.StepState("approve") != "null" ||
		after.Data.Steps["approve"].Decision != "rejected" || after.Data.Steps["approve"].By != "mira@example.com" {
		t.Fatalf("the run did not rework: %s", after.StepStates())
	}
	click("sign out", `header form button[type=submit]`)
	if !strings.HasPrefix(location(), "/inbox/signin") {
		t.Fatalf("signed out at %s", location())
	}

	// The agent tries again and escalates.
	c = claimStep(agent, runID, "check_vendor")
	agent.ok("escalate", map[string]any{"token": c.Token, "note": "The sanctions registry is down.", "requestId": rid()}, &v)
	esc := itemFor(v, "check_vendor")

	// The operator completes the step in the agent's place, with a file.
	do("fill in the operator", chromedp.SetValue(chromedp.CSS(`form:has(input[name=kind][value=operator]) input[name=id]`), "u_ops"))
	click("sign in as u_ops", `form:has(input[name=kind][value=operator]) button[type=submit]`)
	do("open the escalations", chromedp.Navigate(b.url+"/inbox/escalations"))
	if !strings.Contains(text(), "The sanctions registry is down.") {
		t.Fatalf("the escalation queue:\n%s", text())
	}
	shot("escalations")
	click("open the escalation", `a[href="/inbox/runs/`+runID+`/items/`+esc.ID+`"]`)
	report := filepath.Join(t.TempDir(), "parent-check.txt")
	if err := os.WriteFile(report, []byte("parent company: clear"), 0o600); err != nil {
		t.Fatal(err)
	}
	do("fill in the completion",
		chromedp.SetValue(chromedp.CSS(`select[name="o.cleared"]`), "true"),
		chromedp.SetValue(chromedp.CSS(`textarea[name="o.summary"]`), "Checked by hand, parent included."),
		chromedp.SetUploadFiles(chromedp.CSS(`input[name="evidence.file"]`), []string{report}),
		chromedp.Click(chromedp.CSS(`input[name=next][value=approve]`)),
		chromedp.SetValue(chromedp.CSS(`textarea#reason`), "Clear, parent company included."))
	shot("escalation")
	click("complete", `button[name=decision][value=completed]`)
	body = text()
	if !strings.Contains(body, "Work item "+esc.ID+": complete.") || !strings.Contains(body, "Checked by hand, parent included.") {
		t.Fatalf("after completing, at %s:\n%s", location(), body)
	}
	shot("completed")
	after = getRun(mira, runID)
	rec := after.Data.Steps["check_vendor"]
	if after.StepState("check_vendor") != "done" || rec.By != "u_ops" || rec.Output["cleared"] != true ||
		len(rec.Evidence) != 1 || rec.Evidence[0].Kind != "file" || itemFor(after, "approve") == nil {
		t.Fatalf("after the operator: %s %+v", after.StepStates(), rec.Record)
	}
	// The file link on the page works.
	href, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`a[href*="/files/`+rec.Evidence[0].Ref+`"]`), "href"))
	if err != nil || !href.Exists {
		t.Fatalf("no link to the operator's file: %v", err)
	}
	resp, err := http.Get(href.Value)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len("parent company: clear")) {
		t.Fatalf("the file link gave %d (%d bytes)", resp.StatusCode, resp.ContentLength)
	}
	if len(rec.History) != 1 || rec.History[0].By != agentID.ID {
		t.Fatalf("the agent's first completion is not in history: %+v", rec.History)
	}
}
