package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// Every child a parent names can be read: from the write that starts the
// children on, each id in the parent's children.runningIds answers get_run
// with the child's view (or retry, while its workflow cannot answer yet),
// never not_found, and list_runs with parent comes to list them all
// (docs/profile-subprocess.md §6).
func TestNamedChildrenCanBeRead(t *testing.T) {
	const n = 6
	r := startRFP(t, "")
	c := claimStep(r.agent, r.run, "collect")
	var list []any
	for i := range n {
		list = append(list, map[string]any{"name": fmt.Sprintf("Supplier %d", i), "bid": 100 + i})
	}
	var v view
	r.agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{"suppliers": list},
		"evidence": evidenceFor(r.agent, []string{"link"}), "summary": fmt.Sprintf("%d suppliers answered.", n), "requestId": rid()}, &v)
	read := map[string]bool{}
	check := func(v view) {
		t.Helper()
		kids := stepOf(v, "screen_each").Children
		if kids == nil || kids.Total != n || kids.Running != len(kids.RunningIDs) || kids.Ended != 0 {
			t.Fatalf("screen_each's children %+v", kids)
		}
		for _, id := range kids.RunningIDs {
			rep := r.agent.call("get_run", map[string]any{"runId": id})
			switch {
			case rep.OK:
				var cv view
				r.agent.succeeded("get_run", rep, &cv)
				if cv.Run.ID != id || cv.Run.Process != "supplier-screening" {
					t.Fatalf("get_run %s answered run %s of %s", id, cv.Run.ID, cv.Run.Process)
				}
				read[id] = true
			case rep.Error.Code != interpreter.CodeRetry:
				t.Fatalf("the parent names child %s and get_run of it answers %s: %s", id, rep.Error.Code, rep.Error.Message)
			}
		}
	}
	check(v)
	deadline := time.Now().Add(2 * time.Minute)
	for len(read) < n {
		if time.Now().After(deadline) {
			t.Fatalf("read %d of %d children", len(read), n)
		}
		check(getRun(r.agent, r.run))
	}
	for {
		var listed struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		r.agent.ok("list_runs", map[string]any{"parent": r.run, "limit": 100}, &listed)
		missing := 0
		for id := range read {
			found := false
			for _, it := range listed.Items {
				found = found || it.ID == id
			}
			if !found {
				missing++
			}
		}
		if missing == 0 && len(listed.Items) == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("list_runs parent lists %d runs and misses %d of %d named children", len(listed.Items), missing, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
