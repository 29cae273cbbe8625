package tests

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/activities/evaluator"
	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/insights"
	"github.com/baton-run/baton/interpreter"
)

// lettersSrc is the process the insights test runs: an agent drafts under
// a check of two questions and a due time of a minute; a reviewer
// approves the letter or sends it back.
const lettersSrc = `---
name: letters
description: An agent drafts a letter to a customer under a check; a reviewer approves it or sends it back.
steps:
  - id: draft
    agent: Draft the letter that answers the customer.
    output: { text: string }
    due: 1m
    check:
      - ask: The letter answers the customer's question.
        pass: 0.9
        fail: 0.5
      - ask: The tone is polite.
        pass: 0.9
        fail: 0.5
  - id: review
    person: reviewers
    approve: Review the letter before it goes out.
    on_reject: draft
    next: done
  - id: done
    finish: sent
---

# Letters

Customer letters, drafted by an agent and reviewed by a person.
`

// lettersEvaluator answers the letters' check with the scripted
// evaluator: a letter whose text is "bad" fails the first question, one
// that is "unclear" leaves it unsure, any other passes both.
func lettersEvaluator(t testing.TB) evaluator.Evaluator {
	t.Helper()
	scripts := map[string]*evaluator.Scripted{}
	for name, first := range map[string]float64{"bad": 0.1, "unclear": 0.7, "good": 0.95} {
		s, err := evaluator.ParseScript([]byte(`steps:
  draft:
    - index: 0
      probability: ` + jsonNum(first) + `
    - index: 1
      probability: 0.95
`))
		if err != nil {
			t.Fatal(err)
		}
		if scripts[name], err = evaluator.NewScripted(s); err != nil {
			t.Fatal(err)
		}
	}
	return evaluator.Func(func(ctx context.Context, r *interpreter.CheckRequest) (*interpreter.CheckAnswers, error) {
		var out struct{ Text string }
		_ = json.Unmarshal(r.Submission.Output, &out)
		s := scripts[out.Text]
		if s == nil {
			s = scripts["good"]
		}
		return s.Evaluate(ctx, r)
	})
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }

// lettersRun is what the insights test keeps of its runs, to work out
// every figure it expects from the times the runs recorded.
type lettersRun struct {
	b                *baton
	agent, ops, rev  *user
	full, open, gone view // ended sent; left open; cancelled
	claims           []time.Time
	lease            time.Duration
	// escalated is when the agent escalated the full run's second draft.
	escalated time.Time
}

// insightsScenario drives four runs of letters through the server: one
// through every path a step attempt can take, one left open past its due
// time, one cancelled, and one in another organization.
func insightsScenario(t *testing.T) *lettersRun {
	b := startInbox(t, options{lease: testLease, evaluator: lettersEvaluator(t)})
	b.publish(lettersSrc)
	s := &lettersRun{b: b, lease: testLease,
		agent: b.connect(agentID), ops: b.connect(operatorID), rev: b.connect(personID("rev@example.com", "reviewers"))}
	mira := b.connect(personID("mira@example.com"))
	start := func(u *user) view {
		var v view
		u.ok("start_run", map[string]any{"process": "letters", "inputs": map[string]any{}, "requestId": rid()}, &v)
		return v
	}
	s.full, s.open, s.gone = start(mira), start(mira), start(mira)

	// Another organization runs its own letters; none of it may count.
	inB := func(id auth.Identity) auth.Identity { id.Org = orgB; return id }
	regB := gateway.NewRegistry(b.store, orgB, b.gateway.Offer())
	if _, err := regB.Import(context.Background(), []byte(lettersSrc), "", "u_admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := regB.Publish(context.Background(), "letters", "u_admin", true); err != nil {
		t.Fatal(err)
	}
	other := start(b.connect(inB(personID("mira@example.com"))))
	claimStep(b.connect(inB(agentID)), other.Run.ID, "draft")

	// The cancelled run.
	s.ops.ok("cancel", map[string]any{"runId": s.gone.Run.ID, "reason": "The customer withdrew.", "requestId": rid()}, &s.gone)

	// The full run: a lease runs out, a submission is refused, the check
	// fails one and is unsure of the next, the operator returns it.
	id := s.full.Run.ID
	c := s.claim(id)
	c = s.claimAfter(id, c)
	s.agent.refused("submit", map[string]any{"token": c.Token, "output": map[string]any{"text": 5}, "summary": "Drafted.", "requestId": rid()},
		interpreter.CodeNotAccepted)
	r := s.agent.call("submit", map[string]any{"token": c.Token, "output": map[string]any{"text": "bad"}, "summary": "Drafted.", "requestId": rid()})
	if r.OK || r.Error.Code != interpreter.CodeNotAccepted {
		t.Fatalf("a failing check: %+v", r)
	}
	var v view
	s.agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{"text": "unclear"}, "summary": "Drafted.", "requestId": rid()}, &v)
	esc := itemFor(v, "draft")
	if esc == nil || esc.Escalation == nil {
		t.Fatalf("an unsure check did not escalate: %s", v.StepStates())
	}
	s.ops.ok("decide", decideArgs(v, esc, "returned", map[string]any{"note": "Say which order."}), &v)
	// It passes; the reviewer sends it back.
	c = s.claim(id)
	s.agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{"text": "Dear customer"}, "summary": "Drafted.", "requestId": rid()}, &v)
	s.rev.ok("decide", decideArgs(v, itemFor(v, "review"), "rejected", map[string]any{"note": "Name the order."}), &v)
	// The next attempt is escalated, waits past its due time, and the
	// operator writes the letter.
	c = s.claim(id)
	s.agent.ok("escalate", map[string]any{"token": c.Token, "note": "I cannot find the order.", "requestId": rid()}, &v)
	if esc = itemFor(v, "draft"); esc == nil || esc.Escalation == nil {
		t.Fatalf("the escalation: %s", v.StepStates())
	}
	s.escalated = wireTime(t, esc.Escalation.At)
	overdue := func(v view) bool {
		for _, st := range v.Steps {
			if st.ID == "draft" && st.Overdue != nil && *st.Overdue {
				return true
			}
		}
		return false
	}
	v = until(t, s.ops, id, 3*time.Minute, overdue)
	s.ops.ok("decide", decideArgs(v, itemFor(v, "draft"), "completed", map[string]any{"output": map[string]any{"text": "Dear customer, order 12."}}), &v)
	s.rev.ok("decide", decideArgs(v, itemFor(v, "review"), "approved", nil), &s.full)
	if s.full.Run.State != "ended" || *s.full.Run.Outcome != "sent" {
		t.Fatalf("the full run: %s %s", s.full.Run.State, s.full.StepStates())
	}
	s.open = until(t, s.ops, s.open.Run.ID, 3*time.Minute, overdue)
	return s
}

// claim claims the draft of run id and keeps when.
func (s *lettersRun) claim(id string) interpreter.ClaimWire {
	c := claimStep(s.agent, id, "draft")
	s.claims = append(s.claims, s.claimedAt(c))
	return c
}

// claimAfter claims the draft again once the lease of c ran out.
func (s *lettersRun) claimAfter(id string, c interpreter.ClaimWire) interpreter.ClaimWire {
	c = claimAfterLease(s.agent, id, "draft", c.ExpiresAt)
	s.claims = append(s.claims, s.claimedAt(c))
	return c
}

// claimedAt is when a claim was made: its lease's end less its length.
func (s *lettersRun) claimedAt(c interpreter.ClaimWire) time.Time {
	return wireTime(s.b.t, c.ExpiresAt).Add(-s.lease)
}

func wireTime(t testing.TB, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return at
}

// readInsights reads baton://insights/letters as u.
func readInsights(t *testing.T, u *user) (*insights.Report, error) {
	t.Helper()
	res, err := u.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "baton://insights/letters"})
	if err != nil {
		return nil, err
	}
	var r insights.Report
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &r); err != nil {
		t.Fatal(err)
	}
	return &r, nil
}

// TestInsights drives scripted runs through the server and finds every
// figure of baton insights at the value the runs' own times give it: the
// counts exactly, the durations within two milliseconds (the run views
// show times to the millisecond). Then a browser shows them to an
// operator.
func TestInsights(t *testing.T) {
	t.Parallel()
	s := insightsScenario(t)
	got, err := readInsights(t, s.ops)
	if err != nil {
		t.Fatal(err)
	}
	s.checkFigures(t, got)
	if _, err := readInsights(t, s.agent); err != nil {
		t.Errorf("an agent reading the insights: %v", err)
	}
	if _, err := readInsights(t, s.rev); err == nil || !strings.Contains(err.Error(), "operators") {
		t.Errorf("a person reading the insights: %v, want refused", err)
	}
	// The other organization counts its own run alone.
	inB := s.b.connect(auth.Identity{ID: "u_ops", Kind: auth.KindOperator, Org: orgB})
	theirs, err := readInsights(t, inB)
	if err != nil {
		t.Fatal(err)
	}
	if theirs.Runs.Started != 1 || theirs.Runs.Ended != 0 || len(theirs.Steps) != 1 || theirs.Steps[0].Attempts != 1 || theirs.Steps[0].Open.Total() != 1 {
		t.Errorf("the other organization's figures: %s", js(theirs))
	}
	t.Run("browser", func(t *testing.T) { insightsBrowser(t, s, got) })
}

// checkFigures checks every figure against what the scenario did.
func (s *lettersRun) checkFigures(t *testing.T, got *insights.Report) {
	t.Helper()
	tt := func(v string) time.Time { return wireTime(t, v) }
	full, open, gone := s.full, s.open, s.gone
	draft, review := full.Data.Steps["draft"], full.Data.Steps["review"]
	if len(draft.History) != 1 || len(review.History) != 1 {
		t.Fatalf("the full run's data: draft %d, review %d earlier completions", len(draft.History), len(review.History))
	}
	a1Ready, a1Done := tt(full.Run.StartedAt), tt(draft.History[0].At)
	r1Done := tt(review.History[0].At) // the rejection, when the second draft became ready
	a2Done, r2Done := tt(draft.At), tt(review.At)
	a2Escalated := s.escalated

	want := insights.Runs{Started: 3, Ended: 2, Open: 1}
	fullTook, goneTook := tt(full.Run.UpdatedAt).Sub(tt(full.Run.StartedAt)), tt(gone.Run.UpdatedAt).Sub(tt(gone.Run.StartedAt))
	if got.Runs.Started != want.Started || got.Runs.Ended != want.Ended || got.Runs.Open != want.Open {
		t.Errorf("runs: %+v, want %+v", got.Runs, want)
	}
	outcomes := map[string]int{}
	for _, o := range got.Runs.Outcomes {
		outcomes[o.Outcome] = o.Count
	}
	if len(outcomes) != 2 || outcomes["sent"] != 1 || outcomes["cancelled"] != 1 {
		t.Errorf("outcomes %+v", got.Runs.Outcomes)
	}
	near(t, "run duration", got.Runs.Duration, fullTook, goneTook)

	d := got.Step("draft")
	if d == nil || got.Step("review") == nil {
		t.Fatalf("steps: %s", js(got.Steps))
	}
	// Was an attempt overdue when it ended? Its due time was a minute
	// after it became ready.
	overdue := 2 // the escalated second draft and the open run's, waited for
	if a1Done.Sub(a1Ready) >= time.Minute {
		overdue++
	}
	if tt(gone.Run.UpdatedAt).Sub(tt(gone.Run.StartedAt)) >= time.Minute {
		overdue++
	}
	counts := map[string][2]int{
		"attempts": {d.Attempts, 4}, "ended": {d.Ended, 3}, "done": {d.Done, 2}, "done by agent": {d.DoneByAgent, 1},
		"done by person": {d.DoneByPerson, 1}, "taken over": {d.TakenOver, 1}, "cancelled": {d.Cancelled, 1},
		"rework": {d.Rework, 0}, "escalated": {d.Escalated, 2}, "returned": {d.Returned, 1}, "returns": {d.Returns, 1},
		"not accepted": {d.NotAccepted, 2}, "lease expiries": {d.LeaseExpiries, 1}, "overdue": {d.Overdue, overdue},
		"open ready": {d.Open.Ready, 1}, "open claimed": {d.Open.Claimed, 0}, "open waiting": {d.Open.Waiting, 0}, "open overdue": {d.Open.Overdue, 1},
	}
	for name, c := range counts {
		if c[0] != c[1] {
			t.Errorf("draft %s: %d, want %d", name, c[0], c[1])
		}
	}
	shares := map[string][2]float64{"agent share": {d.AgentShare, 0.5}, "person share": {d.PersonShare, 0.5}, "taken over": {d.TakenOverShare, 0.5},
		"rework rate": {d.ReworkRate, 0}, "return rate": {d.ReturnRate, 0.25}, "not accepted per attempt": {d.NotAcceptedPerAttempt, 0.5}}
	for name, c := range shares {
		if math.Abs(c[0]-c[1]) > 1e-9 {
			t.Errorf("draft %s: %v, want %v", name, c[0], c[1])
		}
	}
	// The first claims of each attempt: the first and the fourth.
	near(t, "draft ready → claimed", d.ReadyToClaimed, s.claims[0].Sub(a1Ready), s.claims[3].Sub(r1Done))
	near(t, "draft claimed → done", d.ClaimedToDone, a1Done.Sub(s.claims[0]))
	near(t, "draft escalated → decided", d.EscalatedToDecided, a2Done.Sub(a2Escalated))
	near(t, "draft ready → decided", d.ReadyToDecided)
	if d.Open.Oldest == nil || d.Open.Oldest.Sub(tt(open.Run.StartedAt)).Abs() >= time.Millisecond {
		t.Errorf("the oldest open draft became ready at %v, want %s", d.Open.Oldest, open.Run.StartedAt)
	}

	r := got.Step("review")
	if r.Attempts != 2 || r.Ended != 2 || r.Done != 1 || r.DoneByPerson != 1 || r.Rework != 1 || r.ReworkRate != 0.5 || r.PersonShare != 1 || r.Open.Total() != 0 {
		t.Errorf("review: %s", js(r))
	}
	near(t, "review ready → decided", r.ReadyToDecided, r1Done.Sub(a1Done), r2Done.Sub(a2Done))

	wantRoutes := []insights.Route{
		{Step: "draft", Outcome: "cancelled", Next: "", Count: 1},
		{Step: "draft", Outcome: "done", Next: "review", Count: 2},
		{Step: "review", Outcome: "done", Next: "done", Count: 1},
		{Step: "review", Outcome: "rework", Next: "draft", Count: 1},
	}
	if js(got.Routes) != js(wantRoutes) {
		t.Errorf("routes %s, want %s", js(got.Routes), js(wantRoutes))
	}
	wantQuestions := []insights.Question{
		{Step: "draft", Index: 0, Ask: "The letter answers the customer's question.", Pass: 1, Fail: 1, Unsure: 1, Returned: 1},
		{Step: "draft", Index: 1, Ask: "The tone is polite.", Pass: 3},
	}
	if js(got.Questions) != js(wantQuestions) {
		t.Errorf("questions %s, want %s", js(got.Questions), js(wantQuestions))
	}
	if len(got.Oldest) != 1 || got.Oldest[0].RunID != open.Run.ID || got.Oldest[0].Step != "draft" || got.Oldest[0].State != "ready" ||
		!got.Oldest[0].Overdue {
		t.Errorf("oldest open: %s", js(got.Oldest))
	}
	days := map[string][2]int{}
	for _, v := range []view{full, open, gone} {
		day := tt(v.Run.StartedAt).UTC().Format(time.DateOnly)
		days[day] = [2]int{days[day][0] + 1, days[day][1]}
	}
	for _, v := range []view{full, gone} {
		day := tt(v.Run.UpdatedAt).UTC().Format(time.DateOnly)
		days[day] = [2]int{days[day][0], days[day][1] + 1}
	}
	for _, day := range got.Days {
		if w := days[day.Day]; day.Started != w[0] || day.Ended != w[1] {
			t.Errorf("day %s: started %d, ended %d, want %v", day.Day, day.Started, day.Ended, w)
		}
	}
	if got.RecordedSince == nil || got.RecordedSince.After(tt(full.Run.StartedAt)) {
		t.Errorf("recorded since %v, after the runs began", got.RecordedSince)
	}
}

// near checks that durations d hold the median and 90th percentile of
// want (none: no durations), within two milliseconds.
func near(t *testing.T, name string, d insights.Durations, want ...time.Duration) {
	t.Helper()
	if d.N != len(want) {
		t.Errorf("%s: %d durations, want %d", name, d.N, len(want))
		return
	}
	if len(want) == 0 {
		if d.Median != nil || d.P90 != nil {
			t.Errorf("%s: %+v, want none", name, d)
		}
		return
	}
	median, p90 := percentile(want, 0.5), percentile(want, 0.9)
	if d.Median == nil || d.P90 == nil || math.Abs(*d.Median-median) > 0.002 || math.Abs(*d.P90-p90) > 0.002 {
		t.Errorf("%s: median %v p90 %v, want %.3f and %.3f", name, deref(d.Median), deref(d.P90), median, p90)
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// percentile is PostgreSQL's percentile_cont of ds, in seconds.
func percentile(ds []time.Duration, p float64) float64 {
	s := make([]float64, len(ds))
	for i, d := range ds {
		s[i] = d.Seconds()
	}
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	pos := p * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo+1 >= len(s) {
		return s[lo]
	}
	return s[lo] + (pos-float64(lo))*(s[lo+1]-s[lo])
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
