package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// MaxLimit is the largest page a listing returns.
const MaxLimit = 1000

// WorkFilter narrows a work listing.
type WorkFilter struct {
	Process string // only work of this process; "" for any
}

// RunFilter narrows ListRuns.
type RunFilter struct {
	Process string // only runs of this process; "" for any
	State   string // only runs in this state; "" for any
	// Inputs, a JSON object, keeps runs whose inputs have each of its
	// fields with an equal value; nil or {} for any. Equality is JSONB's:
	// numbers compare by value (48000 equals 48000.0 and 4.8e4), objects
	// by their keys and values regardless of order, arrays element by
	// element in order; a null field matches only an input that is null,
	// not one that is absent.
	Inputs json.RawMessage
	// Parent keeps the children of this run (baton-subprocess-1); "" for
	// any.
	Parent string
}

// Listing queries are built from these parts; each listing's WHERE clause
// names only the filters it was given, so the planner picks the matching
// index for each combination. They run as unnamed statements
// (QueryExecModeCacheDescribe), planned for each call's values: a cached
// generic plan cannot tell a rare input value from a common one and, for
// the inputs filter, walked all runs in started_at order instead of using
// the GIN index (18 ms instead of under 1 ms at 10,000 runs).
const (
	sqlListAgentWork = `
SELECT ` + workColumns + `
FROM work
WHERE org = @org AND kind = 'agent'`

	// Items assigned to the person, and to each group, come from their
	// own ordered index scans, at most a page each, so a page costs the
	// same however many items the groups hold; the few items that further
	// groups may decide (also_groups) from a scan of their partial index.
	// UNION drops an item reached twice. sqlFilters marks where a
	// listing's filters go.
	sqlListPersonWork = `
SELECT ` + workColumns + `
FROM (
    SELECT w.* FROM unnest(@groups::text[]) AS g(id)
    CROSS JOIN LATERAL (
        SELECT * FROM work
        WHERE org = @org AND assigned_group = g.id` + sqlFilters + `
        ORDER BY ready_since, run_id, step_id
        LIMIT @limit
    ) w
    UNION
    (SELECT * FROM work
     WHERE org = @org AND assigned_person = @person` + sqlFilters + `
     ORDER BY ready_since, run_id, step_id
     LIMIT @limit)
    UNION
    (SELECT * FROM work
     WHERE org = @org AND also_groups IS NOT NULL AND also_groups && @groups::text[]` + sqlFilters + `
     ORDER BY ready_since, run_id, step_id
     LIMIT @limit)
) work
WHERE true`
	sqlFilters = "{{filters}}"

	sqlWorkProcess = `
  AND process = @process`
	sqlWorkAfter = `
  AND (ready_since, run_id, step_id) > (@after_time, @after_run, @after_step)`
	sqlWorkOrder = `
ORDER BY ready_since, run_id, step_id
LIMIT @limit`

	sqlListRuns = `
SELECT ` + runColumns + `
FROM runs r
WHERE org = @org`
	sqlRunsProcess = `
  AND process = @process`
	sqlRunsState = `
  AND state = @state`
	sqlRunsAfter = `
  AND (started_at, run_id) > (@after_time, @after_run)`
	// A parent's children come from their partial index; the other
	// filters check each child in place, inputs as sqlInputsMatch does.
	sqlRunsParent = `
  AND parent_run_id = @parent`
	sqlRunsInputs = `
  AND r.inputs @> @inputs::jsonb
  AND NOT EXISTS (SELECT 1 FROM jsonb_each(@inputs::jsonb) f WHERE r.inputs -> f.key IS DISTINCT FROM f.value)`
	sqlRunsOrder = `
ORDER BY started_at, run_id
LIMIT @limit`

	// A listing filtered on inputs walks run_inputs (see migration 012),
	// which holds what never changes of a run with inputs: @> finds
	// candidates through the GIN index, or the oldest-first walk checks
	// each row's inputs in place, whichever the planner finds cheaper for
	// the values given. Containment is looser than equality for nested
	// values ({"a":[1,2]} contains {"a":[1]}), so each field is then
	// compared exactly. Without a state filter the page is cut there, and
	// runs is read for its rows alone; the state, which changes, is in
	// runs, so a state filter joins before the page is cut.
	sqlInputsMatch = `
FROM run_inputs i
WHERE i.org = @org
  AND i.inputs @> @inputs::jsonb
  AND NOT EXISTS (SELECT 1 FROM jsonb_each(@inputs::jsonb) f WHERE i.inputs -> f.key IS DISTINCT FROM f.value)`
	sqlInputsProcess = `
  AND i.process = @process`
	sqlInputsAfter = `
  AND (i.started_at, i.run_id) > (@after_time, @after_run)`
	sqlInputsOrder = `
ORDER BY i.started_at, i.run_id
LIMIT @limit`
	sqlListRunsByInputs = `
SELECT ` + runColumns + `
FROM (SELECT i.org, i.run_id, i.started_at` + sqlInputsMatch + sqlFilters + sqlInputsOrder + `) i
JOIN runs r ON r.org = i.org AND r.run_id = i.run_id
ORDER BY i.started_at, i.run_id`
	sqlListRunsByInputsState = `
SELECT ` + runColumns + `
FROM (SELECT i.org, i.run_id, i.started_at` + sqlInputsMatch + sqlFilters + `) i
JOIN runs r ON r.org = i.org AND r.run_id = i.run_id
WHERE r.state = @state` + sqlInputsOrder
)

// ListAgentWork lists ready agent steps, oldest first (by ready-since, then
// run and step id), limit at a time. cursor is "" for the first page, else
// the next cursor a previous page returned; next is "" after the last page.
func (s *Store) ListAgentWork(ctx context.Context, org string, f WorkFilter, limit int, cursor string) (items []WorkRow, next string, err error) {
	return s.listWork(ctx, sqlListAgentWork, pgx.NamedArgs{"org": org}, f, limit, cursor)
}

// ListPersonWork lists the open work items assigned to the person with this
// email or to any of groups, oldest first, paged like ListAgentWork. Emails
// and group ids compare exactly: callers normalize them.
func (s *Store) ListPersonWork(ctx context.Context, org, email string, groups []string, f WorkFilter, limit int, cursor string) (items []WorkRow, next string, err error) {
	if groups == nil {
		groups = []string{}
	}
	args := pgx.NamedArgs{"org": org, "person": email, "groups": groups}
	return s.listWork(ctx, sqlListPersonWork, args, f, limit, cursor)
}

func (s *Store) listWork(ctx context.Context, base string, args pgx.NamedArgs, f WorkFilter, limit int, cur string) ([]WorkRow, string, error) {
	if err := checkLimit(limit); err != nil {
		return nil, "", err
	}
	after, ok, err := decodeCursor(cur, cursorWork)
	if err != nil {
		return nil, "", err
	}
	var filters strings.Builder
	if f.Process != "" {
		filters.WriteString(sqlWorkProcess)
		args["process"] = f.Process
	}
	if ok {
		filters.WriteString(sqlWorkAfter)
		args["after_time"], args["after_run"], args["after_step"] = after.time(), after.Run, after.Step
	}
	args["limit"] = limit + 1 // one more tells whether there is a next page
	var sql string
	if strings.Contains(base, sqlFilters) {
		sql = strings.ReplaceAll(base, sqlFilters, filters.String()) + sqlWorkOrder
	} else {
		sql = base + filters.String() + sqlWorkOrder
	}

	rows, _ := s.pool.Query(ctx, sql, pgx.QueryExecModeCacheDescribe, args)
	items, err := pgx.CollectRows(rows, scanWork)
	if err != nil {
		return nil, "", fmt.Errorf("store: list work: %w", err)
	}
	if len(items) <= limit {
		return items, "", nil
	}
	items = items[:limit]
	last := items[limit-1]
	next := cursor{Kind: cursorWork, Time: last.ReadySince.UnixMicro(), Run: last.RunID, Step: last.StepID}
	return items, next.encode(), nil
}

// ListRuns lists runs, oldest started first (then by run id), limit at a
// time, paged like ListAgentWork.
func (s *Store) ListRuns(ctx context.Context, org string, f RunFilter, limit int, cur string) (items []RunRow, next string, err error) {
	if err := checkLimit(limit); err != nil {
		return nil, "", err
	}
	after, ok, err := decodeCursor(cur, cursorRuns)
	if err != nil {
		return nil, "", err
	}
	args := pgx.NamedArgs{"org": org, "limit": limit + 1} // one more tells whether there is a next page
	byInputs := false
	if in := bytes.TrimSpace(f.Inputs); len(in) > 0 {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(in, &fields); err != nil || fields == nil {
			return nil, "", fmt.Errorf("store: list runs: Inputs must be a JSON object")
		}
		if byInputs = len(fields) > 0; byInputs {
			args["inputs"] = in
		}
	}
	process, afterSQL := sqlRunsProcess, sqlRunsAfter
	if byInputs && f.Parent == "" {
		process, afterSQL = sqlInputsProcess, sqlInputsAfter
	}
	var filters strings.Builder
	if f.Process != "" {
		filters.WriteString(process)
		args["process"] = f.Process
	}
	if ok {
		filters.WriteString(afterSQL)
		args["after_time"], args["after_run"] = after.time(), after.Run
	}
	if f.State != "" {
		args["state"] = f.State
	}
	var sql string
	switch {
	case f.Parent != "":
		args["parent"] = f.Parent
		sql = sqlListRuns + sqlRunsParent
		if f.State != "" {
			sql += sqlRunsState
		}
		if byInputs {
			sql += sqlRunsInputs
		}
		sql += filters.String() + sqlRunsOrder
	case !byInputs && f.State != "":
		sql = sqlListRuns + sqlRunsState + filters.String() + sqlRunsOrder
	case !byInputs:
		sql = sqlListRuns + filters.String() + sqlRunsOrder
	case f.State != "":
		sql = strings.ReplaceAll(sqlListRunsByInputsState, sqlFilters, filters.String())
	default:
		sql = strings.ReplaceAll(sqlListRunsByInputs, sqlFilters, filters.String())
	}

	rows, _ := s.pool.Query(ctx, sql, pgx.QueryExecModeCacheDescribe, args)
	items, err = pgx.CollectRows(rows, scanRun)
	if err != nil {
		return nil, "", fmt.Errorf("store: list runs: %w", err)
	}
	if len(items) <= limit {
		return items, "", nil
	}
	items = items[:limit]
	last := items[limit-1]
	c := cursor{Kind: cursorRuns, Time: last.StartedAt.UnixMicro(), Run: last.RunID}
	return items, c.encode(), nil
}

func checkLimit(limit int) error {
	if limit < 1 || limit > MaxLimit {
		return fmt.Errorf("store: limit %d out of range 1–%d", limit, MaxLimit)
	}
	return nil
}
