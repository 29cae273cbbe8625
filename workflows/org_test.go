package workflows_test

import (
	"testing"
	"time"

	"github.com/baton-run/baton/internal/testing/drivetest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// Every write names its organization, and a run of another organization
// answers not_found and records nothing: several organizations can share
// a namespace. Escalate carried no organization once (issue 13, hole 7).
func TestWritesFromAnotherOrganizationAreNotFound(t *testing.T) {
	h := setup(t)
	p := drivetest.Fixture(t, "invoice-approval")
	r := h.start(p, interpreter.Samples(p.Inputs))
	r.must(workflows.UpdateClaim, claimReq("validate", "l1"))
	runs, err := workflows.NewClient(h.c, &workflows.ClientOptions{TaskQueue: h.queue})
	if err != nil {
		t.Fatal(err)
	}
	before := len(r.history("").Events)
	view := r.view()
	person := interpreter.Actor{ID: "mira@example.com", Kind: interpreter.ActorPerson}
	operator := interpreter.Actor{ID: "u_ops", Kind: interpreter.ActorOperator}
	writes := []struct {
		name string
		cmd  interpreter.Command
	}{
		{"escalate", interpreter.Escalate{StepID: "validate", LeaseID: "l1", Actor: agent, Note: "Stuck."}},
		{"claim", interpreter.Claim{StepID: "validate", Actor: agent, LeaseID: "l9", Lease: time.Minute}},
		{"renew", interpreter.Renew{StepID: "validate", LeaseID: "l1", NewLeaseID: "l2", Actor: agent, Lease: time.Minute}},
		{"submit", interpreter.Submit{StepID: "validate", LeaseID: "l1", Actor: agent, Submission: submission(p.Step("validate"))}},
		{"decide", interpreter.Decide{WorkItemID: "w_1", Snapshot: "s", Decision: "failed", Note: ptr("no"), Actor: person}},
		{"cancel", interpreter.Cancel{Actor: operator, Reason: "Not ours."}},
		{"send_event", interpreter.SendEvent{Name: "paid", Actor: agent}},
	}
	for _, w := range writes {
		_, err := runs.Write(ctxFor(t), workflows.Write{Org: "o_other", RunID: r.id, RequestID: "other-" + w.name, Digest: "d", Command: w.cmd})
		e, ok := err.(*interpreter.Error)
		if !ok || e.Code != interpreter.CodeNotFound {
			t.Errorf("%s from another organization: %v, want not_found", w.name, err)
		}
	}
	if after := len(r.history("").Events); after != before {
		t.Errorf("history grew from %d to %d events over refused writes", before, after)
	}
	if v := r.view(); v.Run.UpdatedAt != view.Run.UpdatedAt || stepState(v, "validate") != "claimed" {
		t.Errorf("the run changed: updatedAt %s → %s, validate %s", view.Run.UpdatedAt, v.Run.UpdatedAt, stepState(v, "validate"))
	}
	// The run's own organization escalates with the same lease.
	if _, err := runs.Write(ctxFor(t), workflows.Write{Org: org, RunID: r.id, RequestID: "own-escalate", Digest: "d", Command: writes[0].cmd}); err != nil {
		t.Fatalf("escalate from the run's organization: %v", err)
	}
	if v := r.view(); stepState(v, "validate") != "waiting" || len(v.WorkItems) != 1 || v.WorkItems[0].Escalation == nil {
		t.Fatalf("after the escalation: validate %s, items %+v", stepState(v, "validate"), v.WorkItems)
	}
}

func ptr(s string) *string { return &s }

func stepState(v *interpreter.View, id string) string {
	for _, s := range v.Steps {
		if s.ID == id && s.State != nil {
			return *s.State
		}
	}
	return "null"
}
