package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/interpreter"
)

// eventCommand is the machine's command for an event signal.
func eventCommand(ev EventSignal) interpreter.SendEvent {
	sender := ev.Sender
	if sender == "" {
		sender = "temporal"
	}
	return interpreter.SendEvent{Name: ev.Name, Data: ev.Data, Actor: interpreter.Actor{ID: sender, Kind: interpreter.ActorSystem}}
}

// settle lets running update handlers finish (Temporal fails accepted
// updates still running when a run continues as new) and applies the
// signals delivered but not yet applied (they would be lost with this
// run), until neither is left. It fails only when the workflow is
// cancelled meanwhile.
func (r *runner) settle(ctx workflow.Context) error {
	events := workflow.GetSignalChannel(ctx, SignalEvent)
	refusals := workflow.GetSignalChannel(ctx, SignalRefusal)
	for {
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
			return err
		}
		if events.Len() == 0 && refusals.Len() == 0 {
			return nil
		}
		r.drainSignals(ctx)
	}
}

// drainSignals applies the signals delivered to this run and not yet
// applied, in the order they arrived on each channel.
func (r *runner) drainSignals(ctx workflow.Context) {
	events := workflow.GetSignalChannel(ctx, SignalEvent)
	refusals := workflow.GetSignalChannel(ctx, SignalRefusal)
	for {
		var ev EventSignal
		if !events.ReceiveAsync(&ev) {
			break
		}
		r.signal(ctx, eventCommand(ev))
	}
	for {
		var n interpreter.NoteRefusal
		if !refusals.ReceiveAsync(&n) {
			break
		}
		r.signal(ctx, n)
	}
}

// signal applies a command that arrived by signal. A refusal is logged:
// a signal has no one to answer.
func (r *runner) signal(ctx workflow.Context, cmd interpreter.Command) {
	// A signal taken from its channel is applied even when the run is
	// being cancelled meanwhile.
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	release, err := r.take(dctx)
	if err != nil {
		return
	}
	defer release()
	if _, err := r.m.Apply(cmd, workflow.Now(ctx)); err != nil {
		workflow.GetLogger(ctx).Info("signal refused", "run", r.in.RunID, "error", err)
		return
	}
	r.dirty = true
	r.publish(ctx, nil)
}
