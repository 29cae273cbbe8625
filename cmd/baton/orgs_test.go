package main

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

// One baton dev serves two organizations side by side: the same process
// published into each (--processes DIR and --processes ORG=DIR), a run of
// each walked to its end by that organization's own agents, people and
// operators over MCP, and neither organization sees or changes the
// other's run.
func TestDevServesTwoOrganizations(t *testing.T) {
	data := t.TempDir()
	cfg := devConfigFor(data)
	cfg.databaseURL = pgtest.NewDatabase(t)
	fixture := filepath.Join(fixturesDir(t), "invoice-approval")
	cfg.processes = listFlag{fixture, "o_beta=" + fixture}
	d := launchDev(t, cfg)

	issuer, err := auth.LoadOrCreateDevKey(data)
	if err != nil {
		t.Fatal(err)
	}
	driver := func(org string) *drive.MCP {
		mint := func(w drive.Who) (string, error) {
			return issuer.Issue(auth.Identity{ID: w.ID, Kind: auth.Kind(w.Kind), Groups: w.Groups, Org: org}, time.Hour)
		}
		drv := drive.NewMCP(d.mcpURL, mint, nil)
		t.Cleanup(func() { drv.Close() })
		return drv
	}
	alpha, beta := driver(""), driver("o_beta")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, err := interpreter.Parse(spectest.Fixture(t, "invoice-approval"), &interpreter.ParseOptions{Folder: "invoice-approval"})
	if err != nil {
		t.Fatal(err)
	}
	walkA := &drive.Walk{Process: p}
	finalA, err := walkA.Run(ctx, alpha)
	if err != nil {
		t.Fatalf("walk in the default organization: %v", err)
	}
	walkB := &drive.Walk{Process: p}
	finalB, err := walkB.Run(ctx, beta)
	if err != nil {
		t.Fatalf("walk in o_beta: %v", err)
	}
	if finalA.Run.Outcome == nil || finalB.Run.Outcome == nil {
		t.Fatalf("runs did not end with an outcome: %+v, %+v", finalA.Run, finalB.Run)
	}
	if walkA.RunID() == walkB.RunID() {
		t.Fatalf("both organizations' runs are %s", walkA.RunID())
	}

	// Each organization reads its own run and not the other's.
	for _, c := range []struct {
		name        string
		drv         *drive.MCP
		own, others string
	}{
		{"default", alpha, walkA.RunID(), walkB.RunID()},
		{"o_beta", beta, walkB.RunID(), walkA.RunID()},
	} {
		if _, err := c.drv.GetRun(ctx, drive.WalkOperator, c.own); err != nil {
			t.Errorf("%s: get_run of its own run: %v", c.name, err)
		}
		_, err := c.drv.GetRun(ctx, drive.WalkOperator, c.others)
		var refusal *interpreter.Error
		if !errors.As(err, &refusal) || refusal.Code != interpreter.CodeNotFound {
			t.Errorf("%s: get_run of the other organization's run: %v, want not_found", c.name, err)
		}
		if _, err := c.drv.Cancel(ctx, drive.WalkOperator, c.others, "not ours"); !errors.As(err, &refusal) || refusal.Code != interpreter.CodeNotFound {
			t.Errorf("%s: cancel of the other organization's run: %v, want not_found", c.name, err)
		}
		var listed struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		if err := c.drv.Call(ctx, drive.WalkOperator, "list_runs", map[string]any{}, &listed); err != nil {
			t.Fatalf("%s: list_runs: %v", c.name, err)
		}
		if len(listed.Items) != 1 || listed.Items[0].ID != c.own {
			t.Errorf("%s: list_runs names %+v, want only %s", c.name, listed.Items, c.own)
		}
	}

	// Run counters name the organization, so an operator tells one
	// organization's stuck runs from another's.
	m := scrapeMetrics(t, d.metricsURL)
	for _, org := range []string{"o_default", "o_beta"} {
		for _, family := range []string{"baton_runs_started_total", "baton_runs_ended_total"} {
			if got := m[family].sum(map[string]string{"org": org, "process": "invoice-approval"}); got != 1 {
				t.Errorf("%s{org=%q} = %v, want 1", family, org, got)
			}
		}
	}
}
