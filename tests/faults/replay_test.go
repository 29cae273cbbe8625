package faults

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-run/baton/internal/drive"
)

// A run records the answer of its write from inside the workflow task that
// applies it; when Temporal loses that task, the record holds an answer
// Temporal never kept (TestRestartPostgres and TestRestartTemporal meet
// it). A replay therefore asks the run, which answers what it kept: here
// the records are altered behind the gateways' backs, as a lost attempt
// would have left them, and the replays still answer as the first time,
// through either gateway, while the run is active and after it has ended.
func TestReplayAnswersWhatTheRunKept(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := publishBench(t, "faults-replay", org)
	c := newRetrier(dep.gatewayURLs, 0, dep.token, newJournal())
	defer c.close()

	v, err := c.Start(ctx, drive.WalkStarter, p.Name, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := c.Claim(ctx, drive.WalkAgent, v.Run.ID, "work")
	if err != nil {
		t.Fatal(err)
	}
	db, err := pgx.Connect(ctx, dep.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	alter := func(skip string) {
		t.Helper()
		for _, w := range c.journal.writes {
			if w.tool == skip {
				continue
			}
			// A time as a lost attempt of the workflow task would have it.
			tag, err := db.Exec(ctx, `
UPDATE requests SET result = CASE WHEN result::jsonb ? 'expiresAt'
    THEN jsonb_set(result::jsonb, '{expiresAt}', '"2000-01-01T00:00:00.000Z"')
    ELSE jsonb_set(result::jsonb, '{run,updatedAt}', '"2000-01-01T00:00:00.000Z"') END::json
WHERE org = $1 AND request_id = $2`, org, w.args["requestId"])
			if err != nil {
				t.Fatal(err)
			}
			if tag.RowsAffected() != 1 {
				t.Fatalf("no record of %s %v to alter", w.tool, w.args["requestId"])
			}
		}
	}
	replay := func(when string) {
		t.Helper()
		for i, w := range c.journal.writes {
			r := newRetrier(dep.gatewayURLs, i, dep.token, newJournal())
			var again json.RawMessage
			err := r.call(ctx, w.who, w.tool, w.args, w.runID, &again)
			r.close()
			if err != nil {
				t.Fatalf("replay of %s %s: %v", when, w.tool, err)
			}
			if !sameJSON(w.answer, again) {
				t.Errorf("replay of %s %s answered\n%s\nthe first answer was\n%s", when, w.tool, again, w.answer)
			}
		}
	}
	alter("")
	replay("the active run's")

	// The run goes on and ends.
	summary := "Done."
	sv, err := c.Submit(ctx, drive.WalkAgent, cl.Token, drive.Work{Output: map[string]any{"done": true}, Summary: &summary})
	if err != nil {
		t.Fatal(err)
	}
	if len(sv.WorkItems) != 1 {
		t.Fatalf("after submit: work items %+v, want one", sv.WorkItems)
	}
	it := sv.WorkItems[0]
	end, err := c.Decide(ctx, reviewer(), v.Run.ID, drive.Decision{WorkItemID: it.ID, Snapshot: it.Snapshot, Decision: "approved"})
	if err != nil {
		t.Fatal(err)
	}
	if end.Run.State != "ended" {
		t.Fatalf("run %s after the approval, want ended", end.Run.State)
	}
	// An ended run's start is not asked again: its workflow may be gone
	// past Temporal's retention, and a start would make a new one. Its
	// record is right by then: the run records its start's answer with
	// its first read-model write, and the attempt Temporal kept writes
	// last (store.PublishRun).
	alter("start_run")
	replay("the ended run's")
}
