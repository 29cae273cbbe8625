package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// deadlineTimer is the one workflow timer set to the machine's next
// deadline. Waking early for an update keeps it; a new deadline cancels it
// and starts another, so a run never leaves timers behind.
type deadlineTimer struct {
	at     time.Time
	future workflow.Future
	cancel workflow.CancelFunc
}

// arm makes the timer fire at next (none when !ok), keeping the running
// one when it already does.
func (t *deadlineTimer) arm(ctx workflow.Context, next time.Time, ok bool) {
	if t.future != nil && ok && t.at.Equal(next) && !t.future.IsReady() {
		return
	}
	if t.future != nil && !t.future.IsReady() {
		t.cancel()
	}
	t.future, t.cancel = nil, nil
	if !ok {
		return
	}
	wait := next.Sub(workflow.Now(ctx))
	if wait < time.Millisecond {
		wait = time.Millisecond
	}
	tctx, cancel := workflow.WithCancel(ctx)
	t.at, t.cancel = next, cancel
	t.future = workflow.NewTimerWithOptions(tctx, wait, workflow.TimerOptions{Summary: "next deadline " + next.UTC().Format(time.RFC3339)})
}

func (t *deadlineTimer) fired() bool { return t.future != nil && t.future.IsReady() }
