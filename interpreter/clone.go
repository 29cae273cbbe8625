package interpreter

import "slices"

// clone copies a run's state deeply enough that a command applied to the
// copy never touches the original. What commands only ever replace, never
// change in place, is shared: records in run data, input and output
// values, held events, leases and times.
func (r *Run) clone() *Run {
	c := *r
	c.Steps = make([]*StepRun, len(r.Steps))
	for i, sr := range r.Steps {
		s := *sr
		if sr.Handoff != nil {
			h := *sr.Handoff
			s.Handoff = &h
		}
		s.Joined = slices.Clip(slices.Clone(sr.Joined))
		if sr.Fanout != nil {
			f := *sr.Fanout
			f.Children = slices.Clip(slices.Clone(f.Children))
			s.Fanout = &f
		}
		c.Steps[i] = &s
	}
	c.Items = make([]*Item, len(r.Items))
	for i, it := range r.Items {
		x := *it
		if it.Escalation != nil {
			e := *it.Escalation
			x.Escalation = &e
		}
		c.Items[i] = &x
	}
	c.Held = slices.Clip(slices.Clone(r.Held))
	c.Attempts = cloneAttempts(r.Attempts)
	if r.Tools != nil {
		c.Tools = make(map[string]*StepTools, len(r.Tools))
		for id, st := range r.Tools {
			x := StepTools{Claims: st.Claims, Sending: slices.Clip(slices.Clone(st.Sending)), Journal: make([]*JournalEntry, len(st.Journal))}
			for i, e := range st.Journal {
				je := *e
				x.Journal[i] = &je
			}
			c.Tools[id] = &x
		}
	}
	c.Data.Steps = make(map[string]*StepData, len(r.Data.Steps))
	for id, d := range r.Data.Steps {
		c.Data.Steps[id] = &StepData{Record: d.Record, History: slices.Clip(slices.Clone(d.History))}
	}
	return &c
}
