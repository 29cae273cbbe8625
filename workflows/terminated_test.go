package workflows_test

import (
	"testing"

	"github.com/baton-run/baton/interpreter"
)

// A child whose workflow is terminated in Temporal while the run that
// started it waits is seen failed, from the child's future, with the
// note the profile gives, the one the watch of carried children gives
// (TestTerminatedCarriedChildIsSeen): its status, not Temporal's error
// text. With no route for failed, the parent fails naming the child.
func TestTerminatedChildIsSeen(t *testing.T) {
	h := setup(t)
	f := publishFamily(t, h, rfpSrc)
	parent := f.start(t, interpreter.ModeLive)
	h.submitSuppliers(t, parent, "a")
	v := h.until(t, parent, "the child running", func(v *interpreter.View) bool { return len(running(v)) == 1 })
	victim := running(v)[0]
	h.until(t, victim, "the child's start", func(*interpreter.View) bool { return true })
	if err := h.c.TerminateWorkflow(ctxFor(t), victim, "", "stuck supplier registry"); err != nil {
		t.Fatal(err)
	}
	v = h.closedView(t, parent, false)
	want := "child run " + victim + ` ended failed: "its workflow closed without ending the run: terminated"`
	if v.Run.State != "ended" || *v.Run.Outcome != interpreter.DecisionFailed || *v.Run.Ended.Note != want {
		t.Fatalf("parent of a terminated child: %+v, note %q, want %q", v.Run, *v.Run.Ended.Note, want)
	}
}
