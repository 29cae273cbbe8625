package tests

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

// What an MCP client offers beyond the tools, through the SDK's client:
// the prompts, filled in with this server's limits; the run and process
// resources under get_run's rules; file evidence as resource links.
func TestMCPClient_PromptsAndResources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := start(t, options{lease: 5 * 60e9})
	b.publish(supplierSrc)
	agent := b.connect(agentID)
	mira := b.connect(personID("mira@example.com", "finance-approver"))

	prompts, err := agent.cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
		if p.Title == "" || p.Description == "" {
			t.Errorf("prompt %s has no title or description", p.Name)
		}
	}
	if strings.Join(names, ",") != "author-process,decide-my-items,work-queue" {
		t.Fatalf("prompts %v", names)
	}
	text := func(name string, args map[string]string) string {
		t.Helper()
		res, err := agent.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
			t.Fatalf("%s: messages %+v", name, res.Messages)
		}
		return res.Messages[0].Content.(*mcp.TextContent).Text
	}
	for name, want := range map[string][]string{
		"work-queue":      {"300 seconds", "up to 50 seconds", "Profiles: parallel-1.", `{"process": "supplier-onboarding"}`, "at most 10485760 bytes", "64 evidence items", "escalate", "requestId"},
		"decide-my-items": {`{"process": "supplier-onboarding"}`, "expire after 900 seconds", "snapshot", "`stale`", "need a `note`", "decide.decisions"},
		"author-process":  {"baton validate --profiles parallel-1", "This server offers: parallel-1.", "`parallel:", "262144 bytes"},
	} {
		got := text(name, map[string]string{"process": "supplier-onboarding"})
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s prompt lacks %q:\n%s", name, w, got)
			}
		}
	}
	if got := text("work-queue", nil); strings.Contains(got, `"process"`) {
		t.Errorf("work-queue without a process is scoped:\n%s", got)
	}
	if got := text("author-process", map[string]string{"goal": "Onboard suppliers"}); !strings.HasPrefix(got, "Write a PROCESS.md for this goal: Onboard suppliers") {
		t.Errorf("author-process with a goal:\n%s", got)
	}

	templates, err := agent.cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, rt := range templates.ResourceTemplates {
		uris = append(uris, rt.URITemplate+" "+rt.MIMEType)
	}
	if strings.Join(uris, ",") != "baton://insights/{process} application/json,baton://processes/{name} text/markdown,baton://processes/{name}@{version} text/markdown,baton://runs/{runId} application/json" {
		t.Fatalf("resource templates %v", uris)
	}

	// A submission with a file answers the run view, whose file evidence
	// is also a resource link with its signed URL and MIME type.
	v := startSupplier(t, b, mira)
	c := claimStep(agent, v.Run.ID, "check_vendor")
	file := upload(t, agent, "No matches on OFAC or EU lists.")
	res, err := agent.cs.CallTool(ctx, &mcp.CallToolParams{Name: "submit", Arguments: map[string]any{
		"token": c.Token, "requestId": rid(), "summary": "Searched both lists.", "next": "approve", "reason": "Cleared.",
		"output": map[string]any{"cleared": true, "summary": "No matches."}, "evidence": []any{map[string]any{"kind": "file", "ref": file}},
	}})
	if err != nil || res.IsError {
		t.Fatalf("submit: %v %+v", err, res)
	}
	agent.checkOutput("submit", res)
	var submitted interpreter.View
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &struct {
		Data *interpreter.View `json:"data"`
	}{&submitted}); err != nil {
		t.Fatal(err)
	}
	ev := submitted.Data.Steps["check_vendor"].Evidence[0]
	if len(res.Content) != 2 {
		t.Fatalf("submit content: %d items, want the text and one resource link", len(res.Content))
	}
	link, ok := res.Content[1].(*mcp.ResourceLink)
	if !ok || link.URI != ev.URL || link.MIMEType != "text/plain" || link.Name != "report.txt" || link.Size == nil || *link.Size != 31 {
		t.Fatalf("resource link %+v, want %s", res.Content[1], ev.URL)
	}
	// A result without files carries no link.
	if res, err := agent.cs.CallTool(ctx, &mcp.CallToolParams{Name: "describe", Arguments: map[string]any{}}); err != nil || len(res.Content) != 1 {
		t.Fatalf("describe content: %v %d", err, len(res.Content))
	}

	// baton://runs/{runId} is get_run.
	read := func(u *user, uri string) (*mcp.ResourceContents, error) {
		res, err := u.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return nil, err
		}
		if len(res.Contents) != 1 || res.Contents[0].URI != uri {
			t.Fatalf("%s: contents %+v", uri, res.Contents)
		}
		return res.Contents[0], nil
	}
	rc, err := read(mira, "baton://runs/"+v.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	spectest.Validate(t, "run-view.json", json.RawMessage(rc.Text))
	var viaResource interpreter.View
	if err := json.Unmarshal([]byte(rc.Text), &viaResource); err != nil {
		t.Fatal(err)
	}
	viaTool := getRun(mira, v.Run.ID)
	if rc.MIMEType != "application/json" || viaResource.Run != viaTool.Run || len(viaResource.WorkItems) != 1 || viaResource.WorkItems[0].Snapshot != viaTool.WorkItems[0].Snapshot ||
		!strings.Contains(viaResource.Data.Steps["check_vendor"].Evidence[0].URL, "/files/"+file) {
		t.Fatalf("run resource %s\nget_run %+v", rc.Text, viaTool.Run)
	}
	notFound := func(uri string) {
		t.Helper()
		_, err := read(agent, uri)
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != mcp.CodeResourceNotFound {
			t.Errorf("%s: %v, want resource not found", uri, err)
		}
	}
	notFound("baton://runs/r_nope")

	// baton://processes/{name} is the published PROCESS.md, latest or
	// @version.
	v2 := strings.Replace(supplierSrc, "Start this when procurement has a new supplier.", "Start this for every new supplier.", 1)
	b.publish(v2)
	for uri, want := range map[string]string{
		"baton://processes/supplier-onboarding":   v2,
		"baton://processes/supplier-onboarding@1": supplierSrc,
		"baton://processes/supplier-onboarding@2": v2,
	} {
		rc, err := read(agent, uri)
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if rc.Text != want || rc.MIMEType != "text/markdown" {
			t.Errorf("%s: %s\n%s", uri, rc.MIMEType, rc.Text)
		}
	}
	notFound("baton://processes/supplier-onboarding@3")
	notFound("baton://processes/nope")
	_, err = read(agent, "baton://processes/supplier-onboarding@x")
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("@x: %v, want invalid params", err)
	}
}
