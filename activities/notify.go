package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/baton-run/baton/internal/notify"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// newNotifier is the notifier of the options: the organizations' channels
// files, --webhook, links to the inbox and inputs from the read model.
func (a *Activities) newNotifier() (*notify.Notifier, error) {
	opts := &notify.Options{
		Webhook: a.opts.WebhookURL,
		Inputs: func(ctx context.Context, org, runID string) (map[string]any, error) {
			return a.store.RunInputs(ctx, org, runID)
		},
	}
	if a.opts.InboxURL != "" {
		opts.Link = func(runID, itemID string) string { return workflows.InboxLink(a.opts.InboxURL, runID, itemID) }
	}
	return notify.New(a.opts.Channels, opts)
}

// plan names, for each notice of a run of org, the channels that take it,
// from the channels files this worker was given.
func (a *Activities) plan(org string, notices []*interpreter.Notice) [][]string {
	out := make([][]string, len(notices))
	for i, n := range notices {
		out[i] = a.notifier.Plan(org, n)
	}
	return out
}

// Notify delivers a notice of a run of org to one channel, once: a
// channel that has it already (an earlier attempt delivered it and the
// worker died before saying so) is skipped. Each attempt is recorded in
// the deliveries log, with its failure; the last one failing marks the
// delivery failed. While it delivers it heartbeats, so a worker that dies
// mid-delivery is noticed in seconds.
func (a *Activities) Notify(ctx context.Context, org, channel string, n *interpreter.Notice) error {
	done, err := a.store.Delivered(ctx, org, n.ID, channel)
	if err != nil {
		return err
	}
	if done {
		return nil
	}
	stop := heartbeat(ctx)
	err = a.notifier.Deliver(ctx, org, channel, n)
	stop()
	info := activity.GetInfo(ctx)
	permanent := errors.Is(err, notify.ErrPermanent)
	d := store.Delivery{Org: org, EventID: n.ID, Channel: channel, EventType: string(n.Type), RunID: n.Run.ID, State: store.DeliveryDelivered}
	if n.WorkItem != nil {
		d.WorkItemID = n.WorkItem.ID
	}
	attrs := []any{"org", org, "run", n.Run.ID, "event", n.ID, "type", n.Type, "channel", channel, "attempt", info.Attempt}
	if err != nil {
		d.State, d.LastError = store.DeliveryRetrying, err.Error()
		if permanent || info.Attempt >= workflows.NotifyAttempts {
			d.State = store.DeliveryFailed
		}
		a.opts.Logger.Warn("notification not delivered", append(attrs, "state", d.State, "error", err)...)
	} else {
		a.opts.Logger.Info("notification delivered", attrs...)
	}
	if rerr := a.store.RecordDelivery(ctx, d); rerr != nil {
		a.opts.Logger.Error("recording a delivery failed", append(attrs, "error", rerr)...)
	}
	if permanent {
		return temporal.NewNonRetryableApplicationError(err.Error(), workflows.NotifyPermanent, nil)
	}
	return err
}

// heartbeat heartbeats every two seconds until stopped.
func heartbeat(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}
