package store

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-run/baton/internal/insights"
)

// The insights queries. $1 org, $2 process. A window's figures are the
// per-day counters of whole UTC days (insights_counters, migrations 019
// and 020), with what the rows of part of its first and last days count
// added or taken away (window), computed from those rows as the SQL
// functions that fill the counters compute them; its medians and 90th percentiles are exact while the window
// is small (InsightsOptions.ExactUpTo) and otherwise read from the
// counters' histograms.
const (
	// sqlInsightsRecordedSince is when the record of step attempts began.
	sqlInsightsRecordedSince = `
SELECT applied_at FROM schema_migrations WHERE name LIKE '%\_step\_attempts.sql' ORDER BY version LIMIT 1`

	// sqlInsightsCounters sums the window's counters: those of the whole
	// days [$3, $4), and what the rows of two spans of time count, [$5, $6)
	// times $7 and [$8, $9) times $10 (+1 or -1: a span is either a partial
	// day the counters leave out, or the part of a day they hold that the
	// window does not; newWindow chooses). A span counts attempts that
	// became ready in it and runs that started or ended in it. Its attempts
	// are counted in groups, not one by one through
	// insights_attempt_counters, which costs tens of microseconds a row;
	// they count what it counts (TestInsightsEdgesCountAsCounters).
	sqlInsightsCounters = `
WITH e AS MATERIALIZED (
    SELECT step_id, kind, outcome, ended_by, next, ready_at, claimed_at, escalated_at, ended_at, overdue_at,
           escalations, returns, not_accepted, lease_expiries, checks,
           CASE WHEN ready_at >= $5 AND ready_at < $6 THEN $7::int ELSE $10::int END AS s
    FROM step_attempts
    WHERE org = $1 AND process = $2 AND mode = 'live'
      AND (ready_at >= $5 AND ready_at < $6 OR ready_at >= $8 AND ready_at < $9)
), f AS (
    SELECT step_id,
           sum(s) FILTER (WHERE outcome = 'done' AND ended_by = 'person' AND escalated_at IS NOT NULL) AS taken_over,
           sum(s) FILTER (WHERE escalations > 0) AS escalated, sum(s) FILTER (WHERE returns > 0) AS returned,
           sum(returns * s) AS returns, sum(not_accepted * s) AS not_accepted, sum(lease_expiries * s) AS lease_expiries,
           sum(s) FILTER (WHERE overdue_at IS NOT NULL) AS overdue
    FROM e GROUP BY 1
)
SELECT step_id, name, sum(n)::bigint FROM (
    SELECT step_id, name, n FROM insights_counters
    WHERE org = $1 AND process = $2 AND day >= $3::date AND day < $4::date
    UNION ALL
    SELECT step_id, 'g:' || kind || ':' || coalesce(outcome, '') || ':' || coalesce(ended_by, '') || ':' || coalesce(next, ''), sum(s)
    FROM e GROUP BY 1, 2
    UNION ALL
    SELECT f.step_id, v.name, v.n FROM f, LATERAL (VALUES
        ('taken_over', f.taken_over), ('escalated', f.escalated), ('returned', f.returned), ('returns', f.returns),
        ('not_accepted', f.not_accepted), ('lease_expiries', f.lease_expiries), ('overdue', f.overdue)) AS v(name, n)
    WHERE v.n <> 0
    UNION ALL
    SELECT step_id, 'claim:' || insights_bucket(extract(epoch FROM claimed_at - ready_at)), sum(s)
    FROM e WHERE claimed_at IS NOT NULL GROUP BY 1, 2
    UNION ALL
    SELECT step_id, 'work:' || insights_bucket(extract(epoch FROM ended_at - claimed_at)), sum(s)
    FROM e WHERE outcome = 'done' AND ended_by = 'agent' AND claimed_at IS NOT NULL GROUP BY 1, 2
    UNION ALL
    SELECT step_id, 'decide:' || insights_bucket(extract(epoch FROM ended_at - ready_at)), sum(s)
    FROM e WHERE ended_by = 'person' AND kind IN ('task', 'approve') AND outcome <> 'cancelled' GROUP BY 1, 2
    UNION ALL
    SELECT step_id, 'esc:' || insights_bucket(extract(epoch FROM ended_at - escalated_at)), sum(s)
    FROM e WHERE ended_by = 'person' AND outcome <> 'cancelled' AND escalated_at IS NOT NULL GROUP BY 1, 2
    UNION ALL
    SELECT e.step_id, q.name, sum(e.s) FROM e, insights_check_counters(e.checks) AS q
    WHERE e.checks IS NOT NULL GROUP BY 1, 2
    UNION ALL
    SELECT '', 'started', coalesce(sum(CASE WHEN started_at >= $5 AND started_at < $6 THEN $7::int ELSE $10::int END), 0) FROM runs
    WHERE org = $1 AND process = $2 AND mode = 'live'
      AND (started_at >= $5 AND started_at < $6 OR started_at >= $8 AND started_at < $9)
    UNION ALL
    SELECT '', v.name, sum(r.s) FROM (
        SELECT outcome, seconds, CASE WHEN ended_at >= $5 AND ended_at < $6 THEN $7::int ELSE $10::int END AS s
        FROM insights_run_ends
        WHERE org = $1 AND process = $2
          AND (ended_at >= $5 AND ended_at < $6 OR ended_at >= $8 AND ended_at < $9)) AS r,
        LATERAL (VALUES ('ended:' || r.outcome), ('dur:' || insights_bucket(r.seconds) || ':' || r.outcome)) AS v(name)
    GROUP BY 1, 2
) AS x
GROUP BY 1, 2`

	// sqlInsightsDays counts the starts and ends of the seven days from
	// $3 to $4 (dates, today), from their counters, less what the rows
	// count from now ($5) to tomorrow ($6): usually nothing, but a window
	// that ends in the past leaves out the rest of its day.
	sqlInsightsDays = `
SELECT day, name, sum(n)::bigint FROM insights_counters
WHERE org = $1 AND process = $2 AND day >= $3::date AND day <= $4::date AND step_id = ''
  AND (name = 'started' OR name LIKE 'ended:%')
GROUP BY 1, 2
UNION ALL
SELECT $4::date, 'started', -count(*) FROM runs
WHERE org = $1 AND process = $2 AND mode = 'live' AND started_at >= $5 AND started_at < $6
UNION ALL
SELECT $4::date, 'ended:', -count(*) FROM insights_run_ends
WHERE org = $1 AND process = $2 AND ended_at >= $5 AND ended_at < $6`

	// sqlInsightsOpenRuns counts the runs open now.
	sqlInsightsOpenRuns = `
SELECT count(*) FROM runs WHERE org = $1 AND process = $2 AND mode = 'live' AND state IN ('active', 'waiting')`

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

	// sqlInsightsExactSteps is each step's exact median and 90th
	// percentile of its durations over the attempts begun in the window
	// [$3, $4), as the counters define them (insights_attempt_counters).
	sqlInsightsExactSteps = `
SELECT step_id,
  percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY extract(epoch FROM claimed_at - ready_at))
      FILTER (WHERE claimed_at IS NOT NULL),
  percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY extract(epoch FROM ended_at - claimed_at))
      FILTER (WHERE outcome = 'done' AND ended_by = 'agent' AND claimed_at IS NOT NULL),
  percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY extract(epoch FROM ended_at - ready_at))
      FILTER (WHERE ended_by = 'person' AND kind IN ('task', 'approve') AND outcome <> 'cancelled'),
  percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY extract(epoch FROM ended_at - escalated_at))
      FILTER (WHERE ended_by = 'person' AND escalated_at IS NOT NULL AND outcome <> 'cancelled')
FROM step_attempts
WHERE org = $1 AND process = $2 AND mode = 'live' AND ready_at >= $3 AND ready_at < $4
GROUP BY step_id`

	// sqlInsightsExactRuns is the exact median and 90th percentile of
	// the durations of the runs ended in the window, by outcome (the row
	// with a NULL outcome is all of them).
	sqlInsightsExactRuns = `
SELECT outcome, grouping(outcome) = 1,
       percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY seconds)
FROM insights_run_ends
WHERE org = $1 AND process = $2 AND ended_at >= $3 AND ended_at < $4
GROUP BY GROUPING SETS ((outcome), ())`
)

// insightsQuery is one statement of Insights with its arguments.
type insightsQuery struct {
	name, sql string
	args      []any
}

// window is the span [since, now) of an insights report and how it
// splits: the counters of whole UTC days [firstDay, lastDay), and two
// spans of the rows, each added or taken away. At each end of the window
// whose day is partial, the counters either leave that day out and the
// rows of its part in the window are added, or hold all of it and the
// rows of its part outside the window are taken away, whichever spans
// less time before the clock: rows are not ready before they are written,
// so with the window ending now its last day costs nothing.
type window struct {
	since, now, dayStart     time.Time
	firstDay, lastDay, today time.Time
	spans                    [2]span
}

// span is a part of the window's edge days counted from the rows: those
// in [from, to), each counting sign times.
type span struct {
	from, to time.Time
	sign     int
}

func midnight(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// newWindow splits [since, now); clock is the time now, after which no
// row is written.
func newWindow(since, now, clock time.Time) window {
	w := window{since: since, now: now, today: midnight(now)}
	w.dayStart = w.today.AddDate(0, 0, -6)
	// cost is how long a span of rows is, before the clock.
	cost := func(from, to time.Time) time.Duration {
		if to.After(clock) {
			to = clock
		}
		return max(to.Sub(from), 0)
	}
	first, last := midnight(since), w.today
	if first.Equal(last) { // within one day
		next := first.AddDate(0, 0, 1)
		if cost(since, now) <= cost(first, since)+cost(now, next) {
			w.firstDay, w.lastDay = first, first
			w.spans = [2]span{{since, now, 1}, {now, now, 1}}
		} else {
			w.firstDay, w.lastDay = first, next
			w.spans = [2]span{{first, since, -1}, {now, next, -1}}
		}
		return w
	}
	w.firstDay, w.lastDay = first, last
	w.spans = [2]span{{since, since, 1}, {now, now, 1}}
	if !since.Equal(first) {
		next := first.AddDate(0, 0, 1)
		if cost(since, next) <= cost(first, since) {
			w.firstDay, w.spans[0] = next, span{since, next, 1}
		} else {
			w.spans[0] = span{first, since, -1}
		}
	}
	if !now.Equal(last) {
		next := last.AddDate(0, 0, 1)
		if cost(last, now) < cost(now, next) {
			w.spans[1] = span{last, now, 1}
		} else {
			w.lastDay, w.spans[1] = next, span{now, next, -1}
		}
	}
	return w
}

// insightsQueries are the statements of Insights, in the order it reads
// their answers.
func insightsQueries(org, process string, w window) []insightsQuery {
	return []insightsQuery{
		{"recorded since", sqlInsightsRecordedSince, nil},
		{"counters", sqlInsightsCounters, []any{org, process, w.firstDay, w.lastDay,
			w.spans[0].from, w.spans[0].to, w.spans[0].sign, w.spans[1].from, w.spans[1].to, w.spans[1].sign}},
		{"days", sqlInsightsDays, []any{org, process, w.dayStart, w.today, w.now, w.today.AddDate(0, 0, 1)}},
		{"open runs", sqlInsightsOpenRuns, []any{org, process}},
		{"open now", sqlInsightsOpen, []any{org, process}},
		{"oldest open", sqlInsightsOldest, []any{org, process}},
	}
}

// exactQueries are the statements of a small window's exact medians and
// 90th percentiles: of the steps' durations, of the runs'.
func exactQueries(org, process string, w window) []insightsQuery {
	return []insightsQuery{
		{"exact step durations", sqlInsightsExactSteps, []any{org, process, w.since, w.now}},
		{"exact run durations", sqlInsightsExactRuns, []any{org, process, w.since, w.now}},
	}
}

// DefaultExactUpTo is how many attempts begun (runs ended) in a window
// its step (run) durations are computed exactly from, at most; a larger
// window reads them from the counters' histograms.
const DefaultExactUpTo = 10_000

// InsightsOptions choose the window of Insights.
type InsightsOptions struct {
	// Since is the window's length, back from Now. Default 30 days.
	Since time.Duration
	// Now is the window's end. Default time.Now().
	Now time.Time
	// ExactUpTo is the most attempts begun in the window for which the
	// steps' medians and 90th percentiles are computed exactly from the
	// attempts, and the most runs ended in it for the runs' durations;
	// beyond, they are read from histograms, within 5% (docs/insights.md).
	// Default DefaultExactUpTo; negative: never exact.
	ExactUpTo int
}

// window is the options' window.
func (opts *InsightsOptions) window() window {
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
	now := o.Now.UTC().Truncate(time.Microsecond)
	return newWindow(now.Add(-o.Since), now, time.Now())
}

func (opts *InsightsOptions) exactUpTo() int {
	if opts == nil || opts.ExactUpTo == 0 {
		return DefaultExactUpTo
	}
	return opts.ExactUpTo
}

// Insights computes one process's figures in an organization, in one
// round trip, and a second one for the exact durations of a small
// window. A process with no runs has every count 0.
func (s *Store) Insights(ctx context.Context, org, process string, opts *InsightsOptions) (*insights.Report, error) {
	w := opts.window()
	in := &insights.Report{Org: org, Process: process, Since: w.since, Until: w.now,
		Steps: []insights.Step{}, Routes: []insights.Route{}, Questions: []insights.Question{}, Oldest: []insights.OpenItem{},
		Runs: insights.Runs{Outcomes: []insights.OutcomeCount{}}}
	var c counters
	err := s.batch(ctx, insightsQueries(org, process, w), func(br pgx.BatchResults) error {
		return readInsights(in, br, w, &c)
	})
	if err != nil {
		return nil, fmt.Errorf("store: insights of %s: %w", process, err)
	}
	steps, runs := c.apply(in)
	limit := opts.exactUpTo()
	if limit >= 0 && (steps <= limit || runs <= limit) {
		err := s.batch(ctx, exactQueries(org, process, w), func(br pgx.BatchResults) error {
			if err := readExactSteps(in, br, steps <= limit); err != nil {
				return err
			}
			return readExactRuns(in, br, runs <= limit)
		})
		if err != nil {
			return nil, fmt.Errorf("store: insights of %s: %w", process, err)
		}
	}
	in.Complete()
	return in, nil
}

// batch sends qs in one batch and reads the answers with read.
func (s *Store) batch(ctx context.Context, qs []insightsQuery, read func(pgx.BatchResults) error) error {
	b := &pgx.Batch{}
	for _, q := range qs {
		b.Queue(q.sql, q.args...)
	}
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	if err := read(br); err != nil {
		return err
	}
	return br.Close()
}

// read reads the batch's answers in the order Insights queued them.
func readInsights(in *insights.Report, br pgx.BatchResults, w window, c *counters) error {
	var since time.Time
	switch err := br.QueryRow().Scan(&since); err {
	case nil:
		in.RecordedSince = &since
	case pgx.ErrNoRows:
	default:
		return err
	}
	if err := c.read(br); err != nil {
		return err
	}
	if err := readDays(in, br, w.dayStart); err != nil {
		return err
	}
	if err := br.QueryRow().Scan(&in.Runs.Open); err != nil {
		return err
	}
	c.open = map[string]*insights.Step{}
	if err := readOpen(in, br, c.open); err != nil {
		return err
	}
	return readOldest(in, br)
}

func readDays(in *insights.Report, br pgx.BatchResults, dayStart time.Time) error {
	for i := range 7 {
		in.Days = append(in.Days, insights.Day{Day: dayStart.AddDate(0, 0, i).Format(time.DateOnly)})
	}
	rows, _ := br.Query()
	var day time.Time
	var name string
	var n int
	_, err := pgx.ForEachRow(rows, []any{&day, &name, &n}, func() error {
		i := int(day.Sub(dayStart).Hours() / 24)
		if i < 0 || i >= len(in.Days) {
			return nil
		}
		if name == "started" {
			in.Days[i].Started += n
		} else {
			in.Days[i].Ended += n
		}
		return nil
	})
	return err
}

// counters are a window's counters, summed by step ("" for the runs'
// own) and name (migrations 019 and 020 list the names), and the steps' open work
// now.
type counters struct {
	byStep map[string]map[string]int
	open   map[string]*insights.Step
}

func (c *counters) read(br pgx.BatchResults) error {
	c.byStep = map[string]map[string]int{}
	rows, _ := br.Query()
	var step, name string
	var n int
	_, err := pgx.ForEachRow(rows, []any{&step, &name, &n}, func() error {
		if n == 0 {
			return nil
		}
		m := c.byStep[step]
		if m == nil {
			m = map[string]int{}
			c.byStep[step] = m
		}
		m[name] += n
		return nil
	})
	return err
}

// apply sets the report's runs, steps, routes and questions from the
// counters, the durations from their histograms, and returns how many
// attempts began and how many runs ended in the window.
func (c *counters) apply(in *insights.Report) (attempts, ended int) {
	runs := c.byStep[""]
	in.Runs.Started = runs["started"]
	all := histogram{}
	byOutcome := map[string]histogram{}
	for name, n := range runs {
		if outcome, ok := strings.CutPrefix(name, "ended:"); ok {
			in.Runs.Outcomes = append(in.Runs.Outcomes, insights.OutcomeCount{Outcome: outcome, Count: n})
			in.Runs.Ended += n
		} else if rest, ok := strings.CutPrefix(name, "dur:"); ok {
			b, outcome, _ := strings.Cut(rest, ":")
			bucket, err := strconv.Atoi(b)
			if err != nil {
				continue
			}
			if byOutcome[outcome] == nil {
				byOutcome[outcome] = histogram{}
			}
			byOutcome[outcome][bucket] += n
			all[bucket] += n
		}
	}
	in.Runs.Duration = all.durations()
	for i := range in.Runs.Outcomes {
		o := &in.Runs.Outcomes[i]
		o.Duration = byOutcome[o.Outcome].durations()
	}
	sort.Slice(in.Runs.Outcomes, func(i, j int) bool {
		a, b := in.Runs.Outcomes[i], in.Runs.Outcomes[j]
		return a.Count > b.Count || (a.Count == b.Count && a.Outcome < b.Outcome)
	})

	ids := map[string]bool{}
	for id := range c.byStep {
		if id != "" {
			ids[id] = true
		}
	}
	for id := range c.open {
		ids[id] = true
	}
	type question struct {
		step  string
		index int
	}
	qs := map[question]*insights.Question{}
	for _, id := range sortedKeys(ids) {
		f := c.step(id)
		attempts += f.Attempts
		routes := map[[2]string]int{}
		for name, n := range c.byStep[id] {
			if g, ok := attemptGroup(name); ok && g.outcome != "" {
				routes[[2]string{g.outcome, g.next}] += n
			} else if rest, ok := strings.CutPrefix(name, "q:"); ok {
				// q:INDEX:RESULT:VERDICT:ADVISORY:DECISION
				p := strings.SplitN(rest, ":", 5)
				index, err := strconv.Atoi(p[0])
				if len(p) != 5 || err != nil {
					continue
				}
				k := question{id, index}
				q := qs[k]
				if q == nil {
					q = &insights.Question{Step: id, Index: index}
					qs[k] = q
				}
				q.Count(p[1], p[2], p[3] == "true", p[4], n)
			}
		}
		for r, n := range routes {
			if n != 0 {
				in.Routes = append(in.Routes, insights.Route{Step: id, Outcome: r[0], Next: r[1], Count: n})
			}
		}
		in.Steps = append(in.Steps, f)
	}
	for _, q := range qs {
		in.Questions = append(in.Questions, *q)
	}
	sort.Slice(in.Questions, func(i, j int) bool {
		a, b := in.Questions[i], in.Questions[j]
		return a.Step < b.Step || (a.Step == b.Step && a.Index < b.Index)
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
	return attempts, in.Runs.Ended
}

// group is what a counter g:KIND:OUTCOME:BY:NEXT counts: the attempts
// of a kind that ended with an outcome, by someone, and went on to a step
// ("" for each while open; migration 020).
type group struct{ kind, outcome, by, next string }

// attemptGroup reads a counter's name as a group, if it is one.
func attemptGroup(name string) (group, bool) {
	rest, ok := strings.CutPrefix(name, "g:")
	if !ok {
		return group{}, false
	}
	p := strings.SplitN(rest, ":", 4)
	if len(p) != 4 {
		return group{}, false
	}
	return group{p[0], p[1], p[2], p[3]}, true
}

// step is one step's figures from its counters and its open work.
func (c *counters) step(id string) insights.Step {
	m := c.byStep[id]
	f := insights.Step{Step: id}
	if o := c.open[id]; o != nil {
		f.Kind, f.Open = o.Kind, o.Open
	}
	kinds := map[string]bool{}
	outcomes, doneBy := map[string]int{}, map[string]int{}
	hist := map[string]histogram{}
	for name, n := range m {
		if n == 0 {
			continue
		}
		if g, ok := attemptGroup(name); ok {
			kinds[g.kind] = true
			f.Attempts += n
			if g.outcome != "" {
				f.Ended += n
				outcomes[g.outcome] += n
				if g.outcome == "done" {
					doneBy[g.by] += n
				}
			}
			continue
		}
		if measure, b, ok := strings.Cut(name, ":"); ok && (measure == "claim" || measure == "work" || measure == "decide" || measure == "esc") {
			if bucket, err := strconv.Atoi(b); err == nil {
				if hist[measure] == nil {
					hist[measure] = histogram{}
				}
				hist[measure][bucket] += n
			}
		}
	}
	if len(kinds) > 0 {
		f.Kind = sortedKeys(kinds)[0]
	}
	f.ReadyToClaimed, f.ClaimedToDone = hist["claim"].durations(), hist["work"].durations()
	f.ReadyToDecided, f.EscalatedToDecided = hist["decide"].durations(), hist["esc"].durations()
	f.Done, f.DoneByAgent, f.DoneByPerson, f.DoneByServer = outcomes["done"], doneBy["agent"], doneBy["person"], doneBy["server"]
	f.TakenOver = m["taken_over"]
	f.Rework, f.Rejected, f.Failed, f.Cancelled = outcomes["rework"], outcomes["rejected"], outcomes["failed"], outcomes["cancelled"]
	f.Escalated, f.Returned, f.Returns = m["escalated"], m["returned"], m["returns"]
	f.NotAccepted, f.LeaseExpiries, f.Overdue = m["not_accepted"], m["lease_expiries"], m["overdue"]
	return f
}

// histogram counts durations by bucket (insights_bucket in migration
// 019): bucket b holds [1 ms × 1.1^b, 1 ms × 1.1^(b+1)), bucket -1
// everything under 1 ms.
type histogram map[int]int

// value is the duration a bucket stands for: its geometric middle,
// within 5% of any duration in it (0 for bucket -1).
func bucketValue(b int) float64 {
	if b < 0 {
		return 0
	}
	return 0.001 * math.Pow(1.1, float64(b)+0.5)
}

// durations are the histogram's median and 90th percentile, as
// percentile_cont interpolates them, each order statistic taken as its
// bucket's value.
func (h histogram) durations() insights.Durations {
	n := 0
	buckets := make([]int, 0, len(h))
	for b, c := range h {
		if c > 0 {
			n += c
			buckets = append(buckets, b)
		}
	}
	d := insights.Durations{N: n}
	if n == 0 {
		return d
	}
	sort.Ints(buckets)
	// at is the value of the k-th smallest duration, from 0.
	at := func(k int) float64 {
		for _, b := range buckets {
			if k < h[b] {
				return bucketValue(b)
			}
			k -= h[b]
		}
		return bucketValue(buckets[len(buckets)-1])
	}
	pct := func(p float64) *float64 {
		r := p * float64(n-1)
		k := int(math.Floor(r))
		v := at(k)
		if k+1 < n {
			v += (r - float64(k)) * (at(k+1) - v)
		}
		return &v
	}
	d.Median, d.P90 = pct(0.5), pct(0.9)
	return d
}

// readExactSteps sets the steps' medians and 90th percentiles to the
// exact ones when use, keeping their counts.
func readExactSteps(in *insights.Report, br pgx.BatchResults, use bool) error {
	rows, _ := br.Query()
	var step string
	var claim, work, decide, esc []float64
	_, err := pgx.ForEachRow(rows, []any{&step, &claim, &work, &decide, &esc}, func() error {
		f := in.Step(step)
		if !use || f == nil {
			return nil
		}
		f.ReadyToClaimed, f.ClaimedToDone = durations(f.ReadyToClaimed.N, claim), durations(f.ClaimedToDone.N, work)
		f.ReadyToDecided, f.EscalatedToDecided = durations(f.ReadyToDecided.N, decide), durations(f.EscalatedToDecided.N, esc)
		return nil
	})
	return err
}

// readExactRuns sets the runs' medians and 90th percentiles to the
// exact ones when use.
func readExactRuns(in *insights.Report, br pgx.BatchResults, use bool) error {
	rows, _ := br.Query()
	var outcome *string
	var all bool
	var pct []float64
	_, err := pgx.ForEachRow(rows, []any{&outcome, &all, &pct}, func() error {
		if !use {
			return nil
		}
		if all {
			in.Runs.Duration = durations(in.Runs.Duration.N, pct)
			return nil
		}
		for i := range in.Runs.Outcomes {
			if o := &in.Runs.Outcomes[i]; o.Outcome == *outcome {
				o.Duration = durations(o.Duration.N, pct)
			}
		}
		return nil
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
