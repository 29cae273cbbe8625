package tests

import (
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// The conformance suite drives Baton only through MCP tool calls, as a
// client would. Each test names the section of the specification it proves.

// in returns the same Baton bound to another test, so subtests can connect
// clients of their own and fail on their own goroutine.
func (b *baton) in(t testing.TB) *baton {
	c := *b
	c.t = t
	return &c
}

// parseFor parses a process the way a client that holds the file would, to
// know its event names and step kinds.
func parseFor(t testing.TB, src []byte) *interpreter.Process {
	t.Helper()
	offer := interpreter.DefaultOffer()
	p, err := interpreter.Parse(src, &interpreter.ParseOptions{Offer: &offer})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return p
}

// view is a run view as a client decodes it.
type view = interpreter.View

func getRun(u *user, runID string) view {
	u.t.Helper()
	var v view
	u.ok("get_run", map[string]any{"runId": runID}, &v)
	return v
}

// itemFor returns a copy of the open work item on a step, or nil. A copy,
// so that decoding the next view into the same variable leaves it alone.
func itemFor(v view, stepID string) *interpreter.WorkItem {
	for _, w := range v.WorkItems {
		if w.StepID == stepID {
			return &w
		}
	}
	return nil
}

// agentItem is one get_work item for an agent, personItem one for a
// person.
type (
	agentItem  = interpreter.AgentWork
	personItem = interpreter.PersonWork
)

func agentWork(u *user, runID string) []agentItem {
	u.t.Helper()
	var w struct {
		Items      []agentItem `json:"items"`
		NextCursor *string     `json:"nextCursor"`
	}
	u.ok("get_work", map[string]any{"limit": 100}, &w)
	var out []agentItem
	for _, it := range w.Items {
		if runID == "" || it.RunID == runID {
			out = append(out, it)
		}
	}
	return out
}

func personWork(u *user, runID string) []personItem {
	u.t.Helper()
	var w struct {
		Items      []personItem `json:"items"`
		NextCursor *string      `json:"nextCursor"`
	}
	u.ok("get_work", map[string]any{"limit": 100}, &w)
	var out []personItem
	for _, it := range w.Items {
		if runID == "" || it.RunID == runID {
			out = append(out, it)
		}
	}
	return out
}

// testLease is the lease of the tests that wait for one to end: long
// enough that what such a test does before it ends fits on a loaded
// machine.
const testLease = 6 * time.Second

// untilExpired waits until the clock has passed expiresAt, the end of a
// lease. The run may not have noticed yet: a write sent now is checked at
// the run's time, which is later, but what the read model shows changes
// only once the run's timer has fired (see claimAfterLease).
func untilExpired(t testing.TB, expiresAt string) {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, expiresAt)
	if err != nil {
		t.Fatalf("expiresAt %q: %v", expiresAt, err)
	}
	time.Sleep(time.Until(at) + 10*time.Millisecond)
}

// claimAfterLease claims a step whose lease expires at expiresAt, once the
// run has ended that lease: it waits for the clock, then asks get_work
// until the step is offered again (the run's timer fired and the run
// published it), however late a loaded machine runs the timer.
func claimAfterLease(u *user, runID, stepID, expiresAt string) interpreter.ClaimWire {
	u.t.Helper()
	untilExpired(u.t, expiresAt)
	offered := func(items []agentItem) bool {
		for _, it := range items {
			if it.StepID == stepID {
				return true
			}
		}
		return false
	}
	if items := agentWorkWhen(u, runID, offered); !offered(items) {
		u.t.Fatalf("step %s of run %s is not offered after its lease ended at %s: get_work = %+v", stepID, runID, expiresAt, items)
	}
	return claimStep(u, runID, stepID)
}

// agentWorkWhen is agentWork once ok says so, asking again for up to two
// minutes: the read model shows an ended lease when the run's timer has
// fired and the run has published it, which a loaded machine does late.
func agentWorkWhen(u *user, runID string, ok func([]agentItem) bool) []agentItem {
	u.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		items := agentWork(u, runID)
		if ok(items) || time.Now().After(deadline) {
			return items
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func claimStep(u *user, runID, stepID string) interpreter.ClaimWire {
	u.t.Helper()
	var c interpreter.ClaimWire
	u.ok("claim", map[string]any{"runId": runID, "stepId": stepID, "requestId": rid()}, &c)
	return c
}

// evidenceFor attaches one item per required kind, uploading a file as u.
func evidenceFor(u *user, kinds []string) []any {
	var ev []any
	for _, k := range kinds {
		if k == "file" {
			ev = append(ev, map[string]any{"kind": "file", "ref": upload(u.t.(*testing.T), u, "evidence for the step")})
		} else {
			ev = append(ev, map[string]any{"kind": "link", "ref": "https://example.com/doc/1"})
		}
	}
	return ev
}

// people hands out one MCP session per identity.
type people struct {
	b     *baton
	users map[string]*user
}

func newPeople(b *baton) *people { return &people{b: b, users: map[string]*user{}} }

func (p *people) as(id auth.Identity) *user {
	if u, ok := p.users[id.ID]; ok {
		return u
	}
	u := p.b.connect(id)
	p.users[id.ID] = u
	return u
}

// startSrc publishes src and starts a run of it as starter.
func startSrc(t *testing.T, b *baton, starter *user, src string, inputs map[string]any) view {
	t.Helper()
	pv := b.publish(src)
	if inputs == nil {
		inputs = map[string]any{}
	}
	var v view
	starter.ok("start_run", map[string]any{"process": pv.Name, "inputs": inputs, "requestId": rid()}, &v)
	return v
}

func decideArgs(v view, w *interpreter.WorkItem, decision string, extra map[string]any) map[string]any {
	args := map[string]any{"runId": v.Run.ID, "workItemId": w.ID, "snapshot": w.Snapshot, "decision": decision, "requestId": rid()}
	for k, x := range extra {
		args[k] = x
	}
	return args
}
