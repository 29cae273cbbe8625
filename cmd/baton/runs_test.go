package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

func ptr(s string) *string { return &s }

// baton runs against a running baton dev: list with filters, show, and
// cancel under the tools' rules.
func TestRuns(t *testing.T) {
	d := startDev(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	issuer, err := auth.LoadOrCreateDevKey(d.data)
	if err != nil {
		t.Fatal(err)
	}
	mint := func(w drive.Who) (string, error) {
		return issuer.Issue(auth.Identity{ID: w.ID, Kind: auth.Kind(w.Kind), Groups: w.Groups}, time.Hour)
	}
	drv := drive.NewMCP(d.mcpURL, mint, nil)
	defer drv.Close()
	agent := drive.Who{ID: "a_dev", Kind: interpreter.ActorAgent}
	start := func(invoice string) string {
		v, err := drv.Start(ctx, agent, "invoice-approval", map[string]any{
			"invoiceId": invoice, "invoiceDocument": "https://erp.example/" + invoice, "manager": "mira@example.com",
		}, "")
		if err != nil {
			t.Fatalf("start_run: %v", err)
		}
		return v.Run.ID
	}
	first, second := start("INV-1"), start("INV 2")
	// The first run goes on to its manager's approval.
	c, err := drv.Claim(ctx, agent, first, "validate")
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	if _, err := drv.Submit(ctx, agent, c.Token, drive.Work{
		Output:   map[string]any{"totalUsd": 500, "supplier": "Acme", "matchSummary": "PO and receipt match"},
		Evidence: []interpreter.Evidence{{Kind: "link", Ref: "https://erp.example/match/INV-1"}},
		Summary:  ptr("Matched the invoice to PO 7 and its receipt."),
		Next:     ptr("manager_review"), Reason: ptr("500 USD is at most 10000"),
	}); err != nil {
		t.Fatalf("submit: %v", err)
	}
	at := []string{"--url", d.mcpURL, "--data", d.data}
	runs := func(args ...string) string {
		t.Helper()
		return batonOK(t, append(append([]string{"runs"}, args...), at...)...)
	}

	t.Run("list", func(t *testing.T) {
		out := runs("list")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "RUN ") {
			t.Fatalf("list printed:\n%s", out)
		}
		for i, id := range []string{first, second} { // oldest first
			if !strings.HasPrefix(lines[i+1], id+" ") || !strings.Contains(lines[i+1], "invoice-approval v1") {
				t.Errorf("line %d is not run %s:\n%s", i+1, id, out)
			}
		}
		if !strings.Contains(lines[2], `invoiceId="INV 2"`) || !strings.Contains(lines[1], "invoiceId=INV-1 ") {
			t.Errorf("inputs not shown:\n%s", out)
		}
		// A filter on an input with a space, with the flag after a positional-free command.
		out = runs("list", "--input", "invoiceId=INV 2")
		if !strings.Contains(out, second) || strings.Contains(out, first) {
			t.Errorf("list --input invoiceId='INV 2' printed:\n%s", out)
		}
		out = runs("list", "--process", "invoice-approval", "--limit", "1")
		if !strings.Contains(out, first) || strings.Contains(out, second) {
			t.Errorf("list --limit 1 printed:\n%s", out)
		}
		// --json is list_runs' own shape.
		out = runs("list", "--json", "--state", "waiting")
		var data struct {
			Items []struct {
				ID    string `json:"id"`
				State string `json:"state"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &data); err != nil {
			t.Fatalf("list --json: %v\n%s", err, out)
		}
		spectest.Validate(t, "tools/list_runs.result.json", json.RawMessage(out))
		if len(data.Items) != 1 || data.Items[0].ID != first {
			t.Errorf("list --state waiting = %+v, want the run awaiting approval", data.Items)
		}
	})

	t.Run("show", func(t *testing.T) {
		out := runs("show", first)
		for _, want := range []string{
			"Run " + first + ": invoice-approval v1 (live)",
			"State:    waiting",
			"Started:  ",
			"Inputs:   invoiceDocument=https://erp.example/INV-1 invoiceId=INV-1 manager=mira@example.com",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("show lacks %q:\n%s", want, out)
			}
		}
		for _, re := range []string{
			`(?m)^  validate +agent +done *$`,
			`(?m)^  manager_review +approve +waiting +\d{4}-\d\d-\d\dT\S+Z$`,
			`(?m)^  finance_review +approve +- *$`,
			`(?m)^  w_\S+  manager_review  approve  for person mira@example\.com  due \S+$`,
			`(?m)^      decisions: approved, rejected, failed$`,
			`(?m)^History:\n  \S+Z +validate +a_dev +completed, next manager_review: 500 USD is at most 10000\n +Matched the invoice to PO 7 and its receipt\.$`,
		} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("show does not match %s:\n%s", re, out)
			}
		}
		raw := runs("show", "--json", first)
		spectest.Validate(t, "tools/get_run.result.json", json.RawMessage(raw))
		var v interpreter.View
		if err := json.Unmarshal([]byte(raw), &v); err != nil || v.Run.ID != first || len(v.WorkItems) != 1 {
			t.Errorf("show --json: %v\n%s", err, raw)
		}

		code, _, errOut := baton(append([]string{"runs", "show", "r_nope"}, at...)...)
		if code != 1 || !strings.Contains(errOut, "refused: not_found") {
			t.Errorf("show of an unknown run: exit %d, stderr %s", code, errOut)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		// The tools' rules: an agent may not cancel; a reason is required.
		agentTok, err := mint(agent)
		if err != nil {
			t.Fatal(err)
		}
		code, _, errOut := baton("runs", "cancel", second, "--reason", "duplicate", "--url", d.mcpURL, "--token", agentTok)
		if code != 1 || !strings.Contains(errOut, "refused: forbidden") {
			t.Errorf("cancel as an agent: exit %d, stderr %s", code, errOut)
		}
		code, _, errOut = baton(append([]string{"runs", "cancel", second}, at...)...)
		if code != 1 || !strings.Contains(errOut, "refused: invalid") || !strings.Contains(errOut, "reason") {
			t.Errorf("cancel without a reason: exit %d, stderr %s", code, errOut)
		}
		if v, err := drv.GetRun(ctx, agent, second); err != nil || v.Run.State != "active" {
			t.Fatalf("a refused cancel changed the run: %v, %v", v.Run.State, err)
		}

		out := runs("cancel", second, "--reason", "Duplicate of\nINV-1", "--operator", "u_lee")
		if !strings.Contains(out, "State:    cancelled") || !regexp.MustCompile(`(?m)^Ended: +\S+Z by u_lee: Duplicate of INV-1$`).MatchString(out) {
			t.Errorf("cancel printed:\n%s", out)
		}
		v, err := drv.GetRun(ctx, agent, second)
		if err != nil {
			t.Fatal(err)
		}
		if v.Run.State != "cancelled" || v.Run.Ended == nil || v.Run.Ended.By != "u_lee" || *v.Run.Ended.Note != "Duplicate of\nINV-1" {
			t.Errorf("get_run after cancel: %+v %+v", v.Run, v.Run.Ended)
		}
		code, _, errOut = baton(append([]string{"runs", "cancel", second, "--reason", "again"}, at...)...)
		if code != 1 || !strings.Contains(errOut, "refused: conflict") || !strings.Contains(errOut, "run_ended") {
			t.Errorf("cancel of a cancelled run: exit %d, stderr %s", code, errOut)
		}
		out = runs("list", "--state", "cancelled")
		if !strings.Contains(out, second+" ") || strings.Contains(out, first) {
			t.Errorf("list --state cancelled printed:\n%s", out)
		}
	})
}

func TestRunsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"runs", "show"},
		{"runs", "cancel", "r_1", "r_2", "--reason", "x"},
		{"runs", "list", "r_1"},
		{"runs", "list", "--input", "novalue"},
	} {
		if code, _, _ := baton(args...); code != 2 {
			t.Errorf("baton %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
	code, _, errOut := baton("runs", "show", "r_1", "--data", t.TempDir())
	if code != 1 || !strings.Contains(errOut, "no dev key") || !strings.Contains(errOut, "--token") {
		t.Errorf("show without a dev key: exit %d, stderr %s", code, errOut)
	}
}
