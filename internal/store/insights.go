package store

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-run/baton/internal/insights"
)

// The insights queries. $1 org, $2 process, $3 the window's start (the
// first of the seven days for sqlInsightsDays), $4 its end (now).
const (
	// sqlInsightsRecordedSince is when the record of step attempts began.
	sqlInsightsRecordedSince = `
SELECT applied_at FROM schema_migrations WHERE name LIKE '%\_step\_attempts.sql' ORDER BY version LIMIT 1`

	// sqlInsightsStarted counts the runs started in the window and those
	// open now, through the (org, process, state, started_at) index.
	sqlInsightsStarted = `
SELECT (SELECT count(*) FROM runs WHERE org = $1 AND process = $2 AND mode = 'live' AND started_at >= $3 AND started_at < $4),
       (SELECT count(*) FROM runs WHERE org = $1 AND process = $2 AND mode = 'live' AND state IN ('active', 'waiting'))`

	// sqlInsightsEnded is the runs ended in the window, by outcome (the
	// row with a NULL outcome is all of them): how many, and the median
	// and 90th percentile of their durations. An ended run's row is not
	// written after its end, so its updated_at is when it ended.
	sqlInsightsEnded = `
SELECT coalesce(outcome, state), grouping(coalesce(outcome, state)) = 1, count(*),
       percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY extract(epoch FROM updated_at - started_at))
FROM runs
WHERE org = $1 AND process = $2 AND mode = 'live' AND state IN ('ended', 'cancelled')
  AND updated_at >= $3 AND updated_at < $4
GROUP BY GROUPING SETS ((coalesce(outcome, state)), ())`

	// sqlInsightsDays counts the starts and ends of the last seven days.
	sqlInsightsDays = `
SELECT 's', (started_at AT TIME ZONE 'UTC')::date, count(*) FROM runs
WHERE org = $1 AND process = $2 AND mode = 'live' AND started_at >= $3 AND started_at < $4
GROUP BY 2
UNION ALL
SELECT 'e', (updated_at AT TIME ZONE 'UTC')::date, count(*) FROM runs
WHERE org = $1 AND process = $2 AND mode = 'live' AND state IN ('ended', 'cancelled')
  AND updated_at >= $3 AND updated_at < $4
GROUP BY 2`

	// sqlInsightsSteps is each step's figures over the attempts begun in
	// the window.
	sqlInsightsSteps = `
SELECT step_id, min(kind), count(*), count(outcome),
  percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY extract(epoch FROM claimed_at - ready_at))
      FILTER (WHERE claimed_at IS NOT NULL),
  count(*) FILTER (WHERE claimed_at IS NOT NULL),
  percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY extract(epoch FROM ended_at - claimed_at))
      FILTER (WHERE outcome = 'done' AND ended_by = 'agent' AND claimed_at IS NOT NULL),
  count(*) FILTER (WHERE outcome = 'done' AND ended_by = 'agent' AND claimed_at IS NOT NULL),
  percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY extract(epoch FROM ended_at - ready_at))
      FILTER (WHERE ended_by = 'person' AND kind IN ('task', 'approve') AND outcome <> 'cancelled'),
  count(*) FILTER (WHERE ended_by = 'person' AND kind IN ('task', 'approve') AND outcome <> 'cancelled'),
  percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY extract(epoch FROM ended_at - escalated_at))
      FILTER (WHERE ended_by = 'person' AND escalated_at IS NOT NULL AND outcome <> 'cancelled'),
  count(*) FILTER (WHERE ended_by = 'person' AND escalated_at IS NOT NULL AND outcome <> 'cancelled'),
  count(*) FILTER (WHERE outcome = 'done'),
  count(*) FILTER (WHERE outcome = 'done' AND ended_by = 'agent'),
  count(*) FILTER (WHERE outcome = 'done' AND ended_by = 'person'),
  count(*) FILTER (WHERE outcome = 'done' AND ended_by = 'server'),
  count(*) FILTER (WHERE outcome = 'done' AND ended_by = 'person' AND escalated_at IS NOT NULL),
  count(*) FILTER (WHERE outcome = 'rework'),
  count(*) FILTER (WHERE outcome = 'rejected'),
  count(*) FILTER (WHERE outcome = 'failed'),
  count(*) FILTER (WHERE outcome = 'cancelled'),
  count(*) FILTER (WHERE escalations > 0),
  count(*) FILTER (WHERE returns > 0),
  coalesce(sum(returns), 0), coalesce(sum(not_accepted), 0), coalesce(sum(lease_expiries), 0),
  count(*) FILTER (WHERE overdue_at IS NOT NULL)
FROM step_attempts
WHERE org = $1 AND process = $2 AND mode = 'live' AND ready_at >= $3 AND ready_at < $4
GROUP BY step_id`

	// sqlInsightsRoutes counts where the ended attempts of the window went.
	sqlInsightsRoutes = `
SELECT step_id, outcome, coalesce(next, ''), count(*)
FROM step_attempts
WHERE org = $1 AND process = $2 AND mode = 'live' AND ready_at >= $3 AND ready_at < $4
  AND outcome IS NOT NULL
GROUP BY 1, 2, 3`

	// sqlInsightsQuestions counts each checked question's results, with
	// the decision on the check they were part of, over the window.
	sqlInsightsQuestions = `
SELECT a.step_id, q.i - 1, q.result, c.value->>'verdict', coalesce((c.value->>'advisory')::boolean, false),
       coalesce(c.value->>'decision', ''), count(*)
FROM step_attempts a
CROSS JOIN LATERAL jsonb_array_elements(a.checks) AS c
CROSS JOIN LATERAL jsonb_array_elements_text(c.value->'results') WITH ORDINALITY AS q(result, i)
WHERE a.org = $1 AND a.process = $2 AND a.mode = 'live' AND a.ready_at >= $3 AND a.ready_at < $4
  AND a.checks IS NOT NULL
GROUP BY 1, 2, 3, 4, 5, 6`

	// sqlInsightsOpen is each step's open work now, by state.
	sqlInsightsOpen = `
SELECT step_id, min(kind), state, count(*), count(*) FILTER (WHERE overdue_at IS NOT NULL), min(ready_at)
FROM step_attempts
WHERE org = $1 AND process = $2 AND outcome IS NULL AND mode = 'live'
GROUP BY step_id, state`

	// sqlInsightsOldest is the ten oldest open steps, with their work
	// items.
	sqlInsightsOldest = `
SELECT a.run_id, a.step_id, a.state, coalesce(w.work_item_id, ''), a.ready_at, a.due, a.overdue_at IS NOT NULL
FROM step_attempts a
LEFT JOIN work w ON w.org = a.org AND w.run_id = a.run_id AND w.step_id = a.step_id
WHERE a.org = $1 AND a.process = $2 AND a.outcome IS NULL AND a.mode = 'live'
ORDER BY a.ready_at, a.run_id, a.step_id
LIMIT 10`
)

// insightsQuery is one statement of Insights with its arguments.
type insightsQuery struct {
	name, sql string
	args      []any
}

// insightsQueries are the statements of Insights, in the order it reads
// their answers.
func insightsQueries(org, process string, since, now, dayStart time.Time) []insightsQuery {
	return []insightsQuery{
		{"recorded since", sqlInsightsRecordedSince, nil},
		{"runs started", sqlInsightsStarted, []any{org, process, since, now}},
		{"runs ended", sqlInsightsEnded, []any{org, process, since, now}},
		{"days", sqlInsightsDays, []any{org, process, dayStart, now}},
		{"steps", sqlInsightsSteps, []any{org, process, since, now}},
		{"routes", sqlInsightsRoutes, []any{org, process, since, now}},
		{"questions", sqlInsightsQuestions, []any{org, process, since, now}},
		{"open now", sqlInsightsOpen, []any{org, process}},
		{"oldest open", sqlInsightsOldest, []any{org, process}},
	}
}

// InsightsOptions choose the window of Insights.
type InsightsOptions struct {
	// Since is the window's length, back from Now. Default 30 days.
	Since time.Duration
	// Now is the window's end. Default time.Now().
	Now time.Time
}

// window is the window's start, its end and the first of its last seven
// days.
func (opts *InsightsOptions) window() (since, now, dayStart time.Time) {
	var o InsightsOptions
	if opts != nil {
		o = *opts
	}
	if o.Since <= 0 {
		o.Since = 30 * 24 * time.Hour
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	now = o.Now.UTC().Truncate(time.Microsecond)
	return now.Add(-o.Since), now, time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -6)
}

// Insights computes one process's figures in an organization, in one
// round trip. A process with no runs has every count 0.
func (s *Store) Insights(ctx context.Context, org, process string, opts *InsightsOptions) (*insights.Report, error) {
	since, now, dayStart := opts.window()
	in := &insights.Report{Org: org, Process: process, Since: since, Until: now,
		Steps: []insights.Step{}, Routes: []insights.Route{}, Questions: []insights.Question{}, Oldest: []insights.OpenItem{},
		Runs: insights.Runs{Outcomes: []insights.OutcomeCount{}}}

	b := &pgx.Batch{}
	for _, q := range insightsQueries(org, process, since, now, dayStart) {
		b.Queue(q.sql, q.args...)
	}
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	if err := readInsights(in, br, dayStart); err != nil {
		return nil, fmt.Errorf("store: insights of %s: %w", process, err)
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("store: insights of %s: %w", process, err)
	}
	in.Complete()
	return in, nil
}

// read reads the batch's answers in the order Insights queued them.
func readInsights(in *insights.Report, br pgx.BatchResults, dayStart time.Time) error {
	var since time.Time
	switch err := br.QueryRow().Scan(&since); err {
	case nil:
		in.RecordedSince = &since
	case pgx.ErrNoRows:
	default:
		return err
	}
	if err := br.QueryRow().Scan(&in.Runs.Started, &in.Runs.Open); err != nil {
		return err
	}
	if err := readEnded(in, br); err != nil {
		return err
	}
	if err := readDays(in, br, dayStart); err != nil {
		return err
	}
	steps := map[string]*insights.Step{}
	if err := readSteps(in, br, steps); err != nil {
		return err
	}
	if err := readRoutes(in, br); err != nil {
		return err
	}
	if err := readQuestions(in, br); err != nil {
		return err
	}
	if err := readOpen(in, br, steps); err != nil {
		return err
	}
	for _, id := range sortedKeys(steps) {
		in.Steps = append(in.Steps, *steps[id])
	}
	return readOldest(in, br)
}

func readEnded(in *insights.Report, br pgx.BatchResults) error {
	rows, _ := br.Query()
	var outcome *string
	var all bool
	var n int
	var pct []float64
	_, err := pgx.ForEachRow(rows, []any{&outcome, &all, &n, &pct}, func() error {
		d := durations(n, pct)
		if all {
			in.Runs.Ended, in.Runs.Duration = n, d
			return nil
		}
		in.Runs.Outcomes = append(in.Runs.Outcomes, insights.OutcomeCount{Outcome: *outcome, Count: n, Duration: d})
		return nil
	})
	sort.Slice(in.Runs.Outcomes, func(i, j int) bool {
		a, b := in.Runs.Outcomes[i], in.Runs.Outcomes[j]
		return a.Count > b.Count || (a.Count == b.Count && a.Outcome < b.Outcome)
	})
	return err
}

func readDays(in *insights.Report, br pgx.BatchResults, dayStart time.Time) error {
	for i := range 7 {
		in.Days = append(in.Days, insights.Day{Day: dayStart.AddDate(0, 0, i).Format(time.DateOnly)})
	}
	rows, _ := br.Query()
	var kind string
	var day time.Time
	var n int
	_, err := pgx.ForEachRow(rows, []any{&kind, &day, &n}, func() error {
		i := int(day.Sub(dayStart).Hours() / 24)
		if i < 0 || i >= len(in.Days) {
			return nil
		}
		if kind == "s" {
			in.Days[i].Started = n
		} else {
			in.Days[i].Ended = n
		}
		return nil
	})
	return err
}

func readSteps(in *insights.Report, br pgx.BatchResults, steps map[string]*insights.Step) error {
	rows, _ := br.Query()
	var f insights.Step
	var claimPct, workPct, decidePct, escPct []float64
	var claimN, workN, decideN, escN int
	_, err := pgx.ForEachRow(rows, []any{&f.Step, &f.Kind, &f.Attempts, &f.Ended,
		&claimPct, &claimN, &workPct, &workN, &decidePct, &decideN, &escPct, &escN,
		&f.Done, &f.DoneByAgent, &f.DoneByPerson, &f.DoneByServer, &f.TakenOver,
		&f.Rework, &f.Rejected, &f.Failed, &f.Cancelled, &f.Escalated, &f.Returned,
		&f.Returns, &f.NotAccepted, &f.LeaseExpiries, &f.Overdue}, func() error {
		f.ReadyToClaimed, f.ClaimedToDone = durations(claimN, claimPct), durations(workN, workPct)
		f.ReadyToDecided, f.EscalatedToDecided = durations(decideN, decidePct), durations(escN, escPct)
		c := f
		steps[f.Step] = &c
		return nil
	})
	return err
}

func readRoutes(in *insights.Report, br pgx.BatchResults) error {
	rows, _ := br.Query()
	var r insights.Route
	_, err := pgx.ForEachRow(rows, []any{&r.Step, &r.Outcome, &r.Next, &r.Count}, func() error {
		in.Routes = append(in.Routes, r)
		return nil
	})
	sort.Slice(in.Routes, func(i, j int) bool {
		a, b := in.Routes[i], in.Routes[j]
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		if a.Outcome != b.Outcome {
			return a.Outcome < b.Outcome
		}
		return a.Next < b.Next
	})
	return err
}

func readQuestions(in *insights.Report, br pgx.BatchResults) error {
	rows, _ := br.Query()
	type key struct {
		step  string
		index int
	}
	qs := map[key]*insights.Question{}
	var step, result, verdict, decision string
	var index, n int
	var advisory bool
	_, err := pgx.ForEachRow(rows, []any{&step, &index, &result, &verdict, &advisory, &decision, &n}, func() error {
		k := key{step, index}
		q := qs[k]
		if q == nil {
			q = &insights.Question{Step: step, Index: index}
			qs[k] = q
		}
		switch result {
		case "pass":
			q.Pass += n
		case "fail":
			q.Fail += n
		case "unsure":
			q.Unsure += n
			if verdict != "unsure" || advisory {
				return nil // no person was asked
			}
			switch decision {
			case "completed":
				q.Completed += n
			case "returned":
				q.Returned += n
			case "failed":
				q.Failed += n
			default:
				q.Undecided += n
			}
		}
		return nil
	})
	for _, q := range qs {
		in.Questions = append(in.Questions, *q)
	}
	sort.Slice(in.Questions, func(i, j int) bool {
		a, b := in.Questions[i], in.Questions[j]
		return a.Step < b.Step || (a.Step == b.Step && a.Index < b.Index)
	})
	return err
}

func readOpen(in *insights.Report, br pgx.BatchResults, steps map[string]*insights.Step) error {
	rows, _ := br.Query()
	var step, kind, state string
	var n, overdue int
	var oldest time.Time
	_, err := pgx.ForEachRow(rows, []any{&step, &kind, &state, &n, &overdue, &oldest}, func() error {
		f := steps[step]
		if f == nil {
			f = &insights.Step{Step: step, Kind: kind}
			steps[step] = f
		}
		o := &f.Open
		switch state {
		case "ready":
			o.Ready += n
		case "claimed":
			o.Claimed += n
		default:
			o.Waiting += n
		}
		o.Overdue += overdue
		if o.Oldest == nil || oldest.Before(*o.Oldest) {
			t := oldest
			o.Oldest = &t
			age := in.Until.Sub(t).Seconds()
			o.OldestAge = &age
		}
		return nil
	})
	return err
}

func readOldest(in *insights.Report, br pgx.BatchResults) error {
	rows, _ := br.Query()
	var it insights.OpenItem
	_, err := pgx.ForEachRow(rows, []any{&it.RunID, &it.Step, &it.State, &it.WorkItemID, &it.ReadyAt, &it.Due, &it.Overdue}, func() error {
		in.Oldest = append(in.Oldest, it)
		return nil
	})
	return err
}

// durations are n durations' median and 90th percentile from
// percentile_cont's array (NULL when n is 0).
func durations(n int, pct []float64) insights.Durations {
	d := insights.Durations{N: n}
	if n > 0 && len(pct) == 2 {
		median, p90 := pct[0], pct[1]
		d.Median, d.P90 = &median, &p90
	}
	return d
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sqlInsightsProcesses lists an organization's published processes with
// their open and overdue steps and the runs started since $2.
const sqlInsightsProcesses = `
SELECT p.name,
  (SELECT count(*) FROM step_attempts a
    WHERE a.org = p.org AND a.process = p.name AND a.outcome IS NULL AND a.mode = 'live'),
  (SELECT count(*) FROM step_attempts a
    WHERE a.org = p.org AND a.process = p.name AND a.outcome IS NULL AND a.mode = 'live' AND a.overdue_at IS NOT NULL),
  (SELECT count(*) FROM runs r
    WHERE r.org = p.org AND r.process = p.name AND r.mode = 'live' AND r.started_at >= $2)
FROM processes p
WHERE p.org = $1 AND EXISTS (SELECT 1 FROM process_versions v WHERE v.org = p.org AND v.name = p.name)
ORDER BY p.name`

// InsightsProcesses lists the organization's published processes, by
// name, with what is open now and the runs started in the last since
// (default 30 days).
func (s *Store) InsightsProcesses(ctx context.Context, org string, since time.Duration) ([]insights.ProcessSummary, error) {
	if since <= 0 {
		since = 30 * 24 * time.Hour
	}
	rows, _ := s.pool.Query(ctx, sqlInsightsProcesses, org, time.Now().Add(-since))
	var p insights.ProcessSummary
	out := []insights.ProcessSummary{}
	_, err := pgx.ForEachRow(rows, []any{&p.Process, &p.Open, &p.Overdue, &p.Started}, func() error {
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: insights processes: %w", err)
	}
	return out, nil
}

// sqlOpenSteps counts the open step attempts of live runs by organization,
// process, step and state, through the partial index of open attempts.
const sqlOpenSteps = `
SELECT org, process, step_id, state, count(*)
FROM step_attempts
WHERE outcome IS NULL AND mode = 'live'
GROUP BY org, process, step_id, state
ORDER BY org, process, step_id, state`

// OpenSteps counts the open step attempts of every organization's live
// runs, by process, step and state.
func (s *Store) OpenSteps(ctx context.Context) ([]insights.OpenCount, error) {
	rows, _ := s.pool.Query(ctx, sqlOpenSteps)
	var c insights.OpenCount
	out := []insights.OpenCount{}
	_, err := pgx.ForEachRow(rows, []any{&c.Org, &c.Process, &c.Step, &c.State, &c.Count}, func() error {
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: open steps: %w", err)
	}
	return out, nil
}
