package drive

import "github.com/baton-run/baton/interpreter"

// family does what the runs' process steps ask of the driver, as the
// workflow does on a server: each child starts as a run of the driver's
// processes, a child no longer waited for is cancelled, and a parent is
// told when its child ended. It goes on until the runs ask for nothing
// more, since a parent told of an end may start more children.
func (d *Machine) family() {
	for more := true; more; {
		more = false
		for i := 0; i < len(d.order); i++ {
			m := d.runs[d.order[i]]
			for _, n := range m.TakeNeeds() {
				more = true
				switch n := n.(type) {
				case *interpreter.ChildNeeded:
					d.startChild(n)
				case *interpreter.ChildCancelNeeded:
					if c := d.runs[n.RunID]; c != nil && !c.Run().State.Over() {
						_, _ = c.Apply(interpreter.Cancel{Actor: interpreter.Actor{ID: n.By, Kind: interpreter.ActorSystem}, Reason: n.Note}, d.now)
					}
				}
			}
			d.effects = append(d.effects, m.TakeEffects()...)
		}
		for _, id := range d.order {
			run := d.runs[id].Run()
			if run.Parent == nil || !run.State.Over() || d.told[id] {
				continue
			}
			d.told[id] = true
			more = true
			end := interpreter.ChildEnded{RunID: id, Outcome: run.Outcome}
			if run.State == interpreter.RunCancelled {
				end.Outcome = interpreter.OutcomeCancelled
			}
			if run.Ended != nil {
				end.Note = run.Ended.Note
			}
			// A parent that ended meanwhile refuses it: nothing waits.
			if p := d.runs[run.Parent.RunID]; p != nil {
				_, _ = p.Apply(end, d.now)
			}
		}
	}
}

// startChild starts a child as a run of the driver, or tells its parent
// why it cannot.
func (d *Machine) startChild(n *interpreter.ChildNeeded) {
	parent := d.runs[n.Start.Parent.RunID]
	p, err := d.procs.lookup(n.Binding.Process)
	var m *interpreter.Machine
	if err == nil {
		st := n.Start
		st.Process, st.Children = p, interpreter.BindLocal(p, d.procs)
		m, err = interpreter.StartRun(st, d.now)
	}
	if err != nil {
		_, _ = parent.Apply(n.NotStarted(err.Error()), d.now)
		return
	}
	d.runs[n.Start.RunID] = m
	d.order = append(d.order, n.Start.RunID)
}
