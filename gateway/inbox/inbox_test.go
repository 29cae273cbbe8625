package inbox

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// canned answers tools with fixed results: for pages that show what a
// profile adds to the tools' results before this server produces it. The
// end-to-end tests in tests/ run the inbox against the real gateway.
type canned map[string]string

func (c canned) Call(_ context.Context, _ auth.Identity, tool string, _ json.RawMessage) (json.RawMessage, error) {
	if r, ok := c[tool]; ok {
		return json.RawMessage(r), nil
	}
	return nil, interpreter.Refuse(interpreter.CodeNotFound, "no "+tool)
}

// get serves one GET as a signed-in identity.
func get(t *testing.T, in *Inbox, id auth.Identity, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	if err := in.sign.startSession(rec, id, time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, in.opts.BaseURL+path, nil)
	for _, c := range rec.Result().Cookies() {
		req.AddCookie(c)
	}
	w := httptest.NewRecorder()
	in.Handler().ServeHTTP(w, req)
	return w
}

func cannedRun(t *testing.T, items ...map[string]any) string {
	t.Helper()
	view := map[string]any{
		"run": map[string]any{"id": "r_1", "process": "refund", "version": 3, "mode": "live", "state": "waiting", "outcome": nil,
			"ended": nil, "startedBy": "u_mira", "startedAt": "2026-10-06T09:00:00Z", "updatedAt": "2026-10-06T09:04:12Z"},
		"data": map[string]any{"inputs": map[string]any{"order": "1042"}, "steps": map[string]any{
			"review": map[string]any{"output": map[string]any{"ok": true}, "by": "a_1", "at": "2026-10-06T09:04:12Z", "history": []any{},
				"check": json.RawMessage(verdictJSON)},
		}},
		"steps":     []any{map[string]any{"id": "review", "kind": "agent", "state": "done"}, map[string]any{"id": "resolve", "kind": "agent", "state": "waiting"}},
		"workItems": items,
		"body":      "# Refunds",
	}
	b, err := json.Marshal(view)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const verdictJSON = `{"verdict": "unsure", "advisory": false, "model": "example-evaluator-1",
	"questions": [{"ask": "The cleared verdict matches the report", "kind": "yes_no", "answer": 0.62, "result": "unsure"},
	              {"ask": "What does the summary do?", "kind": "choice", "answer": "states", "confidence": 0.91, "result": "pass"}],
	"at": "2026-10-06T09:04:20Z"}`

// A tool-call approval (baton-tools-1) shows the tool, the exact arguments
// and the digest apart from its prose.
func TestItemShowsToolCall(t *testing.T) {
	args := json.RawMessage(`{"customer":"alice@example.com","amount":89.10,"currency":"EUR"}`)
	digest, err := interpreter.CallDigest("crm/refund", args)
	if err != nil {
		t.Fatal(err)
	}
	text := interpreter.ApprovalText(interpreter.CallText{Tool: "crm/refund", Arguments: args, StepID: "resolve", Process: "refund",
		Version: 3, RunID: "r_1", Agent: "a_refunds", Attempt: 1, Digest: digest})
	in, err := New(canned{"get_run": cannedRun(t, map[string]any{
		"id": "w_4", "stepId": "resolve", "kind": "approve", "text": text, "output": nil, "evidence": nil, "next": nil,
		"assignedTo": map[string]any{"group": "finance"}, "snapshot": "s1", "due": nil, "escalation": nil, "handoff": nil,
		"decide": map[string]any{"tool": "decide", "arguments": map[string]any{}, "decisions": []string{"approved", "rejected"}},
	})}, &Options{DevSignIn: true})
	if err != nil {
		t.Fatal(err)
	}
	w := get(t, in, auth.Identity{ID: "fin@example.com", Kind: auth.KindPerson, Groups: []string{"finance"}}, "/inbox/runs/r_1/items/w_4")
	body := w.Body.String()
	for _, s := range []string{
		"Tool call approval: resolve", "<code>crm/refund</code>", "&#34;amount&#34;: 89.10", "<code>" + digest + "</code>",
		"a_refunds, attempt 1", `value="approved"`, `value="rejected"`,
	} {
		if !strings.Contains(body, s) {
			t.Fatalf("the page lacks %q:\n%s", s, body)
		}
	}
	if strings.Contains(body, `value="failed"`) || strings.Contains(body, `id="complete"`) {
		t.Fatal("a tool-call approval offers what it does not accept")
	}
	// The run data's check verdict is shown too.
	if !strings.Contains(body, "The cleared verdict matches the report") || !strings.Contains(body, "yes with probability 0.62") {
		t.Fatalf("the check verdict is missing:\n%s", body)
	}

	c, ok := parseToolCall(interpreter.UnknownOutcomeText(interpreter.CallText{Tool: "crm/refund", Arguments: args, StepID: "resolve",
		Process: "refund", Version: 3, RunID: "r_1", Agent: "a_refunds", Attempt: 1, Digest: digest, SentAt: "2026-10-06T09:31:40Z", Why: "no answer"}))
	if !ok || c.Sent != "2026-10-06T09:31:40Z" || c.Digest != digest || !strings.Contains(c.Outro, "Check in the tool's own system") {
		t.Fatalf("unknown outcome call %+v", c)
	}
	if _, ok := parseToolCall("Approve the figures.\nTool: not really"); ok {
		t.Fatal("plain text read as a tool call")
	}
}

// An escalation a check was unsure of shows the verdict and holds the
// candidate in the form.
func TestItemShowsCheckEscalation(t *testing.T) {
	in, err := New(canned{"get_run": cannedRun(t, map[string]any{
		"id": "w_5", "stepId": "resolve", "kind": "agent", "text": "Resolve the ticket.",
		"output":   map[string]any{"cleared": "boolean", "tier": map[string]any{"type": "string", "one_of": []string{"gold", "silver"}}},
		"evidence": []string{"file"}, "next": nil, "assignedTo": map[string]any{"group": "operators"}, "snapshot": "s1", "due": "2020-01-01T00:00:00Z",
		"escalation": map[string]any{"note": "The check was unsure.", "by": "server", "at": "2026-10-06T09:04:20Z",
			"check": json.RawMessage(verdictJSON),
			"candidate": map[string]any{"output": map[string]any{"cleared": true, "tier": "silver"}, "summary": "Looked twice.",
				"evidence": []any{map[string]any{"kind": "file", "ref": "f_9", "sha256": "ab", "url": "https://x/files/f_9"}}}},
		"handoff": map[string]any{"issues": []string{"output.tier: missing"}},
		"decide":  map[string]any{"tool": "decide", "arguments": map[string]any{}, "decisions": []string{"returned", "completed", "failed"}},
	})}, &Options{DevSignIn: true})
	if err != nil {
		t.Fatal(err)
	}
	w := get(t, in, auth.Identity{ID: "u_ops", Kind: auth.KindOperator, Groups: []string{"operators"}}, "/inbox/runs/r_1/items/w_5")
	body := w.Body.String()
	for _, s := range []string{
		"Escalation: resolve", "The check was unsure.", "What does the summary do?", "states (confidence 0.91)",
		`<option value="true" selected>Yes</option>`, `<option value="&#34;silver&#34;" selected>silver</option>`,
		`name="evidence.keep" value="f_9" checked`, "Looked twice.", "overdue since", "output.tier: missing",
	} {
		if !strings.Contains(body, s) {
			t.Fatalf("the page lacks %q:\n%s", s, body)
		}
	}
}

// The body's Markdown loses raw HTML and script links.
func TestMarkdownIsSafe(t *testing.T) {
	got := string(markdown("# T\n\n<script>x()</script>\n\n<b onclick=\"x()\">b</b> [l](javascript:x()) ![i](data:text/html,x) [ok](https://example.com)"))
	for _, bad := range []string{"<script", "onclick", "javascript:", "data:text/html"} {
		if strings.Contains(got, bad) {
			t.Fatalf("markdown kept %q:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, `<a href="https://example.com">ok</a>`) || !strings.Contains(got, "<h1>T</h1>") {
		t.Fatalf("markdown lost the safe parts:\n%s", got)
	}
}

// Sealed cookies open only for the cookie they were sealed for, only
// unaltered, and sessions only until they expire.
func TestSessionsAndNext(t *testing.T) {
	s := newSigner([]byte("secret"), false, "http://127.0.0.1:8080", "o_default")
	v, err := s.seal(flowCookie, flow{State: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var f flow
	if s.open(flowCookie, v, &f) != nil || f.State != "x" {
		t.Fatal("a sealed value does not open")
	}
	if s.open(sessionCookie, v, &session{}) == nil || s.open(flowCookie, v+"A", &f) == nil ||
		newSigner([]byte("other"), false, "http://127.0.0.1:8080", "o_default").open(flowCookie, v, &f) == nil {
		t.Fatal("a value opened for another cookie, altered, or under another key")
	}
	rec := httptest.NewRecorder()
	now := time.Now()
	if err := s.startSession(rec, auth.Identity{ID: "mira@example.com", Kind: auth.KindPerson}, time.Hour, now); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/inbox/", nil)
	req.AddCookie(rec.Result().Cookies()[0])
	if got := s.session(req, now); got == nil || got.ID != "mira@example.com" {
		t.Fatalf("session %+v", got)
	}
	if s.session(req, now.Add(time.Hour)) != nil {
		t.Fatal("an expired session is live")
	}
	for next, want := range map[string]string{
		"/inbox/runs/r_1": "/inbox/runs/r_1", "https://evil.example/inbox/": "/inbox/", "//evil.example/inbox/": "/inbox/",
		"/inbox//evil": "/inbox/", "/files/x": "/inbox/", "/inbox/signin?next=x": "/inbox/", "": "/inbox/", `/inbox/\evil`: "/inbox/",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}

// New refuses options that would make an unsafe inbox.
func TestNewRefuses(t *testing.T) {
	tools := canned{}
	for name, o := range map[string]*Options{
		"no sign-in":               {},
		"both sign-ins":            {DevSignIn: true, OIDC: &OIDCOptions{Issuer: "https://i", ClientID: "c", ClientSecret: "s"}},
		"dev sign-in off loopback": {DevSignIn: true, BaseURL: "https://baton.example.com"},
		"plain http off loopback":  {OIDC: &OIDCOptions{Issuer: "https://i", ClientID: "c", ClientSecret: "s"}, BaseURL: "http://baton.example.com"},
		"OIDC without a secret":    {OIDC: &OIDCOptions{Issuer: "https://i", ClientID: "c"}, BaseURL: "https://baton.example.com"},
	} {
		if _, err := New(tools, o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(tools, nil); err == nil {
		t.Error("nil options accepted")
	}
	in, err := New(tools, &Options{OIDC: &OIDCOptions{Issuer: "https://i", ClientID: "c", ClientSecret: "s"}, BaseURL: "https://baton.example.com/"})
	if err != nil || !in.sign.secure || in.URL() != "https://baton.example.com/inbox/" {
		t.Fatalf("an https inbox: %v", err)
	}
}

// recorder answers every tool with an empty listing and keeps the
// identities it was called as.
type recorder struct {
	mu  sync.Mutex
	ids []auth.Identity
}

func (r *recorder) Call(_ context.Context, id auth.Identity, tool string, _ json.RawMessage) (json.RawMessage, error) {
	r.mu.Lock()
	r.ids = append(r.ids, id)
	r.mu.Unlock()
	return json.RawMessage(`{"items":[],"nextCursor":null}`), nil
}

// A session is bound to the organization signed in to and to the base URL
// of the deployment that signed it in: another deployment sharing the
// secret refuses it, a session sealed without them is none, and every call
// a session makes carries its organization.
func TestSessionBoundToOrgAndDeployment(t *testing.T) {
	secret := []byte("the same secret file")
	tools := &recorder{}
	a, err := New(tools, &Options{DevSignIn: true, BaseURL: "http://127.0.0.1:8080", Secret: secret, Org: "o_a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(tools, &Options{DevSignIn: true, BaseURL: "http://127.0.0.1:9090", Secret: secret, Org: "o_a"})
	if err != nil {
		t.Fatal(err)
	}
	serve := func(in *Inbox, c *http.Cookie) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, in.opts.BaseURL+Path, nil)
		req.AddCookie(c)
		w := httptest.NewRecorder()
		in.Handler().ServeHTTP(w, req)
		return w
	}
	cookieOf := func(in *Inbox, id auth.Identity) *http.Cookie {
		rec := httptest.NewRecorder()
		if err := in.sign.startSession(rec, id, time.Hour, time.Now()); err != nil {
			t.Fatal(err)
		}
		return rec.Result().Cookies()[0]
	}
	mira := auth.Identity{ID: "mira@example.com", Kind: auth.KindPerson}
	if w := serve(a, cookieOf(a, mira)); w.Code != http.StatusOK {
		t.Fatalf("a's own session at a: %d", w.Code)
	}
	if w := serve(b, cookieOf(a, mira)); w.Code != http.StatusSeeOther && w.Code != http.StatusFound {
		t.Fatalf("a's session at b (same secret, other base URL): %d, want a redirect to sign in", w.Code)
	}
	// A session sealed as before sessions named their organization and
	// deployment does not open.
	sealed, err := a.sign.seal(sessionCookie, map[string]any{"id": mira.ID, "kind": "person", "sid": "s1", "exp": time.Now().Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if w := serve(a, a.sign.cookie(sessionCookie, sealed, 3600)); w.Code != http.StatusSeeOther && w.Code != http.StatusFound {
		t.Fatalf("an unbound session: %d, want a redirect to sign in", w.Code)
	}
	// The organization travels with every call.
	tools.ids = nil
	serve(a, cookieOf(a, mira))
	serve(a, cookieOf(a, auth.Identity{ID: mira.ID, Kind: auth.KindPerson, Org: "o_b"}))
	var orgs []string
	for _, id := range tools.ids {
		orgs = append(orgs, id.Org)
	}
	if len(orgs) == 0 || orgs[0] != "o_a" || orgs[len(orgs)-1] != "o_b" {
		t.Fatalf("calls were made in organizations %v, want o_a (the default) then o_b", orgs)
	}
}
