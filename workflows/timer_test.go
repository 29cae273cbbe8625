package workflows_test

import (
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/baton-run/baton/internal/testing/drivetest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// The loop keeps one timer for the next deadline: updates that leave the
// deadline alone keep it, a new deadline cancels it and starts another, so
// at most one timer is ever pending (AwaitWithTimeout in this SDK leaves
// one behind on every early wake).
func TestOneDeadlineTimer(t *testing.T) {
	h := setup(t)
	r := h.start(drivetest.Fixture(t, "incident-postmortem"), interpreter.Values{"incidentId": "INC-1", "incidentOwner": "owner@example.com"})
	r.must(workflows.UpdateClaim, claimReq("draft", "l1"))
	for i := 0; i < 5; i++ {
		// held events change nothing time depends on
		r.must(workflows.UpdateSendEvent, workflows.Write{Digest: "e", Command: interpreter.SendEvent{Name: "nothing", Actor: interpreter.Actor{ID: "a", Kind: interpreter.ActorAgent}}})
	}
	lease := "l1"
	for i := 0; i < 3; i++ {
		next := lease + "r"
		// each renew moves the lease's expiry, so the timer moves
		r.must(workflows.UpdateRenew, workflows.Write{Digest: "r", Command: interpreter.Renew{StepID: "draft", LeaseID: lease, NewLeaseID: next, Lease: time.Duration(10+i) * time.Minute}})
		lease = next
	}
	started, ended := 0, 0
	for _, ev := range r.history(r.firstRun).GetEvents() {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			started++
		case enumspb.EVENT_TYPE_TIMER_CANCELED, enumspb.EVENT_TYPE_TIMER_FIRED:
			ended++
		}
	}
	if started-ended != 1 {
		t.Fatalf("%d timers started, %d ended: %d pending, want 1", started, ended, started-ended)
	}
	if started > 5 {
		t.Fatalf("%d timers for 1 claim, 5 events and 3 renews: the timer was re-armed without a new deadline", started)
	}
	r.must(workflows.UpdateCancel, workflows.Write{Digest: "c", Command: interpreter.Cancel{Actor: interpreter.Actor{ID: "u_ops", Kind: interpreter.ActorOperator}, Reason: "enough"}})
	_ = r.wait()
	h.save(t, r.id, "deadline-timer")
}
