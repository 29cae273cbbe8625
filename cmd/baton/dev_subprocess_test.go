package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/interpreter"
)

// baton dev --processes examples/rfp publishes the children before the
// parent that runs them, and a run of the parent starts one child run per
// supplier the agent lists.
func TestDevRunsTheRFPExample(t *testing.T) {
	data := pgtest.DataDir(t)
	dev := launchDev(t, devConfigFor(data, "--processes", filepath.Join(repoRoot(t), "examples", "rfp")))
	at := func(name string) int { return strings.Index(dev.printed, "Published "+name+" v1 ") }
	if s, c, p := at("supplier-screening"), at("contract-review"), at("rfp"); s < 0 || c < 0 || p < 0 || p < s || p < c {
		t.Fatalf("dev published the example in another order:\n%s", dev.printed)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := devDriver(t, data, dev.mcpURL)
	v, err := d.Start(ctx, drive.WalkStarter, "rfp", map[string]any{"rfpId": "RFP-2026-014", "title": "Laptops"}, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Claim(ctx, drive.WalkAgent, v.Run.ID, "collect")
	if err != nil {
		t.Fatal(err)
	}
	summary := "Two suppliers answered."
	suppliers := []any{map[string]any{"name": "Acme Ltd", "bid": 41000}, map[string]any{"name": "Globex", "bid": 39500}}
	if _, err := d.Submit(ctx, drive.WalkAgent, c.Token, drive.Work{Output: map[string]any{"suppliers": suppliers},
		Evidence: []interpreter.Evidence{{Kind: "link", Ref: "https://rfp.example.com/RFP-2026-014/answers"}}, Summary: &summary}); err != nil {
		t.Fatal(err)
	}
	for {
		var list struct {
			Items []struct {
				Process string `json:"process"`
			} `json:"items"`
		}
		if err := d.Call(ctx, drive.WalkAgent, "list_runs", map[string]any{"parent": v.Run.ID}, &list); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range list.Items {
			got = append(got, it.Process)
		}
		if slices.Equal(got, []string{"supplier-screening", "supplier-screening"}) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the RFP's children: %v, want two runs of supplier-screening", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
