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

// signalCommands are the signals a run takes and the command each
// carries, in the order drainSignals applies them.
var signalCommands = []struct {
	name    string
	receive func(c workflow.ReceiveChannel) (interpreter.Command, bool)
}{
	{SignalEvent, func(c workflow.ReceiveChannel) (interpreter.Command, bool) {
		var ev EventSignal
		ok := c.ReceiveAsync(&ev)
		return eventCommand(ev), ok
	}},
	{SignalRefusal, func(c workflow.ReceiveChannel) (interpreter.Command, bool) {
		var n interpreter.NoteRefusal
		ok := c.ReceiveAsync(&n)
		return n, ok
	}},
	{SignalChildEnded, func(c workflow.ReceiveChannel) (interpreter.Command, bool) {
		var e ChildEnd
		ok := c.ReceiveAsync(&e)
		return interpreter.ChildEnded{RunID: e.RunID, Outcome: e.Outcome, Note: e.Note}, ok
	}},
	{SignalCancel, func(c workflow.ReceiveChannel) (interpreter.Command, bool) {
		var x CancelSignal
		ok := c.ReceiveAsync(&x)
		if x.By == "" {
			x.By = "temporal"
		}
		return interpreter.Cancel{Actor: interpreter.Actor{ID: x.By, Kind: interpreter.ActorSystem}, Reason: x.Reason}, ok
	}},
}

// changeSettleTakesTurn versions settle: version 1 waits, before a
// continue-as-new, for a signal being applied to finish its publication
// and the needs it made. Runs recorded before continue as new without
// waiting.
const changeSettleTakesTurn = "settle-takes-turn"

// signalled returns a check of whether a signal was delivered and not
// yet applied: a loop's wait condition, evaluated often.
func signalled(ctx workflow.Context) func() bool {
	chans := make([]workflow.ReceiveChannel, len(signalCommands))
	for i, s := range signalCommands {
		chans[i] = workflow.GetSignalChannel(ctx, s.name)
	}
	return func() bool {
		for _, c := range chans {
			if c.Len() > 0 {
				return true
			}
		}
		return false
	}
}

// settle lets running update handlers finish (Temporal fails accepted
// updates still running when a run continues as new), lets the starts and
// cancellations of children in flight be sent, and applies the signals
// delivered but not yet applied (they would be lost with this run), until
// none is left. It fails only when the workflow is cancelled meanwhile.
//
// A signal being applied holds the write turn until its publication has
// performed the needs it made: a child's start made by a child_ended is
// in the machine's state before it is in flight, so a run that continued
// as new meanwhile would carry a child marked running that never started.
// Since changeSettleTakesTurn, settle also waits for the turn to be free.
func (r *runner) settle(ctx workflow.Context) error {
	pending := signalled(ctx)
	turn := workflow.GetVersion(ctx, changeSettleTakesTurn, workflow.DefaultVersion, 1) == 1
	for {
		if err := workflow.Await(ctx, func() bool {
			return workflow.AllHandlersFinished(ctx) && r.kids.idle() && !(turn && r.writing)
		}); err != nil {
			return err
		}
		if !pending() {
			return nil
		}
		r.drainSignals(ctx)
	}
}

// drainSignals applies the signals delivered to this run and not yet
// applied, in the order they arrived on each channel. Since
// changeFanoutBatch, the signals delivered together are applied in one
// write (applySignals); runs recorded before apply and publish each.
func (r *runner) drainSignals(ctx workflow.Context) {
	if r.batching(ctx) {
		var cmds []interpreter.Command
		for _, s := range signalCommands {
			c := workflow.GetSignalChannel(ctx, s.name)
			for {
				cmd, ok := s.receive(c)
				if !ok {
					break
				}
				cmds = append(cmds, cmd)
			}
		}
		r.applySignals(ctx, cmds)
		return
	}
	for _, s := range signalCommands {
		c := workflow.GetSignalChannel(ctx, s.name)
		for {
			cmd, ok := s.receive(c)
			if !ok {
				break
			}
			r.signal(ctx, cmd)
		}
	}
}

// signal applies a command that arrived by signal. A refusal is logged:
// a signal has no one to answer.
func (r *runner) signal(ctx workflow.Context, cmd interpreter.Command) {
	r.inTurn(ctx, func() {
		if _, err := r.m.Apply(cmd, workflow.Now(ctx)); err != nil {
			workflow.GetLogger(ctx).Info("signal refused", "run", r.in.RunID, "error", err)
			return
		}
		r.dirty = true
		r.publish(ctx, nil)
	})
}

// inTurn runs f in the run's write turn. A command taken from its channel
// is applied even when the run is being cancelled meanwhile: the turn is
// waited for on a context the run's cancellation does not cancel.
func (r *runner) inTurn(ctx workflow.Context, f func()) {
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	release, err := r.take(dctx)
	if err != nil {
		return
	}
	defer release()
	f()
}

// applySignals applies commands that arrived by signal, in order, and
// publishes the run once for all of them: a thousand children that end
// together are one read-model write and one local activity, not a
// thousand. A change the run may leave unwritten (unwritten) is not
// published; the needs it made are still performed. A refusal is logged
// and the others still apply.
func (r *runner) applySignals(ctx workflow.Context, cmds []interpreter.Command) {
	if len(cmds) == 0 {
		return
	}
	r.inTurn(ctx, func() {
		applied := false
		for _, cmd := range cmds {
			if _, err := r.m.Apply(cmd, workflow.Now(ctx)); err != nil {
				workflow.GetLogger(ctx).Info("signal refused", "run", r.in.RunID, "error", err)
				continue
			}
			applied = true
		}
		switch {
		case !applied:
		case r.unwritten(ctx):
			r.dirty = true
			r.perform(ctx, r.m.TakeNeeds())
		default:
			r.dirty = true
			r.publish(ctx, nil)
		}
	})
}
