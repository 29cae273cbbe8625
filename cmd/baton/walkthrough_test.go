package main

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The README's walkthrough works on a fresh clone exactly as written. The
// test reads README.md, starts `baton dev` with the README's first command
// in a folder laid out as a clone beside the shared folder, gives the
// walkthrough's shell blocks the URL and token baton dev printed, and runs
// them in one bash session (with curl and jq, as a reader does), checking
// each block's answer. It decides in the inbox with the HTTP requests the
// inbox's own pages make, and opens the run's page in the Temporal UI at
// the address the README gives. A change to the README that breaks the
// walkthrough breaks this test.
func TestReadmeWalkthrough(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the walkthrough uses %s, which is not installed: %v", tool, err)
		}
	}
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	w := parseWalkthrough(t, text)

	// A clone beside the shared folder, as the README's commands expect.
	top := openDir(t)
	clone := filepath.Join(top, "baton")
	if err := os.Mkdir(clone, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "..", "shared"), filepath.Join(top, "shared")); err != nil {
		t.Fatal(err)
	}
	d := startBinaryDev(t, batonBinary(t), clone, w.devArgs...)
	for _, line := range w.printed {
		if !strings.Contains(d.printed, line) {
			t.Errorf("the README shows baton dev printing %q; it printed:\n%s", line, d.printed)
		}
	}

	sh := newShell(t, clone)
	setup := w.blocks[0]
	for name, value := range map[string]string{"MCP": d.mcpURL, "AGENT": d.agentToken} {
		re := regexp.MustCompile(`(?m)^` + name + `=\S+`)
		if len(re.FindAllString(setup, -1)) != 1 {
			t.Fatalf("the walkthrough's first block sets %s once from what baton dev prints; it reads:\n%s", name, setup)
		}
		setup = re.ReplaceAllLiteralString(setup, name+"="+value)
	}
	if out := sh.run(t, setup); strings.TrimSpace(out) != "" {
		t.Errorf("the setup printed %q", out)
	}

	// Start a run: its id is printed.
	out := sh.run(t, w.blocks[1])
	run := strings.TrimSpace(out)
	if !regexp.MustCompile(`^r_\S+$`).MatchString(run) {
		t.Fatalf("starting the run printed %q, not a run id", out)
	}

	// Claim and submit: accepted, and the manager's approval is open.
	out = sh.run(t, w.blocks[2])
	if !strings.HasPrefix(strings.TrimSpace(out), "true") || !strings.Contains(out, "Approve the matched invoice") {
		t.Fatalf("claiming and submitting printed:\n%s", out)
	}

	// The inbox, as the README says: sign in, open the item, Approve.
	inboxDecide(t, d.inboxURL, w.person, run, w.itemStep, w.button)

	// The last step: the run ends approved.
	out = sh.run(t, w.blocks[3])
	if !strings.Contains(out, `"outcome": "approved"`) {
		t.Fatalf("the last step printed:\n%s", out)
	}
	view := callTool(t, d.mcpURL, d.agentToken, "get_run", map[string]any{"runId": run})
	if r, _ := view["data"].(map[string]any)["run"].(map[string]any); r["outcome"] != "approved" {
		t.Fatalf("get_run after the walkthrough: %v", view)
	}

	// The Temporal UI: the README's address, on the port baton dev printed.
	page := strings.TrimSuffix(d.uiURL, "/") + "/" + strings.ReplaceAll(w.uiPath, "$RUN", run)
	if body := httpGet(t, page); !strings.Contains(strings.ToLower(body), "<html") {
		t.Errorf("GET %s: not a page: %.200q", page, body)
	}
	api := strings.TrimSuffix(d.uiURL, "/") + "/api/v1/" + strings.ReplaceAll(w.uiPath, "$RUN", run)
	if body := httpGet(t, api); !strings.Contains(body, run) || !strings.Contains(body, "WORKFLOW_EXECUTION_STATUS_COMPLETED") {
		t.Errorf("the Temporal UI's view of %s (%s) lacks the run or its completion: %.500q", run, api, body)
	}
}

// walkthrough is what the test takes from the README.
type walkthrough struct {
	devArgs  []string // the first command's arguments after `go run ./cmd/baton`
	printed  []string // the lines of baton dev's output the README shows, up to their values
	blocks   []string // the shell blocks of "A first run"
	person   string   // who signs in to the inbox
	itemStep string   // the item opened there
	button   string   // the button pressed
	uiPath   string   // the run's page in the Temporal UI, with $RUN
}

func parseWalkthrough(t *testing.T, readme string) walkthrough {
	t.Helper()
	var w walkthrough
	first := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(readme)
	if first == nil {
		t.Fatal("README.md has no sh block")
	}
	cmd, ok := strings.CutPrefix(strings.SplitN(first[1], "\n", 2)[0], "go run ./cmd/baton ")
	if !ok {
		t.Fatalf("README.md's first command is not `go run ./cmd/baton dev …`: %q", first[1])
	}
	w.devArgs = strings.Fields(cmd)

	start := strings.Index(readme, "\n## A first run\n")
	if start < 0 {
		t.Fatal("README.md has no section \"A first run\"")
	}
	section := readme[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	out := regexp.MustCompile("(?s)```\n(.*?)```").FindStringSubmatch(section)
	if out == nil {
		t.Fatal("the walkthrough shows no output of baton dev")
	}
	for _, line := range strings.Split(strings.TrimSpace(out[1]), "\n") {
		// Up to the value: "MCP: http://…" → "MCP: ", "  agent a_dev:  eyJ…" → "  agent a_dev:".
		if i := strings.LastIndex(line, ": "); i >= 0 {
			w.printed = append(w.printed, strings.TrimRight(line[:i+1], " "))
		}
	}
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		w.blocks = append(w.blocks, m[1])
	}
	if len(w.blocks) != 4 {
		t.Fatalf("the walkthrough has %d shell blocks; this test runs 4: setup, start, claim and submit, then after the inbox the last step", len(w.blocks))
	}
	inbox := section[strings.Index(section, w.blocks[2]):strings.Index(section, w.blocks[3])]
	inboxStep := strings.ReplaceAll("Open the `Inbox:` URL, sign in as a person with the email `([^`]+)`, open the `([^`]+)` item and press (\\w+)", " ", `\s+`)
	m := regexp.MustCompile(inboxStep).FindStringSubmatch(inbox)
	if m == nil {
		t.Fatalf("the walkthrough's inbox step between the third and fourth blocks reads:\n%s", inbox)
	}
	w.person, w.itemStep, w.button = m[1], m[2], m[3]
	ui := regexp.MustCompile("`http://127\\.0\\.0\\.1:8233/([^`]*\\$RUN)`").FindStringSubmatch(section)
	if ui == nil {
		t.Fatal("the walkthrough gives no Temporal UI address of the run")
	}
	w.uiPath = ui[1]
	return w
}

// inboxDecide signs in to the inbox as a person with the dev sign-in, opens
// the run's open item of step, and presses the button labelled button,
// posting what the page's form posts.
func inboxDecide(t *testing.T, inboxURL, person, run, step, button string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: time.Minute}
	base, err := url.Parse(inboxURL)
	if err != nil {
		t.Fatal(err)
	}
	page := func(resp *http.Response, err error) (string, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s\n%s", resp.Request.URL, resp.Status, b)
		}
		return resp.Request.URL.String(), string(b)
	}
	_, signin := page(hc.Get(inboxURL))
	// The sign-in page has a form per kind of identity: the person's.
	var form htmlForm
	for _, f := range forms(signin) {
		if strings.HasPrefix(f.action, "/inbox/signin") && f.fields.Get("kind") == "person" {
			form = f
		}
	}
	if form.action == "" {
		t.Fatalf("the inbox's sign-in page has no form for a person:\n%s", signin)
	}
	form.fields.Del("\x00id")
	form.fields.Set("id", person)
	_, work := page(hc.PostForm(base.ResolveReference(&url.URL{Path: form.action}).String(), form.fields))
	item := regexp.MustCompile(`href="(/inbox/runs/` + regexp.QuoteMeta(run) + `/items/[^"]+)"`).FindStringSubmatch(work)
	if item == nil {
		t.Fatalf("%s's work lists no item of run %s:\n%s", person, run, work)
	}
	_, itemPage := page(hc.Get(base.ResolveReference(&url.URL{Path: item[1]}).String()))
	if !strings.Contains(itemPage, step) {
		t.Fatalf("the item %s is not of step %s:\n%s", item[1], step, itemPage)
	}
	decide := formByID(t, itemPage, "decide")
	btn := regexp.MustCompile(`<button type="submit" name="decision" value="([a-z]+)"[^>]*>` + regexp.QuoteMeta(button) + `</button>`).FindStringSubmatch(decide.html)
	if btn == nil {
		t.Fatalf("the item's form has no %s button:\n%s", button, decide.html)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, vs := range decide.fields {
		for _, v := range vs {
			_ = mw.WriteField(k, v)
		}
	}
	_ = mw.WriteField("decision", btn[1])
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, base.ResolveReference(&url.URL{Path: decide.action}).String(), &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	after, done := page(hc.Do(req))
	if !strings.Contains(after, "decided=") {
		t.Fatalf("pressing %s answered %s:\n%s", button, after, done)
	}
}

// htmlForm is a form of a page: its action, hidden fields and markup.
type htmlForm struct {
	action string
	fields url.Values
	html   string
}

var (
	formRe   = regexp.MustCompile(`(?s)<form ([^>]*)>(.*?)</form>`)
	attrRe   = regexp.MustCompile(`([a-z]+)="([^"]*)"`)
	hiddenRe = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

func forms(page string) []htmlForm {
	var out []htmlForm
	for _, m := range formRe.FindAllStringSubmatch(page, -1) {
		f := htmlForm{fields: url.Values{}, html: m[2]}
		attrs := map[string]string{}
		for _, a := range attrRe.FindAllStringSubmatch(m[1], -1) {
			attrs[a[1]] = a[2]
		}
		f.action = htmlUnescape(attrs["action"])
		if id := attrs["id"]; id != "" {
			f.fields.Set("\x00id", id)
		}
		for _, h := range hiddenRe.FindAllStringSubmatch(m[2], -1) {
			f.fields.Add(h[1], htmlUnescape(h[2]))
		}
		out = append(out, f)
	}
	return out
}

func formByID(t *testing.T, page, id string) htmlForm {
	t.Helper()
	for _, f := range forms(page) {
		if f.fields.Get("\x00id") == id {
			f.fields.Del("\x00id")
			return f
		}
	}
	t.Fatalf("no form %q on:\n%s", id, page)
	return htmlForm{}
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&#43;", "+", "&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">").Replace(s)
}

// httpGet returns the body of a 200 answer to GET url.
func httpGet(t *testing.T, u string) string {
	t.Helper()
	resp, err := (&http.Client{Timeout: time.Minute}).Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %.300q", u, resp.Status, b)
	}
	return string(b)
}

// shell is one bash session, as a reader's terminal: variables and
// functions of one block stay for the next.
type shell struct {
	in   io.WriteCloser
	out  *syncBuffer
	done chan error
	n    int
}

func newShell(t *testing.T, dir string) *shell {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir, cmd.Env = dir, cleanEnv()
	s := &shell{out: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = s.out, s.out
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.in = in
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		in.Close()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	return s
}

// run runs a block and returns what it printed.
func (s *shell) run(t *testing.T, block string) string {
	t.Helper()
	s.n++
	mark := fmt.Sprintf("@@block %d done", s.n)
	from := len(s.out.String())
	if _, err := io.WriteString(s.in, block+"\nprintf '\\n%s\\n' '"+mark+"'\n"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		all := s.out.String()
		if i := strings.Index(all[from:], "\n"+mark+"\n"); i >= 0 {
			return all[from : from+i]
		}
		select {
		case err := <-s.done:
			t.Fatalf("the shell ended (%v) running:\n%s\nit printed:\n%s", err, block, all[from:])
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the block did not finish in 3 minutes:\n%s\nit printed:\n%s", block, all[from:])
		}
	}
}
