package interpreter

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

// The run data put together from its parts measures what encoding it
// whole does, to the byte, for every shape the parts take: no steps,
// records with no fields or all of them, a step with history but no
// current record, text that JSON escapes, raw JSON with spaces, and data
// with no JSON form.
func TestDataSizeIsTheEncodedSize(t *testing.T) {
	note := "a <b> & \u2028 \"quoted\" é"
	full := &Record{
		Output:   map[string]any{"html": "<p>&amp;</p>", "n": 1.5, "list": []any{"ü", nil, true}},
		Evidence: []Evidence{{Kind: "link", Ref: "https://example.com/?a=1&b=<2>"}},
		Summary:  "Done \t with\nlines", Next: "b", Reason: "because", Decision: DecisionApproved,
		Note: &note, Check: json.RawMessage(`{ "verdict" : "pass",  "answers": [ ] }`), By: "a_x", At: "2026-01-01T00:00:00.000Z",
	}
	bare := &Record{}
	emptyOutput := &Record{Output: map[string]any{}, By: "server"}
	for name, d := range map[string]Data{
		"nothing":                 {},
		"inputs only":             {Inputs: map[string]any{"vendor": "<Acme & Co>", "amount": 12.5}, Steps: map[string]*StepData{}},
		"a bare record":           {Inputs: map[string]any{}, Steps: map[string]*StepData{"a": {Record: bare}}},
		"a full record":           {Inputs: map[string]any{}, Steps: map[string]*StepData{"a": {Record: full, History: []*Record{}}}},
		"history, no current one": {Inputs: map[string]any{}, Steps: map[string]*StepData{"a": {History: []*Record{full, bare}}}},
		"several steps": {Inputs: map[string]any{"x": "y"}, Steps: map[string]*StepData{
			"a": {Record: emptyOutput, History: []*Record{full}}, "b<c": {Record: full}, "d": nil,
		}},
	} {
		t.Run(name, func(t *testing.T) {
			m := &Machine{run: &Run{Data: d}}
			if got, want := m.dataSize(), RunDataSize(&m.run.Data); got != want {
				t.Errorf("put together %d bytes, encoded whole %d", got, want)
			}
			// Measured again from what it remembers, the same.
			if got, want := m.dataSize(), RunDataSize(&m.run.Data); got != want {
				t.Errorf("measured again: %d bytes, want %d", got, want)
			}
		})
	}
	m := &Machine{run: &Run{Data: Data{Steps: map[string]*StepData{"a": {Record: &Record{Output: map[string]any{"x": math.NaN()}}}}}}}
	if got := m.dataSize(); got != math.MaxInt {
		t.Errorf("data with no JSON form measures %d, want math.MaxInt", got)
	}
}

// A run's writes record and retire records; each measure after one
// matches the whole encoding, and the records that checked writes'
// clones leave behind are forgotten rather than kept for good.
func TestDataSizeFollowsWrites(t *testing.T) {
	m := &Machine{run: &Run{Data: Data{Inputs: map[string]any{"q": "<x>"}, Steps: map[string]*StepData{}}}}
	for i := range 200 {
		step := fmt.Sprintf("s%d", i%7)
		// A check, on a clone: its record is measured, then dropped.
		c := m.Clone()
		c.record(step, &Record{Summary: fmt.Sprintf("checked %d", i), By: "a_x"})
		if got, want := c.dataSize(), RunDataSize(&c.run.Data); got != want {
			t.Fatalf("write %d, checked: %d bytes, want %d", i, got, want)
		}
		m.record(step, &Record{Output: map[string]any{"i": i, "s": "&"}, By: "a_x"})
		if i%5 == 0 {
			m.retire(step)
		}
		if got, want := m.dataSize(), RunDataSize(&m.run.Data); got != want {
			t.Fatalf("write %d: %d bytes, want %d", i, got, want)
		}
	}
	held := 0
	for _, sd := range m.run.Data.Steps {
		held += len(sd.History) + 1
	}
	if n := len(m.data.records); n > 2*held+16 {
		t.Errorf("%d record sizes remembered for %d records in the run", n, held)
	}
}

// nearCap is run data of 200 records of about 1.2 KB each, near the
// default cap.
func nearCap() Data {
	text := ""
	for len(text) < 1200 {
		text += "lorem ipsum "
	}
	d := Data{Inputs: map[string]any{"vendor": "Acme"}, Steps: map[string]*StepData{}}
	for i := range 200 {
		d.Steps[fmt.Sprintf("step_%d", i)] = &StepData{Record: &Record{Output: map[string]any{"text": text}, By: "a_x"}}
	}
	return d
}

// BenchmarkSnapshot is a view's snapshot of data near the cap that did
// not change since the last one: remembered, and hashed again as every
// view did before.
func BenchmarkSnapshot(b *testing.B) {
	m := &Machine{run: &Run{Data: nearCap(), Steps: []*StepRun{{ID: "step_0"}}}}
	b.Run("remembered", func(b *testing.B) {
		for b.Loop() {
			m.Snapshot()
		}
	})
	b.Run("hashed", func(b *testing.B) {
		for b.Loop() {
			snapshotOf(m.shownData())
		}
	})
}

// BenchmarkDataSize measures a run's data near the default cap after its
// newest record changed: put together from what it remembers, and
// encoded whole, as the cap measured it before.
func BenchmarkDataSize(b *testing.B) {
	d := nearCap()
	text := d.Steps["step_0"].Record.Output["text"]
	for _, kind := range []string{"parts", "whole"} {
		b.Run(kind, func(b *testing.B) {
			m := &Machine{run: &Run{Data: d}}
			for b.Loop() {
				d.Steps["step_0"].Record = &Record{Output: map[string]any{"text": text}, By: "a_x"}
				if kind == "parts" {
					m.dataSize()
				} else {
					RunDataSize(&m.run.Data)
				}
			}
			b.ReportMetric(float64(RunDataSize(&m.run.Data)), "bytes")
		})
	}
}

// The snapshot is hashed again whenever the data shown changed, and only
// then: a record made or retired, a check held on a step (with or without
// data of its own) or let go, or its verdict replaced by another of the
// same length; a clone's writes never show in the run it came from.
func TestSnapshotFollowsShownData(t *testing.T) {
	m := &Machine{run: &Run{Data: Data{Inputs: map[string]any{"q": 1}, Steps: map[string]*StepData{}}, Steps: []*StepRun{{ID: "a"}, {ID: "b"}}}}
	seen := map[string]string{}
	check := func(what string) string {
		t.Helper()
		got, want := m.Snapshot(), snapshotOf(m.shownData())
		if got != want {
			t.Fatalf("after %s: snapshot %s remembered, %s hashed now", what, got, want)
		}
		if again := m.Snapshot(); again != got {
			t.Fatalf("after %s: asked twice, %s then %s", what, got, again)
		}
		seen[what] = got
		return got
	}
	empty := check("nothing yet")
	m.record("a", &Record{Summary: "one", By: "a_x"})
	first := check("a record")
	m.run.Steps[0].PendingCheck = json.RawMessage(`{"verdict":"unsure","n":1}`)
	check("a check held")
	m.run.Steps[0].PendingCheck = json.RawMessage(`{"verdict":"unsure","n":2}`)
	check("another verdict, as long")
	m.run.Steps[0].PendingCheck = nil
	if got := check("the check let go"); got != first {
		t.Errorf("back to the same data, snapshot %s, want %s", got, first)
	}
	m.run.Steps[1].PendingCheck = json.RawMessage(`{"verdict":"unsure"}`)
	check("a check on a step without data")
	m.run.Steps[0].PendingCheck = json.RawMessage(`{"verdict":"unsure","n":2}`)
	check("checks on both")
	m.run.Steps[0].PendingCheck, m.run.Steps[1].PendingCheck = nil, nil
	if got := check("the checks let go"); got != first {
		t.Errorf("back to the same data, snapshot %s, want %s", got, first)
	}
	c := m.Clone()
	c.record("a", &Record{Summary: "two", By: "a_x"})
	if got, want := c.Snapshot(), snapshotOf(c.shownData()); got != want {
		t.Fatalf("the clone's snapshot %s, want %s", got, want)
	}
	if got := check("a clone's write"); got != first {
		t.Errorf("a clone's write changed the run's snapshot to %s", got)
	}
	m.record("a", &Record{Summary: "two", By: "a_x"})
	check("a second record")
	m.retire("a")
	check("retired")
	m.run.Data.Steps["a"].History = append(m.run.Data.Steps["a"].History, &Record{Summary: "three"})
	check("history grown alone")
	m.run.Data.Steps["c"] = nil
	check("a step of no data")
	m.run.Data.Steps["c"] = &StepData{}
	check("a step of empty data")
	m.run.Data.Steps = nil
	check("no steps")
	if len(seen) != 15 || seen["nothing yet"] != empty {
		t.Fatalf("checked %d states", len(seen))
	}
	distinct := map[string]bool{}
	for _, s := range seen {
		distinct[s] = true
	}
	// The three returns to earlier data repeat an earlier snapshot.
	if len(distinct) != len(seen)-3 {
		t.Errorf("%d distinct snapshots over %d states, want %d: %v", len(distinct), len(seen), len(seen)-3, seen)
	}
}

// Check's result is dropped, so it builds no view: checking a submit that
// opens an approval hashes nothing, and the run's remembered snapshot
// stays its own. The apply answers the full view.
func TestCheckBuildsNoView(t *testing.T) {
	p := loadSource(t, reworkSrc)
	m := start(t, p, map[string]any{}, starter, ModeLive)
	for _, id := range []string{"intake", "draft"} {
		claim(t, m, id, agentA, "l_"+id, t0)
		must(t, m, Submit{StepID: id, LeaseID: "l_" + id, Actor: agentA, Submission: sampleSubmission(p.Step(id))}, t0)
	}
	claim(t, m, "polish", agentA, "l1", t0)
	before := m.Snapshot()
	sub := Submit{StepID: "polish", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(p.Step("polish"))}
	if err := m.Check(sub, t0); err != nil {
		t.Fatal(err)
	}
	if m.data.snapshot != before || !m.data.shown.same(m) {
		t.Error("checking a submit hashed the data it would write")
	}
	v := must(t, m, sub, t0).(*View)
	if len(v.WorkItems) != 1 || v.WorkItems[0].Snapshot != snapshotOf(m.shownData()) || v.Run.ID == "" {
		t.Errorf("the apply's view: %+v", v)
	}
}
