package tests

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/baton-run/baton/interpreter"
)

const supplierSrc = `---
name: supplier-onboarding
description: Check a new supplier against sanctions lists and get finance approval.
inputs:
  vendorName: string
  amount: { type: number, description: Expected annual spend in USD }
steps:
  - id: check_vendor
    agent: |
      Check the vendor against the OFAC and EU sanctions lists.
      Attach the screening report.
    output:
      cleared: boolean
      summary: string
    evidence: [file]
    next:
      - { to: approve, when: Vendor is cleared on both lists }
      - { to: decline, when: Any sanctions hit }

  - id: approve
    person: finance-approver
    approve: Approve only when the vendor is cleared and the spend is justified.
    due: 2d
    on_reject: check_vendor
    next: done

  - id: decline
    finish: declined

  - id: done
    finish: onboarded
---

# Supplier onboarding

Start this when procurement has a new supplier.
`

type workList struct {
	Items []struct {
		RunID    string                `json:"runId"`
		StepID   string                `json:"stepId"`
		Handoff  *interpreter.Handoff  `json:"handoff"`
		WorkItem *interpreter.WorkItem `json:"workItem"`
	} `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

func startSupplier(t *testing.T, b *baton, starter *user) interpreter.View {
	t.Helper()
	var v interpreter.View
	starter.ok("start_run", map[string]any{
		"process": "supplier-onboarding", "requestId": rid(),
		"inputs": map[string]any{"vendorName": "Acme", "amount": json.Number("48000.10")},
	}, &v)
	return v
}

func upload(t *testing.T, u *user, content string) string {
	t.Helper()
	var f struct {
		ID     string `json:"id"`
		SHA256 string `json:"sha256"`
		Bytes  int    `json:"bytes"`
	}
	u.ok("upload", map[string]any{
		"fileName": "report.txt", "contentType": "text/plain", "requestId": rid(),
		"contentBase64": base64.StdEncoding.EncodeToString([]byte(content)),
	}, &f)
	if f.Bytes != len(content) || len(f.SHA256) != 64 {
		t.Fatalf("upload = %+v", f)
	}
	return f.ID
}

func TestSupplierOnboardingThroughEveryTool(t *testing.T) {
	b := start(t, options{})
	b.publish(supplierSrc)
	agent := b.connect(agentID)
	mira := b.connect(personID("mira@example.com", "finance-approver"))

	var d map[string]any
	agent.ok("describe", nil, &d)
	if d["version"] != "core-2" || d["leaseSeconds"] != json.Number("600") {
		t.Fatalf("describe = %v", d)
	}
	var procs struct {
		Items []struct {
			Name    string `json:"name"`
			Version int    `json:"version"`
		} `json:"items"`
	}
	agent.ok("list_processes", map[string]any{}, &procs)
	if len(procs.Items) != 1 || procs.Items[0].Name != "supplier-onboarding" || procs.Items[0].Version != 1 {
		t.Fatalf("list_processes = %+v", procs)
	}

	v := startSupplier(t, b, mira)
	runID := v.Run.ID
	if v.Run.State != "active" || *v.Steps[0].State != "ready" {
		t.Fatalf("started %+v", v.Run)
	}

	var work workList
	agent.ok("get_work", map[string]any{}, &work)
	if len(work.Items) != 1 || work.Items[0].RunID != runID || work.Items[0].StepID != "check_vendor" {
		t.Fatalf("agent get_work = %+v", work)
	}
	var c interpreter.ClaimWire
	agent.ok("claim", map[string]any{"runId": runID, "stepId": "check_vendor", "requestId": rid()}, &c)
	if c.Token == "" || c.Step.Instructions == "" || c.Body == "" || c.Data.Inputs["amount"] != json.Number("48000.10") {
		t.Fatalf("claim = %+v", c)
	}
	file := upload(t, agent, "No matches on OFAC or EU lists.")
	submit := map[string]any{
		"token": c.Token, "requestId": rid(),
		"output":   map[string]any{"cleared": true, "summary": "No matches."},
		"evidence": []any{map[string]any{"kind": "file", "ref": file}},
		"summary":  "Searched both lists by legal name. No hits.",
		"next":     "approve", "reason": "Vendor is cleared.",
	}
	agent.ok("submit", submit, &v)
	ev := v.Data.Steps["check_vendor"].Evidence[0]
	if ev.SHA256 == "" || ev.URL == "" {
		t.Fatalf("file evidence in run data = %+v", ev)
	}
	resp, err := http.Get(ev.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "No matches on OFAC or EU lists." {
		t.Fatalf("file url: %d %q", resp.StatusCode, body)
	}
	if resp, _ := http.Get(ev.URL + "x"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("forged file url: %d", resp.StatusCode)
	}

	mira.ok("get_work", map[string]any{}, &work)
	if len(work.Items) != 1 || work.Items[0].WorkItem == nil || work.Items[0].WorkItem.StepID != "approve" {
		t.Fatalf("person get_work = %+v", work)
	}
	w := work.Items[0].WorkItem
	agent.refused("decide", map[string]any{"runId": runID, "workItemId": w.ID, "snapshot": w.Snapshot, "decision": "approved", "requestId": rid()}, interpreter.CodeForbidden)
	b.connect(personID("olaf@example.com", "g_sales")).refused("decide", map[string]any{"runId": runID, "workItemId": w.ID, "snapshot": w.Snapshot, "decision": "approved", "requestId": rid()}, interpreter.CodeForbidden)
	mira.ok("decide", map[string]any{"runId": runID, "workItemId": w.ID, "snapshot": w.Snapshot, "decision": "approved", "requestId": rid()}, &v)
	if v.Run.State != "ended" || *v.Run.Outcome != "onboarded" {
		t.Fatalf("after approval: %+v", v.Run)
	}
	var got interpreter.View
	agent.ok("get_run", map[string]any{"runId": runID}, &got)
	if got.Run.State != "ended" || got.Data.Steps["approve"].Decision != "approved" {
		t.Fatalf("get_run = %+v", got.Run)
	}
	var runs struct {
		Items []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"items"`
	}
	agent.ok("list_runs", map[string]any{"inputs": map[string]any{"amount": json.Number("48000.1")}}, &runs)
	if len(runs.Items) != 1 || runs.Items[0].ID != runID || runs.Items[0].State != "ended" {
		t.Fatalf("list_runs = %+v", runs)
	}
	agent.refused("claim", map[string]any{"runId": runID, "stepId": "check_vendor", "requestId": rid()}, interpreter.CodeConflict, "run_ended")
}
