package tests

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

const familyChildSrc = `---
name: screening
description: Screen one supplier.
inputs:
  supplierName: string
steps:
  - id: screen
    agent: Screen the supplier.
    output: { cleared: boolean }
  - id: ok
    finish: cleared
---
Screen the supplier named in the inputs.
`

const familyParentSrc = `---
name: rfp
description: Run an RFP.
steps:
  - id: collect
    agent: List the suppliers.
    output: { suppliers: { type: list, items: object } }
  - id: screen_each
    process: screening
    for_each: steps.collect.output.suppliers
    inputs: { supplierName: item.name }
    next: compare
  - id: compare
    agent: Compare them.
  - id: done
    finish: awarded
---
Run the RFP.
`

// parentView is a parent's run view from a tool's result, unchecked: its
// process steps are the profile's, not core-2's.
func parentView(t *testing.T, u *user, tool string, args map[string]any) interpreter.View {
	t.Helper()
	var r reply
	res := u.send(tool, args)
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &r); err != nil || !r.OK {
		t.Fatalf("%s: %v %+v", tool, err, r.Error)
	}
	var v interpreter.View
	if err := json.Unmarshal(r.Data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A child run links its parent, and a parent its children, in the run
// resource's _meta and on the inbox's run pages; the child's own view is
// core-2's.
func TestRunFamilyLinks(t *testing.T) {
	b := startInbox(t, options{subprocess: true})
	b.publish(familyChildSrc)
	b.publish(familyParentSrc)
	mira := b.connect(personID("mira@example.com"))
	agent := b.connect(agentID)
	v := parentView(t, mira, "start_run", map[string]any{"process": "rfp", "inputs": map[string]any{}, "requestId": rid()})
	parent := v.Run.ID
	var c struct {
		Token string `json:"token"`
	}
	res := agent.send("claim", map[string]any{"runId": parent, "stepId": "collect", "requestId": rid()})
	var r reply
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &r); err != nil || !r.OK || json.Unmarshal(r.Data, &c) != nil {
		t.Fatalf("claim: %v %+v", err, r.Error)
	}
	suppliers := []any{map[string]any{"name": "Acme"}, map[string]any{"name": "Birch"}}
	v = parentView(t, agent, "submit", map[string]any{"token": c.Token, "requestId": rid(), "summary": "Listed.", "output": map[string]any{"suppliers": suppliers}})
	var kids []string
	for _, s := range v.Steps {
		if s.ID == "screen_each" && s.Children != nil {
			kids = s.Children.RunningIDs
		}
	}
	if len(kids) != 2 {
		t.Fatalf("children: %+v", v.Steps)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	read := func(runID string) *mcp.ResourceContents {
		t.Helper()
		for {
			res, err := mira.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "baton://runs/" + runID})
			if err == nil {
				return res.Contents[0]
			}
			if ctx.Err() != nil {
				t.Fatalf("read %s: %v", runID, err)
			}
			time.Sleep(50 * time.Millisecond) // the child's start is under way
		}
	}
	for _, kid := range kids {
		rc := read(kid)
		spectest.Validate(t, "run-view.json", json.RawMessage(rc.Text))
		if rc.Meta["parent"] != "baton://runs/"+parent || rc.Meta["parentStep"] != "screen_each" || rc.Meta["children"] != nil {
			t.Fatalf("child %s's _meta: %+v", kid, rc.Meta)
		}
	}
	rc := read(parent)
	var listed []string
	for _, u := range rc.Meta["children"].([]any) {
		listed = append(listed, u.(string))
	}
	slices.Sort(listed)
	want := []string{"baton://runs/" + kids[0], "baton://runs/" + kids[1]}
	slices.Sort(want)
	if !slices.Equal(listed, want) || rc.Meta["parent"] != nil {
		t.Fatalf("parent's _meta: %+v", rc.Meta)
	}

	w := b.browser(t)
	w.signIn(operatorID)
	if p := w.get("/inbox/runs/" + kids[0]); p.status != 200 || !p.has("Started by step") || !p.has("/inbox/runs/"+parent) {
		t.Fatalf("child page %d:\n%s", p.status, p.body)
	}
	p := w.get("/inbox/runs/" + parent)
	if p.status != 200 || !p.has("Child runs") || !p.has("/inbox/runs/"+kids[0]) || !p.has("/inbox/runs/"+kids[1]) {
		t.Fatalf("parent page %d:\n%s", p.status, p.body)
	}
}
