package interpreter

import (
	"math"
	"sync"
)

// dataSizes remembers what parts of a run's data measure, so that the
// run-data cap measures a write's new record and not all the data again:
// for 200 records near the default cap, encoding all of it took 3.6–4.6
// ms, putting it together 24 µs (BenchmarkDataSize), and a submit is
// measured twice (the validator's check and the apply). The inputs never
// change after the start, and a record never changes once made; a run's
// clones (Check's, Clone's) share its records, and so this.
type dataSizes struct {
	mu      sync.Mutex
	inputs  int // 0: not measured yet
	records map[*Record]int
}

// dataSize is the size of run data as the cap counts it: RunDataSize of
// m.run.Data, to the byte, put together from its parts as encoding/json
// writes them (Data, StepData.MarshalJSON). Data with no JSON form
// measures math.MaxInt, as RunDataSize has it.
func (m *Machine) dataSize() int {
	if m.sizes == nil {
		m.sizes = &dataSizes{}
	}
	c := m.sizes
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
func (c *dataSizes) record(r *Record) int {
	n, ok := c.records[r]
	if !ok {
		n = RunDataSize(r)
		c.records[r] = n
	}
	return n
}

// prune forgets the records no longer in d, once there are twice as many
// remembered: the clones that checked writes leave theirs behind.
func (c *dataSizes) prune(d *Data) {
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
