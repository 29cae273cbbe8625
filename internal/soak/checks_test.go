package soak

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// Each downstream limit breaks on a record that breaks it, and holds on
// one that keeps it.
func TestCheckDownstream(t *testing.T) {
	approved := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	before, after := approved.Add(-time.Second), approved.Add(time.Second)
	got := func(tool, call, key string, effect bool, at time.Time) Received {
		return Received{Tool: tool, Call: call, Key: key, HeaderKey: key, Effect: effect, At: at}
	}
	cases := []struct {
		name     string
		calls    []*ToolCall
		received []Received
		broken   string // "" when the check must hold
	}{
		{
			name:     "every policy kept",
			calls:    []*ToolCall{{Tool: ToolLookup, Call: "l", Fate: "completed"}, {Tool: ToolTicket, Call: "t", Fate: "completed"}, {Tool: ToolNote, Call: "n", Fate: "completed"}, {Tool: ToolRefund, Call: "r", Fate: "completed", Approved: approved}, {Tool: ToolRefund, Call: "x", Fate: "rejected"}},
			received: []Received{got(ToolLookup, "l", "kl", false, after), got(ToolTicket, "t", "kt", true, after), got(ToolTicket, "t", "kt", false, after), got(ToolNote, "n", "kn", true, after), got(ToolRefund, "r", "kr", true, after)},
		},
		{
			name:     "a note (idempotency none) sent twice",
			calls:    []*ToolCall{{Tool: ToolNote, Call: "n", Fate: "completed"}},
			received: []Received{got(ToolNote, "n", "kn", true, after), got(ToolNote, "n", "kn", true, after)},
			broken:   "(idempotency none) was received 2 times",
		},
		{
			name:     "a ticket (key) sent under a second key",
			calls:    []*ToolCall{{Tool: ToolTicket, Call: "t", Fate: "completed"}},
			received: []Received{got(ToolTicket, "t", "k1", true, after), got(ToolTicket, "t", "k2", true, after)},
			broken:   "arrived under 2 keys",
		},
		{
			name:   "a completed ticket never took effect",
			calls:  []*ToolCall{{Tool: ToolTicket, Call: "t", Fate: "completed"}},
			broken: "took 0 effects",
		},
		{
			name:     "a key missing from the header",
			calls:    []*ToolCall{{Tool: ToolTicket, Call: "t", Fate: "completed"}},
			received: []Received{{Tool: ToolTicket, Call: "t", Key: "k", Effect: true, At: after}},
			broken:   `arrived with key "k" and header ""`,
		},
		{
			name:     "a refund received before its approval",
			calls:    []*ToolCall{{Tool: ToolRefund, Call: "r", Fate: "completed", Approved: approved}},
			received: []Received{got(ToolRefund, "r", "kr", true, before)},
			broken:   "before its approval was sent",
		},
		{
			name:     "a rejected refund received",
			calls:    []*ToolCall{{Tool: ToolRefund, Call: "r", Fate: "rejected"}},
			received: []Received{got(ToolRefund, "r", "kr", true, after)},
			broken:   "was rejected, never approved, and was received 1 times",
		},
		{
			name:     "a cancelled refund received",
			calls:    []*ToolCall{{Tool: ToolRefund, Call: "r", Fate: "cancelled"}},
			received: []Received{got(ToolRefund, "r", "kr", true, after)},
			broken:   "was cancelled, never approved, and was received 1 times",
		},
		{
			name:     "a refund answered completed with no approval asked",
			calls:    []*ToolCall{{Tool: ToolRefund, Call: "r", Fate: "completed"}},
			received: []Received{got(ToolRefund, "r", "kr", true, after)},
			broken:   "was completed, never approved, and was received 1 times",
		},
		{
			name:     "a refund still awaiting its approval received",
			calls:    []*ToolCall{{Tool: ToolRefund, Call: "r", Fate: "awaiting_approval"}},
			received: []Received{got(ToolRefund, "r", "kr", true, after)},
			broken:   "was awaiting_approval, never approved, and was received 1 times",
		},
		{
			name:     "a call refused stale still sent",
			calls:    []*ToolCall{{Tool: ToolLookup, Call: "l", Fate: fateRefused}},
			received: []Received{got(ToolLookup, "l", "kl", false, after)},
			broken:   "was refused stale and received 1 times",
		},
		{
			name:   "a completed lookup never received",
			calls:  []*ToolCall{{Tool: ToolLookup, Call: "l", Fate: "completed"}},
			broken: "completed and was never received",
		},
		{
			name:     "a request of no call",
			received: []Received{got(ToolNote, "ghost", "kg", true, after)},
			broken:   "of call ghost that no script made",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := checkDownstream(tc.calls, tc.received)
			assertCheck(t, c, tc.broken)
		})
	}
}

// A run in a state its script does not allow, or open with nothing
// scheduled, breaks the runs check.
func TestCheckRuns(t *testing.T) {
	ok, ready, done := "ok", "ready", "done"
	endedOK := &view{Run: interpreter.RunInfo{ID: "r1", State: string(interpreter.RunEnded), Outcome: &ok}}
	waiting := &view{Run: interpreter.RunInfo{ID: "r2", State: "waiting"}, Steps: []interpreter.StepView{{ID: "draft", Kind: interpreter.KindAgent, State: &ready}}}
	stuck := &view{Run: interpreter.RunInfo{ID: "r3", State: "waiting"}, Steps: []interpreter.StepView{{ID: "draft", Kind: interpreter.KindAgent, State: &done}}}
	cases := []struct {
		name   string
		run    *scriptRun
		view   *view
		broken string
	}{
		{"ended as allowed", &scriptRun{ID: "r1", Ends: []string{endOK}}, endedOK, ""},
		{"open and scheduled as allowed", &scriptRun{ID: "r2", Ends: []string{endWaiting}}, waiting, ""},
		{"ended where the script wants it open", &scriptRun{ID: "r1", Ends: []string{endWaiting}}, endedOK, "is ended ok, its script allows waiting"},
		{"open with nothing scheduled", &scriptRun{ID: "r3", Ends: []string{endWaiting}}, stuck, "with nothing scheduled"},
		{"never read", &scriptRun{ID: "r4", Ends: []string{endOK}}, nil, "no view"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &settled{views: map[string]*view{}}
			if tc.view != nil {
				s.views[tc.view.Run.ID] = tc.view
			}
			assertCheck(t, checkRuns([]*scriptRun{tc.run}, s), tc.broken)
		})
	}
}

// A read model that disagrees with get_run breaks the views check, and
// work listed for an ended run breaks the open-work check.
func TestCheckViewsAndOpenWork(t *testing.T) {
	ok, ready := "ok", "ready"
	endedOK := func() *view {
		return &view{Run: interpreter.RunInfo{ID: "r1", State: string(interpreter.RunEnded), Outcome: &ok}}
	}
	open := func() *view {
		return &view{Run: interpreter.RunInfo{ID: "r1", State: "waiting"}, Steps: []interpreter.StepView{{ID: "draft", Kind: interpreter.KindAgent, State: &ready}}}
	}
	runs := []*scriptRun{{ID: "r1", Ends: []string{endOK, endWaiting}}}
	cases := []struct {
		name         string
		view         *view
		listed       map[string]listed
		agent        map[string][]string
		people       map[string][]workSeen
		views, works string
	}{
		{name: "ended, listed ended, no work", view: endedOK(), listed: map[string]listed{"r1": {ID: "r1", State: "ended", Outcome: &ok}}},
		{name: "open, its ready step offered", view: open(), listed: map[string]listed{"r1": {ID: "r1", State: "waiting"}}, agent: map[string][]string{"r1": {"draft"}}},
		{name: "missing from list_runs", view: endedOK(), views: "missing from list_runs"},
		{name: "list_runs behind get_run", view: endedOK(), listed: map[string]listed{"r1": {ID: "r1", State: "waiting"}}, views: "list_runs says waiting"},
		{name: "a run no script started", view: endedOK(), listed: map[string]listed{"r1": {ID: "r1", State: "ended", Outcome: &ok}, "r9": {ID: "r9", State: "waiting"}}, views: "run r9 (, waiting) that no script started"},
		{name: "ready step not offered", view: open(), listed: map[string]listed{"r1": {ID: "r1", State: "waiting"}}, views: "get_work offers agents [], get_run shows ready [draft]"},
		{name: "ended run's step still offered", view: endedOK(), listed: map[string]listed{"r1": {ID: "r1", State: "ended", Outcome: &ok}}, agent: map[string][]string{"r1": {"draft"}}, views: "get_work offers agents [draft]", works: "get_work still lists 1 of its work"},
		{name: "ended run's item still listed", view: endedOK(), listed: map[string]listed{"r1": {ID: "r1", State: "ended", Outcome: &ok}}, people: map[string][]workSeen{"r1": {{id: "w1", step: "review"}}}, views: "get_work lists items [w1@]", works: "get_work still lists 1 of its work"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &settled{views: map[string]*view{"r1": tc.view}, listed: tc.listed, agent: tc.agent, people: tc.people}
			if s.listed == nil {
				s.listed = map[string]listed{}
			}
			assertCheck(t, checkViews(runs, s), tc.views)
			assertCheck(t, checkOpenWork(runs, s), tc.works)
		})
	}
}

// A fault not injected, or a process that did not come back, breaks the
// faults check; a stalled request not closed breaks the slow-loris check.
func TestChaosChecks(t *testing.T) {
	every := map[string]int{faultPostgres: 1, faultTemporal: 1, faultDrain: 1, faultSlowLoris: 2, faultKillWorker: 3}
	c := &chaos{counts: every}
	for _, ch := range c.checks() {
		assertCheck(t, ch, "")
	}
	c = &chaos{counts: map[string]int{faultPostgres: 1, faultDrain: 1, faultSlowLoris: 1}, broken: []string{faultSlowLoris + ": 1 of 16 stalled requests to x: still open after 10s", faultKillWorker + " w1: did not come back"}}
	got := c.checks()
	assertCheck(t, got[0], "no "+faultTemporal+" was injected")
	assertCheck(t, got[0], "w1: did not come back")
	assertCheck(t, got[1], "still open after 10s")
}

// assertCheck fails unless c holds when broken is "", or else broke with
// a line that contains broken.
func assertCheck(t *testing.T, c Check, broken string) {
	t.Helper()
	if broken == "" {
		if !c.OK() {
			t.Errorf("%s check broke: %s", c.Name, strings.Join(c.Broken, "\n"))
		}
		return
	}
	for _, b := range c.Broken {
		if strings.Contains(b, broken) {
			return
		}
	}
	t.Errorf("%s check did not report %q; it reported %q", c.Name, broken, c.Broken)
}

// A script that failed, or never started its run, breaks the scripts
// check; a report holds only when it checked something and all held.
func TestCheckScriptsAndReport(t *testing.T) {
	runs := []*scriptRun{{ID: "r1", Script: "review"}, {ID: "r2", Script: "race"}}
	assertCheck(t, checkScripts(runs, nil), "")
	runs[1].Err = errors.New("2 of two racing decisions were taken")
	assertCheck(t, checkScripts(runs, nil), "race run r2: 2 of two racing decisions were taken")
	assertCheck(t, checkScripts(runs[:1], []error{errors.New("review: start_run: retry")}), "could not start its run: review: start_run: retry")

	if (&Report{}).OK() {
		t.Error("a report that checked nothing holds")
	}
	if !(&Report{Checks: []Check{{Name: "runs"}}}).OK() {
		t.Error("a report whose checks held does not hold")
	}
	if (&Report{Checks: []Check{{Name: "runs"}, {Name: "views", Broken: []string{"x"}}}}).OK() {
		t.Error("a report with a broken check holds")
	}
}

// A recovered panic is quoted without its stack, and a long line is cut.
func TestPanicsQuotedShort(t *testing.T) {
	p := &Process{Name: "gateway-1"}
	p.out.WriteString("ready\n")
	p.out.WriteString(`time=T level=ERROR msg="tool panicked" tool=cancel panic="boom" stack="goroutine 55 [running]:\nruntime/debug.Stack()" request_id=R` + "\n")
	p.out.WriteString("panic: " + strings.Repeat("x", 1000) + "\n")
	got := p.Panics()
	if len(got) != 2 {
		t.Fatalf("Panics() = %q, want the two panic lines", got)
	}
	if want := `time=T level=ERROR msg="tool panicked" tool=cancel panic="boom"`; got[0] != want {
		t.Errorf("Panics()[0] = %q, want %q", got[0], want)
	}
	if len(got[1]) > panicLineMax+len("…") || !strings.HasPrefix(got[1], "panic: xxx") {
		t.Errorf("Panics()[1] = %q (%d bytes), want it cut to %d", got[1], len(got[1]), panicLineMax)
	}
}

// The records check takes ended runs only, at most recordRuns of them, and
// every write to them, nothing else.
func TestForgotten(t *testing.T) {
	ok := "ok"
	s := &settled{views: map[string]*view{}}
	var runs []*scriptRun
	var writes []Write
	for i := range recordRuns + 2 {
		id := fmt.Sprintf("r%03d", i)
		runs = append(runs, &scriptRun{ID: id})
		s.views[id] = &view{Run: interpreter.RunInfo{ID: id, State: string(interpreter.RunEnded), Outcome: &ok}}
		writes = append(writes, Write{Tool: "claim", RunID: id}, Write{Tool: "submit", RunID: id})
	}
	s.views["r000"].Run = interpreter.RunInfo{ID: "r000", State: "waiting"}
	writes = append(writes, Write{Tool: "start_run"})
	ids, theirs := forgotten(runs, s, writes)
	if len(ids) != recordRuns || ids[0] != "r001" || ids[len(ids)-1] != fmt.Sprintf("r%03d", recordRuns) {
		t.Fatalf("forgotten picked %d runs, %v … %v; want the %d ended ones from r001", len(ids), ids[0], ids[len(ids)-1], recordRuns)
	}
	if len(theirs) != 2*recordRuns {
		t.Errorf("forgotten took %d writes, want the %d to the runs it picked", len(theirs), 2*recordRuns)
	}
	for _, w := range theirs {
		if w.RunID == "r000" || w.RunID == "" || w.RunID == fmt.Sprintf("r%03d", recordRuns+1) {
			t.Errorf("forgotten took a write to run %q, which it did not pick", w.RunID)
		}
	}
}
