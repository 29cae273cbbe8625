package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/insights"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/telemetry"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/interpreter"
)

const insightsProcess = `---
name: memos
description: An agent writes a memo, a reviewer approves it.
steps:
  - id: write
    agent: Write the memo.
    output: { text: string }
  - id: review
    person: reviewers
    approve: Review the memo.
    next: done
  - id: done
    finish: sent
---

Memos.
`

// baton insights reads a deployment's database: one process as text or
// JSON, every published one, and the window it is given; the open-steps
// gauge reads the same record.
func TestInsightsCommand(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	dir := filepath.Join(t.TempDir(), "memos")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "PROCESS.md"), []byte(insightsProcess), 0o600); err != nil {
		t.Fatal(err)
	}
	batonOK(t, "import", "--database-url", url, "--org", "o_memo", dir)
	batonOK(t, "publish", "--database-url", url, "--org", "o_memo", "--same-name-groups", "memos")
	ctx := context.Background()
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Truncate(time.Millisecond)
	at := func(min int) *time.Time { t := now.Add(time.Duration(min) * time.Minute); return &t }
	for i, id := range []string{"r_1", "r_2"} {
		row := store.RunRow{Org: "o_memo", RunID: id, Process: "memos", Version: 1, State: "active", Mode: "live",
			StartedBy: "u_mira", StartedAt: *at(-30 + i), UpdatedAt: *at(-20), Seq: 5}
		done := interpreter.Attempt{StepID: "write", Seq: 1, Kind: interpreter.KindAgent, ReadyAt: *at(-30 + i), ClaimedAt: at(-25),
			EndedAt: at(-20), Outcome: interpreter.AttemptDone, EndedBy: interpreter.ByAgent, Next: "review", Claims: 1, Rev: 2}
		review := interpreter.Attempt{StepID: "review", Seq: 3, Kind: interpreter.KindApprove, State: interpreter.StepWaiting, ReadyAt: *at(-20), Rev: 3}
		if _, err := st.PublishRun(ctx, nil, &row, nil, nil, done, review); err != nil {
			t.Fatal(err)
		}
	}

	var r insights.Report
	if err := json.Unmarshal([]byte(batonOK(t, "insights", "--database-url", url, "--org", "o_memo", "--process", "memos", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	w, rv := r.Step("write"), r.Step("review")
	if r.Runs.Started != 2 || r.Runs.Open != 2 || w == nil || w.Attempts != 2 || w.DoneByAgent != 2 || rv == nil || rv.Open.Waiting != 2 ||
		len(r.Oldest) != 2 || r.Oldest[0].Link != "/inbox/runs/r_1" || r.Steps[0].Step != "write" || w.Title != "Write the memo." {
		t.Fatalf("the figures: %+v", r)
	}
	text := batonOK(t, "insights", "--database-url", url, "--org", "o_memo", "--process", "memos", "--inbox-url", "https://baton.example.com/inbox/")
	for _, want := range []string{"Process memos", "Runs: 2 started, 0 ended, 2 open now", "write", "5m / 5m", "https://baton.example.com/inbox/runs/r_1", "review"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	var all []insights.Report
	if err := json.Unmarshal([]byte(batonOK(t, "insights", "--database-url", url, "--org", "o_memo", "--json")), &all); err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Process != "memos" {
		t.Fatalf("every process: %+v", all)
	}
	// A window that began after the runs started counts none of them.
	if err := json.Unmarshal([]byte(batonOK(t, "insights", "--database-url", url, "--org", "o_memo", "--process", "memos", "--since", "10m", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Runs.Started != 0 || r.Step("write") != nil || r.Step("review").Attempts != 0 || r.Step("review").Open.Waiting != 2 {
		t.Fatalf("the last 10 minutes: %+v", r)
	}
	if code, _, errOut := baton("insights", "--database-url", url, "--org", "o_memo", "--process", "nope"); code != 1 || !strings.Contains(errOut, `no published process "nope"`) {
		t.Errorf("an unknown process: exit %d %q", code, errOut)
	}
	if code, _, errOut := baton("insights", "--database-url", url, "--since", "soon"); code != 2 || !strings.Contains(errOut, "30d") {
		t.Errorf("a bad window: exit %d %q", code, errOut)
	}
	if code, out, _ := baton("insights", "--database-url", url, "--process", "memos", "--json"); code != 1 || out != "" {
		t.Errorf("another organization's process: exit %d %q", code, out)
	}

	m, err := telemetry.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := watchOpenSteps(m, st); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if want := `baton_open_steps{org="o_memo",process="memos",state="waiting",step="review"} 2`; !strings.Contains(string(body), want) {
		t.Errorf("the scrape lacks %s:\n%s", want, grepLines(string(body), "baton_open_steps"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
