package workflows_test

import (
	"testing"
	"time"

	"github.com/baton-run/baton/internal/testing/drivetest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// attemptRow is what step_attempts holds of one attempt.
type attemptRow struct {
	step, state, outcome, endedBy, next string
	claims, notAccepted                 int
}

func (h *harness) attempts(t *testing.T, runID string) []attemptRow {
	t.Helper()
	rows, err := h.store.Pool().Query(ctxFor(t), `SELECT step_id, state, coalesce(outcome, ''), coalesce(ended_by, ''),
		coalesce(next, ''), claims, not_accepted FROM step_attempts WHERE org = $1 AND run_id = $2 ORDER BY attempt`, org, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []attemptRow
	for rows.Next() {
		var a attemptRow
		if err := rows.Scan(&a.step, &a.state, &a.outcome, &a.endedBy, &a.next, &a.claims, &a.notAccepted); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// A run's step attempts reach PostgreSQL with its read model: a claim
// before the update answers, a refused submission noted by signal (which
// changes nothing else the read model shows) soon after, and the attempt's
// end with the write that ends it.
func TestAttemptsReachTheReadModel(t *testing.T) {
	h := setup(t)
	p := drivetest.Fixture(t, "invoice-approval")
	r := h.start(p, interpreter.Samples(p.Inputs))
	if got := h.attempts(t, r.id); len(got) != 1 || got[0] != (attemptRow{step: "validate", state: "ready"}) {
		t.Fatalf("after the start: %+v", got)
	}
	r.must(workflows.UpdateClaim, claimReq("validate", "l1"))
	if got := h.attempts(t, r.id); len(got) != 1 || got[0].state != "claimed" || got[0].claims != 1 {
		t.Fatalf("after the claim: %+v", got)
	}
	issues := []string{"output.totalUsd: missing"}
	if err := h.runs.NoteRefusal(ctxFor(t), r.id, interpreter.NoteRefusal{StepID: "validate", LeaseID: "l1", Issues: issues}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for got := h.attempts(t, r.id); got[0].notAccepted != 1; got = h.attempts(t, r.id) {
		if time.Now().After(deadline) {
			t.Fatalf("the noted refusal never reached the read model: %+v", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	sub := submission(p.Step("validate"))
	r.must(workflows.UpdateSubmit, workflows.Write{Digest: "s", Command: interpreter.Submit{StepID: "validate", LeaseID: "l1", Actor: agent, Submission: sub}})
	got := h.attempts(t, r.id)
	want := []attemptRow{
		{step: "validate", state: "ended", outcome: "done", endedBy: "agent", next: *sub.Next, claims: 1, notAccepted: 1},
		{step: *sub.Next, state: "waiting"},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("after the submission:\n got %+v\nwant %+v", got, want)
	}
}
