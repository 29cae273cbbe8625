package interpreter

import (
	"bytes"
	"encoding/json"
	"math"
	"sync"
)

// dataMemo remembers what a run's data measures and hashes to, so that a
// write measures its new record and not all the data again, and the
// snapshot is hashed again only when the data shown changed. For 200
// records near the default cap, encoding all of it took 3.3–4.6 ms
// (BenchmarkDataSize), a submit measured it twice (the validator's check
// and the apply), and every view with open work items hashed it again.
// The inputs never change after the start, and a record never changes
// once made; a run's clones (Check's, Clone's) share its records, and so
// this.
type dataMemo struct {
	mu      sync.Mutex
	inputs  int // the inputs' size; 0: not measured yet
	records map[*Record]int

	snapshot string     // the last snapshot ("" for none),
	shown    shownParts // of this data
}

// memo returns the machine's dataMemo, made on first use.
func (m *Machine) memo() *dataMemo {
	if m.data == nil {
		m.data = &dataMemo{}
	}
	return m.data
}

// shownParts is what the data the tools show is made of (shownData): the
// records of each step, by identity, and the check a step waits on. It
// holds the records, so none of them is freed and its address taken by
// another while it is remembered.
type shownParts struct {
	nilSteps bool
	steps    map[string]shownStep
}

type shownStep struct {
	present bool // the step has data (a nil *StepData has none)
	current *Record
	history []*Record
	pending json.RawMessage
}

func shownPartsOf(m *Machine) shownParts {
	p := shownParts{nilSteps: m.run.Data.Steps == nil, steps: map[string]shownStep{}}
	for id, sd := range m.run.Data.Steps {
		if sd != nil {
			p.steps[id] = shownStep{present: true, current: sd.Record, history: append([]*Record(nil), sd.History...)}
		} else {
			p.steps[id] = shownStep{}
		}
	}
	for _, sr := range m.run.Steps {
		if len(sr.PendingCheck) > 0 {
			st := p.steps[sr.ID]
			st.pending = bytes.Clone(sr.PendingCheck)
			p.steps[sr.ID] = st
		}
	}
	return p
}

// same reports whether m's shown data is made of p's parts.
func (p shownParts) same(m *Machine) bool {
	if p.steps == nil || p.nilSteps != (m.run.Data.Steps == nil) {
		return false
	}
	n := 0
	for id, sd := range m.run.Data.Steps {
		st, ok := p.steps[id]
		if !ok {
			return false
		}
		n++
		if st.present != (sd != nil) {
			return false
		}
		if sd == nil {
			continue
		}
		if st.current != sd.Record || len(st.history) != len(sd.History) {
			return false
		}
		for i, r := range sd.History {
			if st.history[i] != r {
				return false
			}
		}
	}
	pending := 0
	for _, sr := range m.run.Steps {
		if len(sr.PendingCheck) == 0 {
			continue
		}
		pending++
		st, ok := p.steps[sr.ID]
		if !ok || !bytes.Equal(st.pending, sr.PendingCheck) {
			return false
		}
		if _, inData := m.run.Data.Steps[sr.ID]; !inData {
			if st.present {
				return false
			}
			n++
		}
	}
	held := 0
	for _, st := range p.steps {
		if st.pending != nil {
			held++
		}
	}
	return n == len(p.steps) && pending == held
}

// dataSize is the size of run data as the cap counts it: RunDataSize of
// m.run.Data, to the byte, put together from its parts as encoding/json
// writes them (Data, StepData.MarshalJSON). Data with no JSON form
// measures math.MaxInt, as RunDataSize has it.
func (m *Machine) dataSize() int {
	c := m.memo()
	c.mu.Lock()
	defer c.mu.Unlock()
	d := &m.run.Data
	if c.inputs == 0 {
		c.inputs = RunDataSize(d.Inputs)
	}
	if c.records == nil {
		c.records = map[*Record]int{}
	}
	n, over := 0, false
	add := func(k int) {
		if k == math.MaxInt {
			over = true
		}
		n += k
	}
	add(c.inputs)
	add(len(`{"inputs":` + `,"steps":` + `}`))
	if d.Steps == nil {
		add(len(`null`))
	} else {
		add(len(`{}`) + max(len(d.Steps)-1, 0)) // braces, commas
		for id, sd := range d.Steps {
			add(jsonStringSize(id) + len(`:`))
			if sd == nil {
				add(len(`null`))
				continue
			}
			// {the current record's fields,"history":[records]}
			cur := len(`{}`) // a nil record has no fields
			if sd.Record != nil {
				cur = c.record(sd.Record)
			}
			add(cur)
			add(len(`"history":[]`) + max(len(sd.History)-1, 0))
			if cur > len(`{}`) {
				add(len(`,`))
			}
			for _, r := range sd.History {
				if r == nil {
					add(len(`null`))
				} else {
					add(c.record(r))
				}
			}
		}
	}
	if over {
		return math.MaxInt
	}
	c.prune(d)
	return n
}

// jsonStringSize is the length of s as a JSON string without HTML
// escapes: its length and two quotes when nothing in it is escaped, as in
// a step's id, else what encoding it measures.
func jsonStringSize(s string) int {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b > 0x7e || b == '"' || b == '\\' {
			return RunDataSize(s)
		}
	}
	return len(s) + 2
}

// record is r's size, measured once.
func (c *dataMemo) record(r *Record) int {
	n, ok := c.records[r]
	if !ok {
		n = RunDataSize(r)
		c.records[r] = n
	}
	return n
}

// prune forgets the records no longer in d, once there are twice as many
// remembered: the clones that checked writes leave theirs behind.
func (c *dataMemo) prune(d *Data) {
	held := 0
	for _, sd := range d.Steps {
		if sd != nil {
			held += len(sd.History) + 1
		}
	}
	if len(c.records) <= 2*held+16 {
		return
	}
	keep := make(map[*Record]int, held)
	for _, sd := range d.Steps {
		if sd == nil {
			continue
		}
		for _, r := range append([]*Record{sd.Record}, sd.History...) {
			if n, ok := c.records[r]; ok && r != nil {
				keep[r] = n
			}
		}
	}
	c.records = keep
}
