package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/interpreter"
)

// changeNotices versions how a run tells people of its events: version 1
// delivers each notice the machine asks for (docs/notifications.md) to
// the channels of the run's organization, one activity per channel, and
// its overdue steps reach --webhook through them; the default version
// runs NotifyOverdue for overdue steps alone. A run whose input says
// Notices is version 1 without asking (every start since says so); an
// earlier run asks the first time it has an effect to perform.
const changeNotices = "notices"

// NotifyAttempts is how many times a delivery is tried: with the backoff
// of deliverOptions, about half an hour before it gives up.
const NotifyAttempts = 12

// NotifyPermanent is the error type of a delivery that no retry can mend
// (the channel is gone, its URL is refused): it is not retried.
const NotifyPermanent = "notify_permanent"

// notifier is what a run delivers: the notices waiting for the read-model
// write that names their channels (queued), and those being delivered
// (pending), in the order asked for. Both are carried into a continued
// run.
type notifier struct {
	asked   bool
	on      bool
	queued  []*interpreter.Notice
	pending []*interpreter.Notice
}

// noticesOn reports whether this run delivers notices (changeNotices).
func (r *runner) noticesOn(ctx workflow.Context) bool {
	if r.in.Notices {
		return true
	}
	if !r.notify.asked {
		r.notify.asked = true
		r.notify.on = workflow.GetVersion(ctx, changeNotices, workflow.DefaultVersion, 1) == 1
	}
	return r.notify.on
}

// takeEffects takes the machine's effects: its notices join the queue of
// those that the next read-model write plans, and it returns them; an
// overdue step, in a run from before notices, is returned for
// notifyOverdue.
func (r *runner) takeEffects(ctx workflow.Context) (notices []*interpreter.Notice, overdue []interpreter.Effect) {
	for _, e := range r.m.TakeEffects() {
		e.Org = r.in.Org
		switch e.Kind {
		case interpreter.EffectNotice:
			if r.noticesOn(ctx) {
				r.notify.queued = append(r.notify.queued, e.Notice)
			}
		case interpreter.EffectOverdue:
			if !r.noticesOn(ctx) {
				overdue = append(overdue, e)
			}
		}
	}
	return r.notify.queued, overdue
}

// notifyOverdue runs NotifyOverdue for overdue steps of a run from before
// notices, after its read-model write as it always did. Fire and forget:
// a failing notification never blocks the run.
func (r *runner) notifyOverdue(ctx workflow.Context, overdue []interpreter.Effect) {
	for _, e := range overdue {
		actx := workflow.WithActivityOptions(ctx, notifyOptions())
		workflow.ExecuteActivity(actx, ActivityNotifyOverdue, e)
	}
}

// deliver delivers the queued notices to the channels the read-model
// write named for each (plans[i] for queued[i]), an activity per channel,
// retried with backoff up to NotifyAttempts times. Nothing waits for a
// delivery, and a failing channel holds up nothing. The deliveries run
// apart from the run's cancellation: a cancelled run's end is delivered
// too.
func (r *runner) deliver(ctx workflow.Context, plans [][]string) {
	queued := r.notify.queued
	r.notify.queued = nil
	for i, n := range queued {
		if i >= len(plans) || len(plans[i]) == 0 {
			continue
		}
		channels := plans[i]
		r.notify.pending = append(r.notify.pending, n)
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		workflow.Go(dctx, func(ctx workflow.Context) {
			defer func() {
				r.notify.pending = slices.DeleteFunc(r.notify.pending, func(p *interpreter.Notice) bool { return p == n })
			}()
			futures := make([]workflow.Future, len(channels))
			for j, ch := range channels {
				actx := workflow.WithActivityOptions(ctx, deliverOptions(n, ch))
				futures[j] = workflow.ExecuteActivity(actx, ActivityNotify, r.in.Org, ch, n)
			}
			for j, f := range futures {
				if err := f.Get(ctx, nil); err != nil {
					workflow.GetLogger(ctx).Warn("a notification was not delivered", "run", r.in.RunID, "event", n.ID, "type", n.Type, "channel", channels[j], "error", err)
				}
			}
		})
	}
}

// awaitDeliveries waits until every delivery in flight succeeded or gave
// up, so that a run's last events (run.ended above all) are delivered
// before its workflow closes: Temporal runs no activity of a closed
// workflow.
func (r *runner) awaitDeliveries(ctx workflow.Context) error {
	return workflow.Await(ctx, func() bool { return len(r.notify.pending) == 0 })
}

// continuedNotices are the notices queued or in flight, which a continued
// run plans and delivers again (a channel that has one already skips it).
func (r *runner) continuedNotices() []*interpreter.Notice {
	return slices.Concat(r.notify.pending, r.notify.queued)
}
