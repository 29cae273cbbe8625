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

// A child run links its parent, and a parent its children: list_runs
// with parent, the run resource's _meta and the inbox's run pages; the
// child's own view is core-2's, the parent's the profile's.
func TestRunFamilyLinks(t *testing.T) {
	b := startInbox(t, options{subprocess: true})
	b.publish(familyChildSrc)
	b.publish(familyParentSrc)
	mira := b.connect(personID("mira@example.com"))
	agent := b.connect(agentID)
	var v interpreter.View
	mira.ok("start_run", map[string]any{"process": "rfp", "inputs": map[string]any{}, "requestId": rid()}, &v)
	parent := v.Run.ID
	c := claimStep(agent, parent, "collect")
	suppliers := []any{map[string]any{"name": "Acme"}, map[string]any{"name": "Birch"}}
	agent.ok("submit", map[string]any{"token": c.Token, "requestId": rid(), "summary": "Listed.", "output": map[string]any{"suppliers": suppliers}}, &v)
	// The parent names a child once Temporal has started it.
	var kids []string
	for deadline := time.Now().Add(time.Minute); len(kids) != 2; {
		for _, s := range v.Steps {
			if s.ID == "screen_each" && s.Children != nil {
				kids = s.Children.RunningIDs
			}
		}
		if len(kids) != 2 && time.Now().After(deadline) {
			t.Fatalf("children: %+v", v.Steps)
		}
		if len(kids) != 2 {
			time.Sleep(50 * time.Millisecond)
			mira.ok("get_run", map[string]any{"runId": parent}, &v)
		}
	}

	var listed struct {
		Items []struct {
			ID      string `json:"id"`
			Process string `json:"process"`
		} `json:"items"`
	}
	// The children write their own rows as they start: wait for both.
	deadline := time.Now().Add(time.Minute)
	for {
		mira.ok("list_runs", map[string]any{"parent": parent}, &listed)
		if len(listed.Items) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(listed.Items) != 2 || listed.Items[0].Process != "screening" || !slices.Contains(kids, listed.Items[0].ID) || !slices.Contains(kids, listed.Items[1].ID) {
		t.Fatalf("list_runs parent %s: %+v, want %v", parent, listed.Items, kids)
	}
	mira.ok("list_runs", map[string]any{"parent": kids[0]}, &listed)
	if len(listed.Items) != 0 {
		t.Fatalf("a child's children: %+v", listed.Items)
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
	var linked []string
	for _, u := range rc.Meta["children"].([]any) {
		linked = append(linked, u.(string))
	}
	slices.Sort(linked)
	want := []string{"baton://runs/" + kids[0], "baton://runs/" + kids[1]}
	slices.Sort(want)
	if !slices.Equal(linked, want) || rc.Meta["parent"] != nil {
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
