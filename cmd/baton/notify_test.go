package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/notify"
	"github.com/baton-run/baton/internal/testing/notifytest"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/interpreter"
)

var (
	apAgent = drive.Who{ID: "a_ap", Kind: interpreter.ActorAgent}
	mira    = drive.Who{ID: "mira@acme.example", Kind: interpreter.ActorPerson}
	rita    = drive.Who{ID: "rita@acme.example", Kind: interpreter.ActorPerson}
	fiona   = drive.Who{ID: "fiona@acme.example", Kind: interpreter.ActorPerson, Groups: []string{"finance-controller"}}
)

// sharedPostgres puts a dev's databases on the tests' PostgreSQL server,
// as startDev does.
func sharedPostgres(t *testing.T, cfg devConfig) devConfig {
	t.Helper()
	cfg.databaseURL = pgtest.NewDatabase(t)
	u, err := url.Parse(cfg.databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.temporalDatabase = strings.TrimPrefix(u.Path, "/") + "_temporal"
	return cfg
}

// invoiceRun starts an invoice-approval run as mira and has the agent
// validate it with a total that routes it to tier, returning the run and
// its approval item.
func invoiceRun(t *testing.T, d *drive.MCP, invoice string, total float64, tier, mode string) (string, interpreter.WorkItem) {
	t.Helper()
	ctx := context.Background()
	v, err := d.Start(ctx, mira, "invoice-approval", map[string]any{
		"invoiceId": invoice, "invoiceDocument": "https://erp.acme.example/" + invoice + "?bank=DE89370400440532013000", "manager": rita.ID,
	}, mode)
	if err != nil {
		t.Fatal(err)
	}
	runID := v.Run.ID
	c, err := d.Claim(ctx, apAgent, runID, "validate")
	if err != nil {
		t.Fatal(err)
	}
	summary, reason := "Matched the PO and the goods receipt.", "The total fits "+tier+"."
	v, err = d.Submit(ctx, apAgent, c.Token, drive.Work{
		Output:   map[string]any{"totalUsd": total, "supplier": "Acme Tools", "matchSummary": "PO 7 and GR 9 match."},
		Evidence: []interpreter.Evidence{{Kind: "link", Ref: "https://erp.acme.example/match/" + invoice}},
		Summary:  &summary, Next: &tier, Reason: &reason,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range v.WorkItems {
		if w.StepID == tier {
			return runID, w
		}
	}
	t.Fatalf("run %s has no work item on %s: %+v", runID, tier, v.WorkItems)
	return "", interpreter.WorkItem{}
}

// approveAndRecord approves the item as who and has the agent record the
// approval, ending the run approved.
func approveAndRecord(t *testing.T, d *drive.MCP, who drive.Who, runID string, w interpreter.WorkItem) {
	t.Helper()
	ctx := context.Background()
	if _, err := d.Decide(ctx, who, runID, drive.Decision{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: interpreter.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	c, err := d.Claim(ctx, apAgent, runID, "record")
	if err != nil {
		t.Fatal(err)
	}
	summary := "Recorded."
	v, err := d.Submit(ctx, apAgent, c.Token, drive.Work{
		Output:   map[string]any{"approvalRecord": "APR-" + runID},
		Evidence: []interpreter.Evidence{{Kind: "link", Ref: "https://erp.acme.example/approvals/" + runID}},
		Summary:  &summary,
	})
	if err != nil {
		t.Fatal(err)
	}
	if v.Run.State != "ended" {
		t.Fatalf("run %s is %s after record", runID, v.Run.State)
	}
}

// inboxAs signs in to the dev inbox as who and returns what a GET of link
// leads to: the path it ends at and the page.
func inboxAs(t *testing.T, inboxURL string, who drive.Who, link string) (string, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	get := func(resp *http.Response, err error) (string, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d\n%s", resp.Request.URL, resp.StatusCode, b)
		}
		return resp.Request.URL.Path, string(b)
	}
	// The link of a mail, opened without a session, leads to the sign-in,
	// which leads back to it.
	path, page := get(hc.Get(link))
	if path != "/inbox/signin" {
		t.Fatalf("without a session %s is at %s", link, path)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	next := regexp.MustCompile(`name="next" value="([^"]+)"`).FindStringSubmatch(page)
	if csrf == nil || next == nil {
		t.Fatalf("the sign-in page has no csrf or next:\n%s", page)
	}
	base := strings.TrimSuffix(inboxURL, "/inbox/")
	return get(hc.PostForm(base+"/inbox/signin", url.Values{
		"csrf": {csrf[1]}, "next": {next[1]}, "kind": {string(who.Kind)}, "id": {who.ID}, "groups": {strings.Join(who.Groups, " ")},
	}))
}

// linkIn is the inbox link a mail's text holds.
func linkIn(t *testing.T, m notifytest.Mail) string {
	t.Helper()
	l := regexp.MustCompile(`Open it in the inbox: (\S+)`).FindStringSubmatch(m.Text)
	if l == nil {
		t.Fatalf("mail %q has no inbox link:\n%s", m.Subject, m.Text)
	}
	if !strings.Contains(m.HTML, `href="`+l[1]+`"`) {
		t.Fatalf("the HTML of %q does not link to %s:\n%s", m.Subject, l[1], m.HTML)
	}
	return l[1]
}

// An invoice approval through baton dev mails each person their work
// over STARTTLS: the manager their approval, the finance group's address
// its approval, the person who started a run its end; each mail's link
// opens the item in the inbox; a test-mode run mails nobody.
func TestEmailEndToEnd(t *testing.T) {
	dir := t.TempDir()
	smtpd, err := notifytest.StartSMTP(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer smtpd.Close()
	if err := os.WriteFile(filepath.Join(dir, "smtp.pw"), []byte(smtpd.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	channels := filepath.Join(dir, "notify.yaml")
	if err := os.WriteFile(channels, fmt.Appendf(nil, `channels:
  - kind: email
    smtp: { host: 127.0.0.1, port: %d, username: %s, password: { file: smtp.pw }, ca: smtp-ca.pem }
    from: baton@acme.example
    groups: { finance-controller: finance-approvals@acme.example }
    include_inputs: [invoiceId]
`, smtpd.Port, smtpd.User), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	cfg := sharedPostgres(t, devConfigFor(data, "--processes", filepath.Join(fixturesDir(t), "invoice-approval"), "--notify", channels))
	dev := launchDev(t, cfg)
	if !strings.Contains(dev.printed, "Notification channels of o_default from "+channels+": email-1") {
		t.Fatalf("baton dev did not load the channels:\n%s", dev.printed)
	}
	d := devDriver(t, data, dev.mcpURL)

	// A test-mode run first: it mails nobody, whatever happens in it.
	testRun, testItem := invoiceRun(t, d, "INV-T", 900, "manager_review", interpreter.ModeTest)
	approveAndRecord(t, d, rita, testRun, testItem)

	managerRun, managerItem := invoiceRun(t, d, "INV-1", 900, "manager_review", interpreter.ModeLive)
	financeRun, _ := invoiceRun(t, d, "INV-2", 48000, "finance_review", interpreter.ModeLive)
	// Each approval's link opens it while it is open.
	opened, ok := smtpd.Await(2*time.Minute, func(ms []notifytest.Mail) bool { return len(ms) >= 2 })
	if !ok {
		t.Fatalf("%d mails arrived, want 2: %+v", len(opened), opened)
	}
	for _, m := range opened {
		if slices.Equal(m.To, []string{rita.ID}) {
			want := "/inbox/runs/" + managerRun + "/items/" + managerItem.ID
			if path, page := inboxAs(t, dev.inboxURL, rita, linkIn(t, m)); path != want || !strings.Contains(page, "Approval: manager_review") {
				t.Errorf("the link of rita's mail opens %s:\n%.600s", path, page)
			}
		}
	}
	approveAndRecord(t, d, rita, managerRun, managerItem)
	mails, ok := smtpd.Await(2*time.Minute, func(ms []notifytest.Mail) bool { return len(ms) >= 3 })
	if !ok {
		t.Fatalf("%d mails arrived, want 3: %+v", len(mails), mails)
	}
	// Late mails (a test run's, a second of one event) would show now.
	time.Sleep(2 * time.Second)
	mails = smtpd.Mails()
	type want struct {
		to, subject, path, page string
		who                     drive.Who
	}
	wants := []want{
		{rita.ID, "Approval for rita@acme.example: Approve the matched invoice only if totalUsd is at most 10000 and the purchase is justified. (invoice-approval)",
			"/inbox/runs/" + managerRun + "/items/w_1", "Approval: manager_review", rita},
		{"finance-approvals@acme.example", "Approval for group finance-controller: Approve only if totalUsd is above 10000 and at most 100000, the match is valid and funds are available. (invoice-approval)",
			"/inbox/runs/" + financeRun + "/items/w_1", "Approval: finance_review", fiona},
		{mira.ID, "Run of invoice-approval ended: approved (invoice-approval)", "/inbox/runs/" + managerRun, managerRun, mira},
	}
	if len(mails) != len(wants) {
		var got []string
		for _, m := range mails {
			got = append(got, strings.Join(m.To, ",")+": "+m.Subject)
		}
		t.Fatalf("%d mails, want %d:\n%s", len(mails), len(wants), strings.Join(got, "\n"))
	}
	for _, w := range wants {
		i := slices.IndexFunc(mails, func(m notifytest.Mail) bool { return slices.Equal(m.To, []string{w.to}) })
		if i < 0 {
			t.Fatalf("no mail to %s", w.to)
		}
		m := mails[i]
		if !m.TLS || m.User != smtpd.User || m.From != "baton@acme.example" || m.Header.Get("To") != w.to {
			t.Errorf("mail to %s: tls %v, user %q, from %q, To %q", w.to, m.TLS, m.User, m.From, m.Header.Get("To"))
		}
		if m.Subject != w.subject {
			t.Errorf("mail to %s: subject %q, want %q", w.to, m.Subject, w.subject)
		}
		if strings.Contains(m.Text+m.HTML, testRun) {
			t.Errorf("mail to %s tells of the test run %s", w.to, testRun)
		}
		// Only the inputs the channel names: the invoice id, not the
		// document's URL.
		if strings.Contains(m.Text+m.HTML, "DE89") || strings.Contains(m.Text+m.HTML, "erp.acme.example") {
			t.Errorf("mail to %s holds run data the channel does not name:\n%s", w.to, m.Text)
		}
		link := linkIn(t, m)
		if link != dev.inboxURL+strings.TrimPrefix(w.path, "/inbox/") {
			t.Errorf("mail to %s links to %s, want %s", w.to, link, w.path)
		}
		if w.to == rita.ID {
			// Rita decided her approval since; the link shows the run
			// now, and opened the item before (above).
			continue
		}
		path, page := inboxAs(t, dev.inboxURL, w.who, link)
		if path != w.path || !strings.Contains(page, w.page) {
			t.Errorf("the link of the mail to %s opens %s:\n%.600s", w.to, path, page)
		}
	}
	if i := slices.IndexFunc(mails, func(m notifytest.Mail) bool { return strings.Contains(m.Text, "INV-1") }); i < 0 {
		t.Error("no mail shows the input the channel names (invoiceId)")
	}

	// The deliveries log shows them, for the operators.
	out := batonOK(t, "notify", "log", "--database-url", cfg.databaseURL)
	for _, want := range []string{"delivered", "email-1", "work.opened", "run.ended", managerRun, financeRun} {
		if !strings.Contains(out, want) {
			t.Errorf("notify log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, testRun) || strings.Contains(out, smtpd.Password) {
		t.Errorf("notify log shows the test run or the password:\n%s", out)
	}
	// So does the inbox, to operators.
	ops := drive.Who{ID: "u_ops", Kind: interpreter.ActorOperator, Groups: []string{interpreter.DefaultOperators}}
	path, page := inboxAs(t, dev.inboxURL, ops, dev.inboxURL+"notifications")
	if path != "/inbox/notifications" || !strings.Contains(page, "email-1") || !strings.Contains(page, managerRun) || !strings.Contains(page, "run.ended") {
		t.Errorf("the operators' notifications page at %s:\n%.2000s", path, page)
	}
}

// A second organization's channels never receive the first's events:
// each organization's webhook gets its own runs' events, signed with its
// own secret.
func TestNotifyOrganizationsApart(t *testing.T) {
	dir := t.TempDir()
	hookA := notifytest.StartReceiver([]byte("secret-of-a"))
	defer hookA.Close()
	hookB := notifytest.StartReceiver([]byte("secret-of-b"))
	defer hookB.Close()
	t.Setenv("NOTIFY_TEST_SECRET_A", "secret-of-a")
	t.Setenv("NOTIFY_TEST_SECRET_B", "secret-of-b")
	files := map[string]string{}
	for org, hook := range map[string]*notifytest.Receiver{"o_a": hookA, "o_b": hookB} {
		f := filepath.Join(dir, org+".yaml")
		src := fmt.Sprintf("channels:\n  - kind: webhook\n    url: %s\n    secret: { env: NOTIFY_TEST_SECRET_%s }\n", hook.URL, strings.ToUpper(org[2:]))
		if err := os.WriteFile(f, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		files[org] = f
	}
	fixture := filepath.Join(fixturesDir(t), "invoice-approval")
	data := t.TempDir()
	dev := launchDev(t, sharedPostgres(t, devConfigFor(data, "--org", "o_a", "--processes", "o_a="+fixture, "--processes", "o_b="+fixture,
		"--notify", "o_a="+files["o_a"], "--notify", "o_b="+files["o_b"])))
	issuer, err := auth.LoadOrCreateDevKey(data)
	if err != nil {
		t.Fatal(err)
	}
	driverOf := func(org string) *drive.MCP {
		d := drive.NewMCP(dev.mcpURL, func(w drive.Who) (string, error) {
			return issuer.Issue(auth.Identity{ID: w.ID, Kind: auth.Kind(w.Kind), Groups: w.Groups, Org: org}, time.Hour)
		}, nil)
		t.Cleanup(func() { d.Close() })
		return d
	}
	runA, itemA := invoiceRun(t, driverOf("o_a"), "INV-A", 900, "manager_review", interpreter.ModeLive)
	runB, _ := invoiceRun(t, driverOf("o_b"), "INV-B", 48000, "finance_review", interpreter.ModeLive)
	approveAndRecord(t, driverOf("o_a"), rita, runA, itemA)

	evA, ok := hookA.Await(time.Minute, func(evs []notify.Event) bool { return len(evs) >= 3 })
	if !ok {
		t.Fatalf("organization a's webhook got %+v", evA)
	}
	evB, ok := hookB.Await(time.Minute, func(evs []notify.Event) bool { return len(evs) >= 1 })
	if !ok {
		t.Fatalf("organization b's webhook got %+v", evB)
	}
	time.Sleep(2 * time.Second)
	for org, hook := range map[string]*notifytest.Receiver{"o_a": hookA, "o_b": hookB} {
		for _, ev := range hook.Events() {
			if ev.Org != org || (org == "o_a" && ev.Run.ID != runA) || (org == "o_b" && ev.Run.ID != runB) {
				t.Errorf("%s's webhook got an event of %s, run %s: %+v", org, ev.Org, ev.Run.ID, ev)
			}
		}
		if hook.Refused() != 0 {
			t.Errorf("%s's webhook refused %d posts", org, hook.Refused())
		}
	}
	// Each event is delivered on its own: the decision and the run's end,
	// made by one write, may come in either order.
	var types []string
	for _, ev := range hookA.Events() {
		types = append(types, ev.Type)
	}
	slices.Sort(types)
	if got := strings.Join(types, " "); got != "run.ended work.decided work.opened" {
		t.Errorf("organization a's events: %s", got)
	}
	if got := hookB.Events(); len(got) != 1 || got[0].Type != "work.opened" || got[0].WorkItem.AssignedTo.Group != "finance-controller" {
		t.Errorf("organization b's events: %+v", got)
	}
}

// baton notify check lists a good file's channels with the events each
// takes, refuses a bad one with every issue at its line and column, and
// --notify refuses the same file, and an organization given twice,
// before anything starts.
func TestNotifyCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", `channels:
  - kind: webhook
    url: https://hooks.acme.example/baton
    secret: { env: BATON_HOOK_SECRET }
    events: [work.opened, work.overdue]
  - kind: webhook
    format: slack
    url: { env: SLACK_WEBHOOK_URL }
  - kind: email
    smtp: { host: smtp.acme.example, port: 587, username: baton, password: { file: /etc/baton/smtp.pw } }
    from: baton@acme.example
    groups: { finance-approver: finance-approvals@acme.example }
`)
	bad := write("bad.yaml", `channels:
  - kind: webhook
    url: http://hooks.acme.example/baton
    secret: { env: BATON_HOOK_SECRET }
    colour: red
`)
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		out     string
		errWant []string
	}{
		{"good", []string{good}, 0, "webhook-1\twebhook\twork.opened,work.overdue\n" +
			"webhook-2\twebhook (slack)\twork.opened,work.overdue,work.decided,run.ended,call.awaiting_approval,call.decided\n" +
			"email-3\temail\twork.opened,work.overdue,work.decided,run.ended\n", nil},
		{"bad", []string{bad}, 1, "", []string{
			"2 issues", bad + ":3:10: channels[0].url: plain http only to a loopback host", bad + ":5:5: channels[0].colour: unknown field"}},
		{"missing", []string{filepath.Join(dir, "none.yaml")}, 1, "", []string{"none.yaml"}},
		{"no file", nil, 2, "", []string{"give one channels file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := baton(append([]string{"notify", "check"}, tc.args...)...)
			if code != tc.code || out != tc.out {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, want := range tc.errWant {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
		})
	}

	var printed strings.Builder
	files, err := loadChannels("o_a", []string{good, "o_b=" + good}, &printed)
	if err != nil || len(files) != 2 || len(files["o_a"].Channels) != 3 || len(files["o_b"].Channels) != 3 {
		t.Fatalf("loadChannels: %v, %v", files, err)
	}
	if want := "Notification channels of o_b from " + good + ": webhook-1, webhook-2, email-3"; !strings.Contains(printed.String(), want) {
		t.Errorf("printed %q, want %q", printed.String(), want)
	}
	for _, tc := range []struct {
		values []string
		want   string
	}{
		{[]string{good, "o_a=" + bad}, "names organization o_a twice"},
		{[]string{"o_b=" + bad}, "--notify o_b=" + bad + ": notification channels refused"},
	} {
		if _, err := loadChannels("o_a", tc.values, io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("loadChannels(%q): %v, want %q", tc.values, err, tc.want)
		}
	}
}
