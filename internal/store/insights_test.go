package store_test

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/insights"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/interpreter"
)

func mins(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }

func minsp(n int) *time.Time { t := mins(n); return &t }

func publishAttempts(t *testing.T, b bundle, r store.RunRow, attempts ...interpreter.Attempt) {
	t.Helper()
	if _, err := b.store.PublishRun(b.ctx, nil, &r, nil, nil, attempts...); err != nil {
		t.Fatal(err)
	}
}

type storedAttempt struct {
	State, Outcome string
	Claims, Rev    int64
}

func readAttempt(t *testing.T, b bundle, org, runID, step string, seq int64) storedAttempt {
	t.Helper()
	var a storedAttempt
	var outcome *string
	err := b.store.Pool().QueryRow(b.ctx, `SELECT state, outcome, claims, rev FROM step_attempts
		WHERE org = $1 AND run_id = $2 AND step_id = $3 AND attempt = $4`, org, runID, step, seq).Scan(&a.State, &outcome, &a.Claims, &a.Rev)
	if err != nil {
		t.Fatal(err)
	}
	if outcome != nil {
		a.Outcome = *outcome
	}
	return a
}

// Attempts are written with the run's row, each guarded by its rev: an
// older write changes nothing, the same rev again overwrites (a workflow
// task run again), and they are written even when the row is not newer.
func TestPublishRunWritesAttemptsByRev(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := run("r_1", 3, t0, `{}`)
	a := interpreter.Attempt{StepID: "draft", Seq: 1, Kind: interpreter.KindAgent, State: interpreter.StepClaimed, ReadyAt: t0, ClaimedAt: minsp(1), Claims: 1, Rev: 4}
	publishAttempts(t, b, r, a)
	if got := readAttempt(t, b, org, "r_1", "draft", 1); got != (storedAttempt{State: "claimed", Claims: 1, Rev: 4}) {
		t.Fatalf("first write: %+v", got)
	}
	older := a
	older.Claims, older.Rev, older.State = 0, 3, interpreter.StepReady
	publishAttempts(t, b, r, older)
	if got := readAttempt(t, b, org, "r_1", "draft", 1); got.Rev != 4 || got.Claims != 1 {
		t.Fatalf("an older write overwrote: %+v", got)
	}
	// The same seq again (the row does not apply), a newer attempt rev.
	ended := a
	ended.State, ended.EndedAt, ended.Outcome, ended.EndedBy, ended.Rev = "", minsp(5), interpreter.AttemptDone, interpreter.ByAgent, 6
	publishAttempts(t, b, r, ended)
	if got := readAttempt(t, b, org, "r_1", "draft", 1); got != (storedAttempt{State: "ended", Outcome: "done", Claims: 1, Rev: 6}) {
		t.Fatalf("a newer attempt with the same row: %+v", got)
	}
	again := ended
	again.Claims = 2
	publishAttempts(t, b, r, again)
	if got := readAttempt(t, b, org, "r_1", "draft", 1); got.Claims != 2 {
		t.Fatalf("the same rev again did not overwrite: %+v", got)
	}
}

// insightsData publishes runs with known attempts: every figure of
// Insights has a value worked out by hand in TestInsightsFigures.
func insightsData(t *testing.T, b bundle) {
	t.Helper()
	row := func(org, id string, started time.Time, state, outcome, mode string, updated time.Time) store.RunRow {
		r := run(id, 100, started, `{}`)
		r.Org, r.Process, r.State, r.Outcome, r.Mode, r.UpdatedAt = org, "letters", state, outcome, mode, updated
		return r
	}
	agent, approve := interpreter.KindAgent, interpreter.KindApprove
	checks := func(cs ...interpreter.AttemptCheck) []interpreter.AttemptCheck { return cs }
	res := func(vs ...interpreter.Verdict) []interpreter.Verdict { return vs }
	pass, fail, unsure := interpreter.VerdictPass, interpreter.VerdictFail, interpreter.VerdictUnsure

	// r1 ended: drafted by the agent after two refusals and a failed
	// check, sent back by the reviewer, drafted again by a person after an
	// unsure check, approved.
	publishAttempts(t, b, row(org, "r1", t0, "ended", "sent", "live", mins(60)),
		interpreter.Attempt{StepID: "draft", Seq: 1, Kind: agent, ReadyAt: t0, ClaimedAt: minsp(2), EndedAt: minsp(10),
			Outcome: interpreter.AttemptDone, EndedBy: interpreter.ByAgent, Next: "review", Claims: 1, NotAccepted: 2,
			Checks: checks(interpreter.AttemptCheck{Verdict: fail, Results: res(fail, pass)}, interpreter.AttemptCheck{Verdict: pass, Results: res(pass, pass)}), Rev: 1},
		interpreter.Attempt{StepID: "review", Seq: 5, Kind: approve, ReadyAt: mins(10), EndedAt: minsp(30),
			Outcome: interpreter.AttemptRework, EndedBy: interpreter.ByPerson, Next: "draft", Rev: 2},
		interpreter.Attempt{StepID: "draft", Seq: 7, Kind: agent, ReadyAt: mins(30), ClaimedAt: minsp(34), EscalatedAt: minsp(35), EndedAt: minsp(50),
			Outcome: interpreter.AttemptDone, EndedBy: interpreter.ByPerson, Next: "review", Claims: 1, Escalations: 1,
			Checks: checks(interpreter.AttemptCheck{Verdict: unsure, Results: res(unsure, pass), Decision: "completed"}), Rev: 3},
		interpreter.Attempt{StepID: "review", Seq: 9, Kind: approve, ReadyAt: mins(50), EndedAt: minsp(60),
			Outcome: interpreter.AttemptDone, EndedBy: interpreter.ByPerson, Next: "done", Rev: 4})
	// r2 open: its draft claimed twice, a lease ran out, overdue.
	publishAttempts(t, b, row(org, "r2", mins(5), "active", "", "live", mins(65)),
		interpreter.Attempt{StepID: "draft", Seq: 1, Kind: agent, State: interpreter.StepClaimed, ReadyAt: mins(5), ClaimedAt: minsp(6),
			Due: minsp(65), OverdueAt: minsp(65), Claims: 2, LeaseExpiries: 1, Rev: 5})
	// r3 cancelled while its draft was ready.
	publishAttempts(t, b, row(org, "r3", mins(10), "cancelled", "", "live", mins(20)),
		interpreter.Attempt{StepID: "draft", Seq: 1, Kind: agent, ReadyAt: mins(10), EndedAt: minsp(20),
			Outcome: interpreter.AttemptCancelled, EndedBy: interpreter.ByPerson, Rev: 1})
	// A test run, and another organization's run: neither counts.
	for _, r := range []store.RunRow{row(org, "r4", mins(1), "active", "", "test", mins(1)), row("o_other", "r5", mins(1), "active", "", "live", mins(1))} {
		publishAttempts(t, b, r, interpreter.Attempt{StepID: "draft", Seq: 1, Kind: agent, State: interpreter.StepReady, ReadyAt: mins(1), Rev: 1})
	}
}

func f(v float64) *float64 { return &v }

func TestInsightsFigures(t *testing.T) {
	t.Parallel()
	b := setup(t)
	insightsData(t, b)
	now := mins(120)
	in, err := b.store.Insights(b.ctx, org, "letters", &store.InsightsOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if in.RecordedSince == nil || in.Since != now.Add(-30*24*time.Hour) || in.Until != now {
		t.Fatalf("window %v–%v, recorded since %v", in.Since, in.Until, in.RecordedSince)
	}
	wantRuns := insights.Runs{Started: 3, Ended: 2, Open: 1,
		Duration: insights.Durations{N: 2, Median: f(2100), P90: f(3300)},
		Outcomes: []insights.OutcomeCount{
			{Outcome: "cancelled", Count: 1, Duration: insights.Durations{N: 1, Median: f(600), P90: f(600)}},
			{Outcome: "sent", Count: 1, Duration: insights.Durations{N: 1, Median: f(3600), P90: f(3600)}},
		}}
	if js(in.Runs) != js(wantRuns) {
		t.Errorf("runs:\n got %s\nwant %s", js(in.Runs), js(wantRuns))
	}
	oldest := mins(5)
	wantSteps := []insights.Step{{
		Step: "draft", Kind: "agent", Attempts: 4, Ended: 3,
		ReadyToClaimed:     insights.Durations{N: 3, Median: f(120), P90: f(216)},
		ClaimedToDone:      insights.Durations{N: 1, Median: f(480), P90: f(480)},
		EscalatedToDecided: insights.Durations{N: 1, Median: f(900), P90: f(900)},
		Done:               2, DoneByAgent: 1, DoneByPerson: 1, TakenOver: 1, Cancelled: 1, Escalated: 1,
		NotAccepted: 2, LeaseExpiries: 1, Overdue: 1,
		AgentShare: 0.5, PersonShare: 0.5, TakenOverShare: 0.5, NotAcceptedPerAttempt: 0.5,
		Open: insights.Open{Claimed: 1, Overdue: 1, Oldest: &oldest, OldestAge: f(6900)},
	}, {
		Step: "review", Kind: "approve", Attempts: 2, Ended: 2,
		ReadyToDecided: insights.Durations{N: 2, Median: f(900), P90: f(1140)},
		Done:           1, DoneByPerson: 1, Rework: 1, PersonShare: 1, ReworkRate: 0.5,
	}}
	if js(in.Steps) != js(wantSteps) {
		t.Errorf("steps:\n got %s\nwant %s", js(in.Steps), js(wantSteps))
	}
	wantRoutes := []insights.Route{
		{Step: "draft", Outcome: "cancelled", Next: "", Count: 1},
		{Step: "draft", Outcome: "done", Next: "review", Count: 2},
		{Step: "review", Outcome: "done", Next: "done", Count: 1},
		{Step: "review", Outcome: "rework", Next: "draft", Count: 1},
	}
	if !reflect.DeepEqual(in.Routes, wantRoutes) {
		t.Errorf("routes:\n got %+v\nwant %+v", in.Routes, wantRoutes)
	}
	wantQuestions := []insights.Question{
		{Step: "draft", Index: 0, Pass: 1, Fail: 1, Unsure: 1, Completed: 1},
		{Step: "draft", Index: 1, Pass: 3},
	}
	if !reflect.DeepEqual(in.Questions, wantQuestions) {
		t.Errorf("questions:\n got %+v\nwant %+v", in.Questions, wantQuestions)
	}
	due := mins(65)
	wantOldest := []insights.OpenItem{{RunID: "r2", Step: "draft", State: "claimed", ReadyAt: mins(5), Due: &due, Overdue: true}}
	if js(in.Oldest) != js(wantOldest) {
		t.Errorf("oldest:\n got %+v\nwant %+v", in.Oldest, wantOldest)
	}
	if d := in.Days[6]; len(in.Days) != 7 || d != (insights.Day{Day: "2026-10-06", Started: 3, Ended: 2}) || in.Days[0].Day != "2026-09-30" {
		t.Errorf("days: %+v", in.Days)
	}

	// The other organization sees its own run only.
	other, err := b.store.Insights(b.ctx, "o_other", "letters", &store.InsightsOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if other.Runs.Started != 1 || other.Runs.Ended != 0 || len(other.Steps) != 1 || other.Steps[0].Attempts != 1 || other.Steps[0].Open.Ready != 1 {
		t.Errorf("the other organization: %s", js(other))
	}
	// A window that ends before anything began counts nothing.
	empty, err := b.store.Insights(b.ctx, org, "letters", &store.InsightsOptions{Now: t0, Since: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if empty.Runs.Started != 0 || empty.Runs.Ended != 0 || len(empty.Routes) != 0 || len(empty.Questions) != 0 {
		t.Errorf("an empty window: %s", js(empty))
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The counters the triggers keep for whole days count what the rows of a
// window's edges count, after inserts and updates alike; and the
// histograms' medians and 90th percentiles are within 5% of the exact
// ones.
func TestInsightsEdgesCountAsCounters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	insightsData(t, b)
	// r2's draft ends: an update of an attempt and of a run's row.
	r2 := run("r2", 101, mins(5), `{}`)
	r2.Process, r2.State, r2.Outcome, r2.UpdatedAt = "letters", "ended", "sent", mins(70)
	publishAttempts(t, b, r2, interpreter.Attempt{StepID: "draft", Seq: 1, Kind: interpreter.KindAgent, ReadyAt: mins(5), ClaimedAt: minsp(6),
		EndedAt: minsp(70), Outcome: interpreter.AttemptDone, EndedBy: interpreter.ByAgent, Next: "review", Due: minsp(65), OverdueAt: minsp(65),
		Claims: 2, LeaseExpiries: 1, Rev: 6})
	report := func(now time.Time, exactUpTo int) *insights.Report {
		in, err := b.store.Insights(b.ctx, org, "letters", &store.InsightsOptions{Now: now, ExactUpTo: exactUpTo})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	figures := func(in *insights.Report) string {
		return js([]any{in.Runs, in.Steps, in.Routes, in.Questions})
	}
	edge := report(mins(120), 0)            // every row in the window's last day: counted from the rows
	whole := report(t0.AddDate(0, 0, 3), 0) // every row in a whole day: read from the counters
	if figures(edge) != figures(whole) {
		t.Fatalf("from the rows:\n%s\nfrom the counters:\n%s", figures(edge), figures(whole))
	}
	// Windows that begin at 09:30, after r1's first draft, r2 and r3
	// began: their rows counted directly (a short window in one day), a
	// day's counters less the rows outside the window (a long window in
	// one day), and the first day's counters less the rows before 09:30.
	part := func(now time.Time, exactUpTo int) *insights.Report {
		in, err := b.store.Insights(b.ctx, org, "letters", &store.InsightsOptions{Now: now, Since: now.Sub(mins(30)), ExactUpTo: exactUpTo})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	for _, exactUpTo := range []int{0, -1} {
		direct := part(mins(120), exactUpTo)
		if direct.Runs.Started != 0 || direct.Runs.Ended != 2 || direct.Step("draft").Attempts != 1 || direct.Step("review").Attempts != 1 {
			t.Fatalf("from 09:30: %s", figures(direct))
		}
		for _, now := range []time.Time{mins(13 * 60), t0.AddDate(0, 0, 3)} {
			if got := part(now, exactUpTo); figures(got) != figures(direct) {
				t.Fatalf("from 09:30 to %v:\n%s\ncounted directly:\n%s", now, figures(got), figures(direct))
			}
		}
	}
	if edge.Runs.Ended != 3 || edge.Step("draft").DoneByAgent != 2 || edge.Step("draft").Open.Total() != 0 {
		t.Fatalf("after the update: %s", figures(edge))
	}
	for _, now := range []time.Time{mins(120), t0.AddDate(0, 0, 3)} {
		approx := report(now, -1)
		pairs := [][2]insights.Durations{{edge.Runs.Duration, approx.Runs.Duration}}
		for _, s := range edge.Steps {
			a := approx.Step(s.Step)
			pairs = append(pairs, [2]insights.Durations{s.ReadyToClaimed, a.ReadyToClaimed}, [2]insights.Durations{s.ClaimedToDone, a.ClaimedToDone},
				[2]insights.Durations{s.ReadyToDecided, a.ReadyToDecided}, [2]insights.Durations{s.EscalatedToDecided, a.EscalatedToDecided})
		}
		for _, p := range pairs {
			exact, h := p[0], p[1]
			if exact.N != h.N || (exact.N == 0) != (h.Median == nil) {
				t.Fatalf("histogram %+v against exact %+v", h, exact)
			}
			if exact.N > 0 && (math.Abs(*h.Median-*exact.Median) > 0.05**exact.Median || math.Abs(*h.P90-*exact.P90) > 0.05**exact.P90) {
				t.Errorf("histogram %v / %v against exact %v / %v", *h.Median, *h.P90, *exact.Median, *exact.P90)
			}
		}
	}
}

// A database whose counters migration 019's triggers kept gets them
// rebuilt in migration 020's names, from its rows: its report is the
// report of a database migrated before anything was written.
func TestInsightsCountersUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old, err := store.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(old.Close)
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Pool().Exec(ctx, `CREATE TABLE schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version > 19 {
			break
		}
		if _, err := old.Pool().Exec(ctx, m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if _, err := old.Pool().Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	upgraded := bundle{ctx: ctx, store: old}
	insightsData(t, upgraded)
	var oldNames int
	if err := old.Pool().QueryRow(ctx, `SELECT count(*) FROM insights_counters WHERE name = 'attempts'`).Scan(&oldNames); err != nil || oldNames == 0 {
		t.Fatalf("migration 019's counters: %d, %v", oldNames, err)
	}
	if applied, err := old.Migrate(ctx); err != nil || len(applied) != len(ms)-19 {
		t.Fatalf("applied %v, %v", applied, err)
	}
	fresh := setup(t)
	insightsData(t, fresh)
	for _, now := range []time.Time{mins(120), t0.AddDate(0, 0, 3)} {
		want, err := fresh.store.Insights(ctx, org, "letters", &store.InsightsOptions{Now: now, ExactUpTo: -1})
		if err != nil {
			t.Fatal(err)
		}
		got, err := upgraded.store.Insights(ctx, org, "letters", &store.InsightsOptions{Now: now, ExactUpTo: -1})
		if err != nil {
			t.Fatal(err)
		}
		got.RecordedSince = want.RecordedSince // when each applied migration 015
		if js(got) != js(want) {
			t.Fatalf("upgraded:\n%s\nmigrated first:\n%s", js(got), js(want))
		}
	}
	var counters [2]string
	for i, b := range []bundle{upgraded, fresh} {
		err := b.store.Pool().QueryRow(ctx, `SELECT string_agg(org || '/' || process || '/' || day || '/' || step_id || '/' || name || '/' || shard || '=' || n, ' '
			ORDER BY org, process, day, step_id, name, shard) FROM insights_counters WHERE n <> 0`).Scan(&counters[i])
		if err != nil {
			t.Fatal(err)
		}
	}
	if counters[0] != counters[1] {
		t.Fatalf("counters upgraded:\n%s\nmigrated first:\n%s", counters[0], counters[1])
	}
}
