package tests

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/activities/downstream"
	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/gateway/inbox"
	"github.com/baton-run/baton/internal/testing/crmtest"
	"github.com/baton-run/baton/interpreter"
)

// Organizations side by side in one deployment: organization A is the
// default one (tokens naming none), B is "o_b". Both publish a process of
// the same name with other contents, register a crm of the same name at
// other servers with other credentials, and work runs. Every id of A that
// B can name answers not_found (a claim token invalid), in every tool and
// every inbox page; no listing of B names anything of A; A's runs read the
// same bytes before and after.

const orgB = "o_b"

const orgsProcess = `---
name: iso
description: %s
steps:
  - id: work
    agent: Look the customer up with crm/get_customer and say it is done.
    tools: [crm/get_customer]
    output: { done: boolean }
    evidence: [file]
  - id: check
    person: reviewers
    approve: Check the work.
    next: done
  - id: done
    finish: ok
---

# %[1]s
`

const orgsRegistration = `servers:
  - name: crm
    url: %s
    timeout: 2s
    credentials: { file: %s }
    tools:
      get_customer: read
`

// orgsBench is one Baton with two organizations.
type orgsBench struct {
	b          *baton
	crmA, crmB *crmtest.Server
	// A's users name no organization; B's name orgB.
	agentA, reviewerA, opsA *user
	agentB, reviewerB, opsB *user
}

func startOrgs(t *testing.T) *orgsBench {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	crm := func(name, secret string) (*crmtest.Server, string) {
		s, err := crmtest.Start(&crmtest.Options{Token: secret})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		file := filepath.Join(dir, name+".token")
		if err := os.WriteFile(file, []byte(secret), 0o600); err != nil {
			t.Fatal(err)
		}
		return s, fmt.Sprintf(orgsRegistration, s.URL(), file)
	}
	crmA, regA := crm("a", "secret-of-a")
	crmB, regB := crm("b", "secret-of-b")
	b := start(t, options{tools: regA})
	fileB := filepath.Join(dir, "tools-b.yaml")
	if err := os.WriteFile(fileB, []byte(regB), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := downstream.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.store.RegisterTools(ctx, orgB, fileB, d.Lister()); err != nil {
		t.Fatal(err)
	}
	in, err := inbox.New(b.gateway, &inbox.Options{BaseURL: b.url, Secret: b.opts.Secret, DevSignIn: true, Org: b.opts.Org})
	if err != nil {
		t.Fatal(err)
	}
	b.gateway.Mount(inbox.Path, in.Handler())
	b.srv.Config.Handler = b.gateway.Handler()

	// The same name in both, other contents and versions: A publishes
	// twice, B once.
	b.publish(fmt.Sprintf(orgsProcess, "Organization A's first."))
	b.publish(fmt.Sprintf(orgsProcess, "Organization A's process."))
	regB2 := gateway.NewRegistry(b.store, orgB, b.gateway.Offer())
	dB, err := regB2.Import(ctx, []byte(fmt.Sprintf(orgsProcess, "Organization B's process.")), "", "u_admin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := regB2.Publish(ctx, dB.Process.Name, "u_admin", true); err != nil {
		t.Fatal(err)
	}
	inB := func(id auth.Identity) auth.Identity { id.Org = orgB; return id }
	reviewer := personID("rev@example.com", "reviewers")
	return &orgsBench{
		b: b, crmA: crmA, crmB: crmB,
		agentA: b.connect(agentID), reviewerA: b.connect(reviewer), opsA: b.connect(operatorID),
		agentB: b.connect(inB(agentID)), reviewerB: b.connect(inB(reviewer)), opsB: b.connect(inB(operatorID)),
	}
}

// orgA is what A holds when B looks.
type orgA struct {
	runs                 []string // every run of A
	claimed, ready       string   // a claimed run, a run whose work is ready
	deciding, ended      string   // a run awaiting its check, an ended run
	token                string   // the claim token of claimed
	item                 interpreter.WorkItem
	file, fileLink       string // a file of A and its signed link
	startReq, claimReq   string // requestIds A used
	uploadReq            string
	runsCursor, workCurs string
}

func (ob *orgsBench) prepareA(t *testing.T) orgA {
	t.Helper()
	var a orgA
	start := func(req string) view {
		var v view
		ob.agentA.ok("start_run", map[string]any{"process": "iso", "inputs": map[string]any{}, "requestId": req}, &v)
		a.runs = append(a.runs, v.Run.ID)
		return v
	}
	a.startReq = rid()
	a.claimed = start(a.startReq).Run.ID
	a.claimReq = rid()
	var c interpreter.ClaimWire
	ob.agentA.ok("claim", map[string]any{"runId": a.claimed, "stepId": "work", "requestId": a.claimReq}, &c)
	a.token = c.Token
	if r := ob.agentA.callTool(c.Token, "crm/get_customer", map[string]any{"email": "alice@example.com"}); r.Status != "completed" {
		t.Fatalf("A's tool call: %+v", r)
	}
	a.ready = start(rid()).Run.ID
	start(rid()) // a second ready run, so get_work has a next page

	a.uploadReq = rid()
	var f struct {
		ID string `json:"id"`
	}
	ob.agentA.ok("upload", map[string]any{"fileName": "only-in-a.txt", "contentType": "text/plain", "requestId": a.uploadReq,
		"contentBase64": base64.StdEncoding.EncodeToString([]byte("bytes of a"))}, &f)
	a.file = f.ID
	v := start(rid())
	a.deciding = v.Run.ID
	c2 := claimStep(ob.agentA, a.deciding, "work")
	ob.agentA.ok("submit", map[string]any{"token": c2.Token, "output": map[string]any{"done": true}, "summary": "Done in A.",
		"evidence": []any{map[string]any{"kind": "file", "ref": a.file}}, "requestId": rid()}, &v)
	w := itemFor(v, "check")
	if w == nil {
		t.Fatalf("A's submitted run has no check item: %+v", v.WorkItems)
	}
	a.item = *w
	for _, r := range v.Data.Steps["work"].Record.Evidence {
		a.fileLink = r.URL
	}
	if a.fileLink == "" {
		t.Fatal("A's run view has no file link")
	}

	v = start(rid())
	a.ended = v.Run.ID
	ob.opsA.ok("cancel", map[string]any{"runId": a.ended, "reason": "ended for the test", "requestId": rid()}, nil)

	var page struct {
		NextCursor *string `json:"nextCursor"`
	}
	ob.opsA.ok("list_runs", map[string]any{"limit": 1}, &page)
	if page.NextCursor == nil {
		t.Fatal("A's list_runs of one has no next page")
	}
	a.runsCursor = *page.NextCursor
	ob.agentA.ok("get_work", map[string]any{"limit": 1}, &page)
	if page.NextCursor == nil {
		t.Fatal("A's get_work of one has no next page")
	}
	a.workCurs = *page.NextCursor
	return a
}

// bytesOf reads every run of A as A sees it.
func (ob *orgsBench) bytesOf(a orgA) map[string]string {
	out := map[string]string{}
	for _, id := range a.runs {
		r := ob.agentA.call("get_run", map[string]any{"runId": id})
		if !r.OK {
			ob.b.t.Fatalf("A's get_run %s: %+v", id, r.Error)
		}
		// File links are signed afresh on every read; the rest is the run.
		out[id] = fileURL.ReplaceAllString(string(r.Data), `"url":"…"`)
	}
	return out
}

// contents are what no answer to B may hold: what A's runs, files and
// tool calls hold. ids are A's ids, which a listing of B may not name (a
// refusal quotes the id B sent).
func (a orgA) contents() []string {
	return []string{"only-in-a.txt", "bytes of a", "Done in A.", "Organization A's", "Alice Martin"}
}

func (a orgA) ids() []string {
	return append([]string{a.file, `"` + a.item.ID + `"`}, a.runs...)
}

func TestOrgs_Isolation(t *testing.T) {
	t.Parallel()
	ob := startOrgs(t)
	a := ob.prepareA(t)
	before := ob.bytesOf(a)
	// leaks fails the test when an answer of B holds what A holds; a
	// listing, also when it names an id of A.
	leaks := func(what, answer string, listing bool) {
		t.Helper()
		find := a.contents()
		if listing {
			find = append(find, a.ids()...)
		}
		for _, s := range find {
			if strings.Contains(answer, s) {
				t.Errorf("%s in %s holds %q of A: %s", what, orgB, s, answer)
			}
		}
	}
	notFound, tokenRefused := []interpreter.Code{interpreter.CodeNotFound}, []interpreter.Code{interpreter.CodeInvalid, interpreter.CodeNotFound}
	snap := a.item.Snapshot
	calls := []struct {
		u    *user
		tool string
		args map[string]any
		want []interpreter.Code
	}{
		{ob.agentB, "get_run", map[string]any{"runId": a.claimed}, notFound},
		{ob.reviewerB, "get_run", map[string]any{"runId": a.deciding}, notFound},
		{ob.opsB, "get_run", map[string]any{"runId": a.ended}, notFound},
		{ob.agentB, "claim", map[string]any{"runId": a.ready, "stepId": "work", "requestId": rid()}, notFound},
		{ob.agentB, "claim", map[string]any{"runId": a.ready, "stepId": "work", "requestId": a.claimReq}, notFound},
		{ob.agentB, "claim", map[string]any{"runId": a.claimed, "stepId": "work", "requestId": a.claimReq}, notFound},
		{ob.agentB, "renew", map[string]any{"token": a.token, "requestId": rid()}, tokenRefused},
		{ob.agentB, "submit", map[string]any{"token": a.token, "output": map[string]any{"done": true}, "summary": "s", "requestId": rid()}, tokenRefused},
		{ob.agentB, "escalate", map[string]any{"token": a.token, "note": "help", "requestId": rid()}, tokenRefused},
		{ob.agentB, "call_tool", map[string]any{"token": a.token, "tool": "crm/get_customer", "arguments": map[string]any{"email": "alice@example.com"}, "requestId": rid()}, tokenRefused},
		{ob.reviewerB, "decide", map[string]any{"runId": a.deciding, "workItemId": a.item.ID, "snapshot": snap, "decision": "approved", "requestId": rid()}, notFound},
		{ob.opsB, "decide", map[string]any{"runId": a.deciding, "workItemId": a.item.ID, "snapshot": snap, "decision": "approved", "requestId": rid()}, notFound},
		{ob.opsB, "cancel", map[string]any{"runId": a.claimed, "reason": "not yours", "requestId": rid()}, notFound},
		{ob.opsB, "cancel", map[string]any{"runId": a.ended, "reason": "not yours", "requestId": rid()}, notFound},
		{ob.agentB, "send_event", map[string]any{"runId": a.claimed, "name": "paid", "requestId": rid()}, notFound},
		{ob.agentB, "start_run", map[string]any{"process": "iso", "version": 2, "inputs": map[string]any{}, "requestId": rid()}, notFound},
	}
	for _, c := range calls {
		r := c.u.call(c.tool, c.args)
		if r.OK || !slices.Contains(c.want, r.Error.Code) {
			t.Errorf("%s %v as %s of %s: %s, want %v", c.tool, c.args, c.u.id.ID, orgB, r.Data, c.want)
			continue
		}
		leaks(c.tool, r.Error.Message+strings.Join(r.Error.Issues, " "), false)
	}

	// Listings: B's own, nothing of A, with A's cursors too.
	var procs struct {
		Items []struct {
			Name        string `json:"name"`
			Version     int    `json:"version"`
			Description string `json:"description"`
		} `json:"items"`
	}
	ob.agentB.ok("list_processes", map[string]any{}, &procs)
	if len(procs.Items) != 1 || procs.Items[0].Version != 1 || procs.Items[0].Description != "Organization B's process." {
		t.Errorf("list_processes in %s = %+v, want B's iso v1 alone", orgB, procs.Items)
	}
	for _, l := range []struct {
		u    *user
		tool string
		args map[string]any
	}{
		{ob.agentB, "describe", map[string]any{}},
		{ob.agentB, "get_work", map[string]any{"limit": 100}},
		{ob.agentB, "get_work", map[string]any{"cursor": a.workCurs}},
		{ob.reviewerB, "get_work", map[string]any{"limit": 100}},
		{ob.opsB, "get_work", map[string]any{"limit": 100}},
		{ob.opsB, "list_runs", map[string]any{}},
		{ob.opsB, "list_runs", map[string]any{"process": "iso", "limit": 100}},
		{ob.opsB, "list_runs", map[string]any{"cursor": a.runsCursor}},
		{ob.agentB, "list_processes", map[string]any{}},
	} {
		r := l.u.call(l.tool, l.args)
		if !r.OK {
			if r.Error.Code != interpreter.CodeInvalid {
				t.Errorf("%s %v in %s: %+v", l.tool, l.args, orgB, r.Error)
			}
			continue
		}
		leaks(fmt.Sprintf("%s %v", l.tool, l.args), string(r.Data), true)
	}

	// The MCP resources: A's run is not found, the process is B's.
	if _, err := ob.agentB.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "baton://runs/" + a.claimed}); err == nil {
		t.Errorf("B read A's run %s as a resource", a.claimed)
	}
	res, err := ob.agentB.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "baton://processes/iso"})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "Organization B's process.") {
		t.Errorf("B's process resource: %v %+v", err, res)
	}

	// A requestId A used is B's own in B: start_run and upload make B's.
	var vb view
	ob.agentB.ok("start_run", map[string]any{"process": "iso", "inputs": map[string]any{}, "requestId": a.startReq}, &vb)
	if vb.Run.Version != 1 || slices.Contains(a.runs, vb.Run.ID) || !strings.Contains(vb.Body, "Organization B's") {
		t.Errorf("start_run in %s with A's requestId: run %s v%d", orgB, vb.Run.ID, vb.Run.Version)
	}
	var fb struct {
		ID string `json:"id"`
	}
	ob.agentB.ok("upload", map[string]any{"fileName": "b.txt", "contentType": "text/plain", "requestId": a.uploadReq,
		"contentBase64": base64.StdEncoding.EncodeToString([]byte("bytes of b"))}, &fb)
	if fb.ID == a.file {
		t.Errorf("upload in %s with A's requestId answered A's file %s", orgB, a.file)
	}
	// A's file is no evidence in B.
	cb := claimStep(ob.agentB, vb.Run.ID, "work")
	r := ob.agentB.call("submit", map[string]any{"token": cb.Token, "output": map[string]any{"done": true}, "summary": "Done in B.",
		"evidence": []any{map[string]any{"kind": "file", "ref": a.file}}, "requestId": rid()})
	if r.OK || r.Error.Code != interpreter.CodeNotAccepted || !strings.Contains(strings.Join(r.Error.Issues, " "), "evidence "+a.file+": not found") {
		t.Errorf("submit in %s citing A's file: %s %+v", orgB, r.Data, r.Error)
	}

	// B's tool call reaches B's crm with B's credential; A's crm never
	// sees B, and B's never sees A's credential.
	if res := ob.agentB.callTool(cb.Token, "crm/get_customer", map[string]any{"email": "bob@example.com"}); res.Status != "completed" {
		t.Fatalf("B's tool call: %+v", res)
	}
	if n := len(ob.crmA.Calls("get_customer")); n != 1 {
		t.Errorf("A's crm got %d get_customer calls, want A's one", n)
	}
	if n := len(ob.crmB.Calls("get_customer")); n != 1 {
		t.Errorf("B's crm got %d get_customer calls, want B's one", n)
	}
	for name, s := range map[string]*crmtest.Server{"Bearer secret-of-a": ob.crmA, "Bearer secret-of-b": ob.crmB} {
		for _, req := range s.Requests() {
			if req.Credential != name {
				t.Errorf("a crm whose credential is %q received %s with %q", name, req.Method, req.Credential)
			}
		}
	}

	// Signed file links name their organization: A's link altered to B's
	// is refused.
	ob.fileLinks(t, a)
	// Every inbox page, signed in to B.
	ob.inboxPages(t, a, leaks)

	// Nothing of A changed.
	after := ob.bytesOf(a)
	for id, was := range before {
		if after[id] != was {
			t.Errorf("A's run %s changed after B's calls:\nbefore %s\nafter  %s", id, was, after[id])
		}
	}
}

func (ob *orgsBench) fileLinks(t *testing.T, a orgA) {
	t.Helper()
	get := func(link string) int {
		resp, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(a.fileLink); code != http.StatusOK {
		t.Fatalf("A's own file link: %d", code)
	}
	u, err := url.Parse(a.fileLink)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("org", orgB)
	u.RawQuery = q.Encode()
	if code := get(u.String()); code != http.StatusForbidden {
		t.Errorf("A's file link naming %s: %d, want 403", orgB, code)
	}
}

func (ob *orgsBench) inboxPages(t *testing.T, a orgA, leaks func(what, answer string, listing bool)) {
	t.Helper()
	wa, wb := ob.b.browser(t), ob.b.browser(t)
	wa.signIn(personID("rev@example.com", "reviewers"))
	home := wb.signIn(auth.Identity{ID: "rev@example.com", Kind: auth.KindPerson, Groups: []string{"reviewers"}, Org: orgB})
	csrfB := hiddenFields(home.body).Get("csrf")
	itemPath := "/inbox/runs/" + a.deciding + "/items/" + a.item.ID
	for _, p := range []string{"/inbox/", "/inbox/runs", "/inbox/escalations"} {
		pg := wb.get(p)
		if pg.status != http.StatusOK {
			t.Errorf("%s in %s: %d", p, orgB, pg.status)
		}
		leaks(p, pg.body, true)
	}
	for _, p := range []string{"/inbox/runs/" + a.deciding, "/inbox/runs/" + a.ended, itemPath} {
		pg := wb.get(p)
		if pg.status != http.StatusNotFound {
			t.Errorf("%s in %s: %d, want 404", p, orgB, pg.status)
		}
		leaks(p, pg.body, false)
	}
	// A's own decide form, posted by B's session.
	f := hiddenFields(formByID(t, wa.get(itemPath).body, "decide"))
	f.Set("csrf", csrfB)
	f.Set("decision", "approved")
	if pg := wb.post(itemPath, f); pg.status != http.StatusNotFound {
		t.Errorf("A's decide form posted in %s: %d, want 404", orgB, pg.status)
	} else {
		leaks("decide", pg.body, false)
	}
	ops := ob.b.browser(t)
	ops.signIn(auth.Identity{ID: "u_ops", Kind: auth.KindOperator, Org: orgB})
	csrfOps := hiddenFields(ops.get("/inbox/").body).Get("csrf")
	pg := ops.post("/inbox/runs/"+a.claimed+"/cancel", url.Values{"csrf": {csrfOps}, "reason": {"not yours"}, "requestId": {rid()}})
	if pg.status != http.StatusNotFound {
		t.Errorf("an operator of %s cancelling A's run in the inbox: %d, want 404", orgB, pg.status)
	}
	leaks("cancel", pg.body, false)
}

// Both organizations use one requestId at once: each gets its own run.
func TestOrgs_SameRequestIDAtOnce(t *testing.T) {
	t.Parallel()
	ob := startOrgs(t)
	for i := 0; i < 3; i++ {
		req := rid()
		var va, vb view
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			ob.agentA.ok("start_run", map[string]any{"process": "iso", "inputs": map[string]any{}, "requestId": req}, &va)
		}()
		go func() {
			defer wg.Done()
			ob.agentB.ok("start_run", map[string]any{"process": "iso", "inputs": map[string]any{}, "requestId": req}, &vb)
		}()
		wg.Wait()
		if va.Run.ID == vb.Run.ID || va.Run.Version != 2 || vb.Run.Version != 1 {
			t.Fatalf("one requestId in both: A %s v%d, B %s v%d", va.Run.ID, va.Run.Version, vb.Run.ID, vb.Run.Version)
		}
		// And the claims that follow, one requestId for both at once.
		creq := rid()
		var ca, cb reply
		wg.Add(2)
		go func() {
			defer wg.Done()
			ca = ob.agentA.call("claim", map[string]any{"runId": va.Run.ID, "stepId": "work", "requestId": creq})
		}()
		go func() {
			defer wg.Done()
			cb = ob.agentB.call("claim", map[string]any{"runId": vb.Run.ID, "stepId": "work", "requestId": creq})
		}()
		wg.Wait()
		if !ca.OK || !cb.OK || bytes.Equal(ca.Data, cb.Data) {
			t.Fatalf("one claim requestId in both: A %s %+v, B %s %+v", ca.Data, ca.Error, cb.Data, cb.Error)
		}
		ra, rb := getRun(ob.agentA, va.Run.ID), getRun(ob.agentB, vb.Run.ID)
		if ra.StepState("work") != "claimed" || rb.StepState("work") != "claimed" {
			t.Fatal("a claim of one organization did not take its own run")
		}
	}
}

// fileURL is a signed file link in a run view.
var fileURL = regexp.MustCompile(`"url":\s*"[^"]*"`)

// A deployment of one organization, upgraded: what it wrote (registry,
// runs, files, requestId records) is its default organization's, read,
// listed and replayed alike by tokens naming no organization, as before,
// and by tokens naming the default one; another organization sees none of
// it.
func TestOrgs_DefaultOrganizationKeepsItsRecords(t *testing.T) {
	t.Parallel()
	b := start(t, options{})
	b.publish(strings.Replace(fmt.Sprintf(orgsProcess, "Written before organizations."), "    tools: [crm/get_customer]\n", "", 1))
	before := b.connect(agentID) // a token without the organization claim
	startArgs := map[string]any{"process": "iso", "inputs": map[string]any{}, "requestId": rid()}
	first := before.call("start_run", startArgs)
	if !first.OK {
		t.Fatalf("start_run: %+v", first.Error)
	}
	var v view
	if err := interpreter.DecodeExact(first.Data, &v); err != nil {
		t.Fatal(err)
	}
	claimArgs := map[string]any{"runId": v.Run.ID, "stepId": "work", "requestId": rid()}
	claimed := before.call("claim", claimArgs)
	uploadArgs := map[string]any{"fileName": "old.txt", "contentType": "text/plain", "requestId": rid(),
		"contentBase64": base64.StdEncoding.EncodeToString([]byte("old"))}
	uploaded := before.call("upload", uploadArgs)
	if !claimed.OK || !uploaded.OK {
		t.Fatalf("claim %+v, upload %+v", claimed.Error, uploaded.Error)
	}

	b.restartGateway() // the upgraded gateway, over the same store
	named := auth.Identity{ID: agentID.ID, Kind: agentID.Kind, Org: b.opts.Org}
	for _, u := range []*user{b.connect(agentID), b.connect(named)} {
		if r := u.call("start_run", startArgs); !r.OK || !bytes.Equal(r.Data, first.Data) {
			t.Errorf("start_run replayed as %+v: %s %+v, want the first answer", u.id, r.Data, r.Error)
		}
		if r := u.call("upload", uploadArgs); !r.OK || !sameJSON(r.Data, uploaded.Data) {
			t.Errorf("upload replayed as %+v: %s %+v, want the first answer", u.id, r.Data, r.Error)
		}
		if r := u.call("claim", claimArgs); !r.OK {
			t.Errorf("claim replayed as %+v: %+v", u.id, r.Error)
		}
		if after := getRun(u, v.Run.ID); after.StepState("work") != "claimed" {
			t.Errorf("the old run as %+v: work %s", u.id, after.StepState("work"))
		}
		var procs struct {
			Items []struct {
				Name string `json:"name"`
			} `json:"items"`
		}
		u.ok("list_processes", map[string]any{}, &procs)
		if len(procs.Items) != 1 || procs.Items[0].Name != "iso" {
			t.Errorf("list_processes as %+v: %+v", u.id, procs.Items)
		}
	}
	other := b.connect(auth.Identity{ID: agentID.ID, Kind: agentID.Kind, Org: orgB})
	other.refused("get_run", map[string]any{"runId": v.Run.ID}, interpreter.CodeNotFound)
	other.refused("start_run", startArgs, interpreter.CodeNotFound)
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
