package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-run/baton/interpreter"
)

// RunRow is a run in the read model: what list_runs shows.
type RunRow struct {
	Org       string
	RunID     string
	Process   string
	Version   int
	State     string
	Outcome   string          // "" while the run has none (NULL)
	Mode      string          // "live" or "test"
	Inputs    json.RawMessage // a JSON object; nil means {}
	StartedBy string
	StartedAt time.Time
	UpdatedAt time.Time
	// Seq is the run machine's sequence number of the state this row
	// shows. UpsertRun ignores a write whose Seq is not above the stored one.
	Seq int64
	// FinalView is the run view of an ended run, written once it ended;
	// nil while the run goes on. Read it with FinalView, not GetRun.
	FinalView json.RawMessage
	// Parent and ParentStep are the run and the process step that started
	// a child run (baton-subprocess-1); "" for a run start_run started.
	// Written with the run's first row, never changed.
	Parent, ParentStep string
}

// WorkKind says what a piece of open work is.
type WorkKind string

// The kinds of open work.
const (
	WorkAgent      WorkKind = "agent"      // a ready agent step
	WorkTask       WorkKind = "task"       // a task work item
	WorkApprove    WorkKind = "approve"    // an approval work item
	WorkEscalation WorkKind = "escalation" // an escalated agent step waiting on a person
)

// WorkRow is one piece of open work of a run: a ready agent step (Kind
// WorkAgent, no WorkItemID) or an open work item.
type WorkRow struct {
	// Org, RunID, Process, Version and Mode are the run's: UpsertRun fills
	// them from its RunRow and ignores what is set here.
	Org     string
	RunID   string
	Process string
	Version int
	Mode    string

	StepID     string
	WorkItemID string // "" for an agent step
	Kind       WorkKind
	ReadySince time.Time  // when the step became ready or the item opened
	Due        *time.Time // nil: no due time
	Overdue    bool
	// A work item is assigned to a group, a person (by email), or both.
	AssignedGroup  string
	AssignedPerson string
	// AlsoGroups are further groups that may decide the item and see it
	// in their listings (a tool-call approval with several approver
	// groups); nil for most.
	AlsoGroups []string
	// Handoff is what the previous attempt left (get_work's handoff); nil
	// for none.
	Handoff json.RawMessage
	// Item is the work item as get_run shows it, for person listings; nil
	// for an agent step.
	Item json.RawMessage
}

// sqlUpsertRun writes a run's row unless the stored one is newer. A run's
// inputs are set at its start and never change, so a later write keeps the
// stored value: inputs of more than about 2 KB live out of line (TOAST),
// and writing them again cost every write of such a run a new copy
// (BenchmarkUpsertRunLargeInputs: 32 KB of inputs took 0.71–0.78 ms and up
// to 3 KB of WAL a write; now 0.46–0.49 ms and 200–240 bytes).
const sqlUpsertRun = `
INSERT INTO runs (org, run_id, process, version, state, outcome, mode, inputs,
                  started_by, started_at, updated_at, seq, final_view, parent_run_id, parent_step)
VALUES ($1, $2, $3, $4, $5, NULLIF($6, ''), $7, $8, $9, $10, $11, $12, $13, NULLIF($14, ''), NULLIF($15, ''))
ON CONFLICT (org, run_id) DO UPDATE SET
    process = EXCLUDED.process, version = EXCLUDED.version, state = EXCLUDED.state,
    outcome = EXCLUDED.outcome, mode = EXCLUDED.mode,
    started_by = EXCLUDED.started_by, started_at = EXCLUDED.started_at,
    updated_at = EXCLUDED.updated_at, seq = EXCLUDED.seq, final_view = EXCLUDED.final_view
WHERE runs.seq < EXCLUDED.seq
   OR (runs.seq = EXCLUDED.seq AND runs.updated_at < EXCLUDED.updated_at)
RETURNING seq`

// sqlReplaceWork makes the run's work rows exactly those in $3 (a JSON array
// of workJSON): rows no longer present are deleted, the rest inserted or
// updated, except rows already as given, which it leaves alone: a write on
// one branch of a run with many open ones then writes one work row and its
// index entries, not all of them (BenchmarkPublishWideRun: 595 bytes of WAL
// a write against 1,739 when every row was rewritten). Reading those rows
// without a lock is safe, because the run's writers are serialized on its
// row, which this transaction's upsert holds. The parts touch disjoint
// rows, so they can share one statement. It acts only when the same
// transaction's upsert of the run's row applied.
const sqlReplaceWork = `
WITH new AS (
    SELECT * FROM jsonb_to_recordset($3::jsonb) AS w(
        step_id text, work_item_id text, kind text, ready_since timestamptz,
        due timestamptz, overdue boolean, assigned_group text, assigned_person text,
        also_groups text[], handoff jsonb, item jsonb)
), current AS (
    -- the run row this very transaction just wrote at seq $7
    SELECT 1 FROM runs WHERE org = $1 AND run_id = $2 AND seq = $7
      AND xmin = pg_current_xact_id()::xid
), gone AS (
    DELETE FROM work
    WHERE org = $1 AND run_id = $2 AND EXISTS (SELECT 1 FROM current)
      AND step_id NOT IN (SELECT step_id FROM new)
)
INSERT INTO work (org, run_id, step_id, work_item_id, kind, process, version, mode,
                  ready_since, due, overdue, assigned_group, assigned_person, also_groups, handoff, item)
SELECT $1, $2, step_id, work_item_id, kind, $4, $5, $6,
       ready_since, due, coalesce(overdue, false), assigned_group, assigned_person, also_groups, handoff, item
FROM new WHERE EXISTS (SELECT 1 FROM current)
  AND NOT EXISTS (
    -- a row as it already is is left alone: no new version, no lock
    SELECT 1 FROM work o
    WHERE o.org = $1 AND o.run_id = $2 AND o.step_id = new.step_id
      AND (o.work_item_id, o.kind, o.process, o.version, o.mode, o.ready_since, o.due, o.overdue,
           o.assigned_group, o.assigned_person, o.also_groups, o.handoff, o.item)
          IS NOT DISTINCT FROM
          (new.work_item_id, new.kind, $4, $5, $6, new.ready_since, new.due, coalesce(new.overdue, false),
           new.assigned_group, new.assigned_person, new.also_groups, new.handoff, new.item))
ON CONFLICT (org, run_id, step_id) DO UPDATE SET
    work_item_id = EXCLUDED.work_item_id, kind = EXCLUDED.kind,
    process = EXCLUDED.process, version = EXCLUDED.version, mode = EXCLUDED.mode,
    ready_since = EXCLUDED.ready_since, due = EXCLUDED.due, overdue = EXCLUDED.overdue,
    assigned_group = EXCLUDED.assigned_group, assigned_person = EXCLUDED.assigned_person,
    also_groups = EXCLUDED.also_groups, handoff = EXCLUDED.handoff, item = EXCLUDED.item`

// workJSON is a WorkRow as sqlReplaceWork reads it.
type workJSON struct {
	StepID         string          `json:"step_id"`
	WorkItemID     *string         `json:"work_item_id"`
	Kind           WorkKind        `json:"kind"`
	ReadySince     time.Time       `json:"ready_since"`
	Due            *time.Time      `json:"due"`
	Overdue        bool            `json:"overdue"`
	AssignedGroup  *string         `json:"assigned_group"`
	AssignedPerson *string         `json:"assigned_person"`
	AlsoGroups     []string        `json:"also_groups,omitempty"`
	Handoff        json.RawMessage `json:"handoff,omitempty"`
	Item           json.RawMessage `json:"item,omitempty"`
}

// UpsertRun writes a run's row and replaces its open work with work, unless
// the stored row already shows this or a later state (row.Seq < stored seq,
// or the same seq written at the same time or later): then it changes
// nothing and returns applied false. So a retried or late write never
// overwrites a newer one.
//
// The same seq written later does overwrite: the run's workflow writes its
// read model from inside a workflow task, and when Temporal loses that task
// (its server or its database failed before the task completed) the task
// runs again later and writes the same seq anew. Only the later attempt is
// what Temporal keeps; the earlier one never happened.
//
// It runs in its own transaction on q (a savepoint when q is a
// transaction; nil q means the store's pool). Concurrent writers for one
// run are serialized on the run's row.
//
// Times are stored with microsecond precision.
func (s *Store) UpsertRun(ctx context.Context, q Querier, row RunRow, work []WorkRow) (applied bool, err error) {
	return s.PublishRun(ctx, q, &row, work, nil)
}

// PublishRun is what a run writes after a change, in one round trip and one
// transaction: its row and open work as UpsertRun writes them (when row is
// not nil), and the requestId and answer of the write that changed it
// (when answer is not nil), recorded as RecordRunRequest does; an answer
// published with a row that applied replaces the answer an earlier
// attempt of the same workflow task recorded (see UpsertRun). When the
// requestId is another call's, it returns ErrRequestIDReused and stores
// nothing. The run's step attempts that changed (for insights) are written
// in the same transaction, each guarded by its own rev (sqlUpsertAttempts),
// so they are stored even when the row is not newer.
func (s *Store) PublishRun(ctx context.Context, q Querier, row *RunRow, work []WorkRow, answer *Request, attempts ...interpreter.Attempt) (applied bool, err error) {
	if row == nil {
		if answer == nil {
			return false, nil
		}
		return false, s.RecordRunRequest(ctx, q, *answer)
	}
	if row.Org == "" || row.RunID == "" {
		return false, fmt.Errorf("store: upsert run: Org and RunID are required")
	}
	inputs := row.Inputs
	if len(inputs) == 0 {
		inputs = json.RawMessage(`{}`)
	}
	ws := make([]workJSON, len(work))
	for i, w := range work {
		if w.StepID == "" {
			return false, fmt.Errorf("store: upsert run %s: work[%d].StepID is empty", row.RunID, i)
		}
		ws[i] = workJSON{
			StepID:         w.StepID,
			WorkItemID:     nullable(w.WorkItemID),
			Kind:           w.Kind,
			ReadySince:     w.ReadySince.Truncate(time.Microsecond),
			Overdue:        w.Overdue,
			AssignedGroup:  nullable(w.AssignedGroup),
			AssignedPerson: nullable(w.AssignedPerson),
			AlsoGroups:     w.AlsoGroups,
			Handoff:        w.Handoff,
			Item:           w.Item,
		}
		if w.Due != nil {
			d := w.Due.Truncate(time.Microsecond)
			ws[i].Due = &d
		}
	}
	workDoc, err := json.Marshal(ws)
	if err != nil {
		return false, fmt.Errorf("store: upsert run %s: encode work: %w", row.RunID, err)
	}

	// One round trip: statements sent together before one Sync run as
	// one implicit transaction (or in the caller's). The upsert locks the
	// run's row; the work statement then takes a fresh snapshot, so it sees
	// any work an earlier writer committed, and changes work only when the
	// upsert applied.
	b := &pgx.Batch{}
	b.Queue(sqlUpsertRun, row.Org, row.RunID, row.Process, row.Version,
		row.State, row.Outcome, row.Mode, inputs, row.StartedBy,
		row.StartedAt.Truncate(time.Microsecond), row.UpdatedAt.Truncate(time.Microsecond),
		row.Seq, finalView(row.FinalView), row.Parent, row.ParentStep)
	b.Queue(sqlReplaceWork, row.Org, row.RunID, workDoc, row.Process, row.Version, row.Mode, row.Seq)
	if answer != nil {
		if err := answer.check(); err != nil {
			return false, err
		}
		b.Queue(sqlRecordRunRequest, answer.Org, answer.RequestID, answer.Tool, answer.Digest, nullJSON(answer.Result), row.RunID, row.Seq)
	}
	withAttempts, err := queueAttempts(b, row, attempts)
	if err != nil {
		return false, err
	}
	br := s.q(q).SendBatch(ctx, b)
	var seq int64
	switch err = br.QueryRow().Scan(&seq); err {
	case nil:
		applied = true
	case pgx.ErrNoRows:
		err = nil // an older or repeated write: keep the stored one
	}
	if err == nil {
		_, err = br.Exec()
	}
	if err == nil && answer != nil {
		_, err = br.Exec()
	}
	if err == nil && withAttempts {
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if errors.Is(runRequestError("", err), ErrRequestIDReused) {
		return false, fmt.Errorf("store: upsert run %s: request %s: %w", row.RunID, answer.RequestID, ErrRequestIDReused)
	}
	if err != nil {
		return false, fmt.Errorf("store: upsert run %s: %w", row.RunID, err)
	}
	return applied, nil
}

const sqlGetRun = `
SELECT ` + runColumns + `
FROM runs r WHERE org = $1 AND run_id = $2`

func finalView(v json.RawMessage) any {
	if len(v) == 0 {
		return nil
	}
	return string(v)
}

const sqlFinalView = `SELECT final_view FROM runs WHERE org = $1 AND run_id = $2`

// FinalView returns the view an ended run was written with: nil while the
// run goes on, ErrNotFound when there is no such run.
func (s *Store) FinalView(ctx context.Context, org, runID string) (json.RawMessage, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, sqlFinalView, org, runID).Scan(&v)
	if err == pgx.ErrNoRows {
		return nil, fmt.Errorf("store: run %s: %w", runID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: final view of %s: %w", runID, err)
	}
	return v, nil
}

// GetRun returns a run's row, or ErrNotFound.
func (s *Store) GetRun(ctx context.Context, org, runID string) (RunRow, error) {
	rows, _ := s.pool.Query(ctx, sqlGetRun, org, runID)
	r, err := pgx.CollectExactlyOneRow(rows, scanRun)
	if err == pgx.ErrNoRows {
		return RunRow{}, fmt.Errorf("store: run %s: %w", runID, ErrNotFound)
	}
	if err != nil {
		return RunRow{}, fmt.Errorf("store: get run %s: %w", runID, err)
	}
	return r, nil
}

const sqlRunWork = `
SELECT ` + workColumns + `
FROM work WHERE org = $1 AND run_id = $2
ORDER BY ready_since, run_id, step_id`

// RunWork returns a run's open work, oldest first.
func (s *Store) RunWork(ctx context.Context, org, runID string) ([]WorkRow, error) {
	rows, _ := s.pool.Query(ctx, sqlRunWork, org, runID)
	ws, err := pgx.CollectRows(rows, scanWork)
	if err != nil {
		return nil, fmt.Errorf("store: work of run %s: %w", runID, err)
	}
	return ws, nil
}

// runColumns are the columns scanRun reads, of runs as r (so that they
// stay unambiguous in a join).
const runColumns = `r.org, r.run_id, r.process, r.version, r.state, coalesce(r.outcome, ''), r.mode, r.inputs,
       r.started_by, r.started_at, r.updated_at, r.seq, coalesce(r.parent_run_id, ''), coalesce(r.parent_step, '')`

func scanRun(row pgx.CollectableRow) (RunRow, error) {
	var r RunRow
	err := row.Scan(&r.Org, &r.RunID, &r.Process, &r.Version, &r.State, &r.Outcome, &r.Mode,
		&r.Inputs, &r.StartedBy, &r.StartedAt, &r.UpdatedAt, &r.Seq, &r.Parent, &r.ParentStep)
	return r, err
}

const workColumns = `org, run_id, process, version, mode, step_id, coalesce(work_item_id, ''), kind,
       ready_since, due, overdue, coalesce(assigned_group, ''), coalesce(assigned_person, ''),
       also_groups, handoff, item`

func scanWork(row pgx.CollectableRow) (WorkRow, error) {
	var w WorkRow
	err := row.Scan(&w.Org, &w.RunID, &w.Process, &w.Version, &w.Mode, &w.StepID, &w.WorkItemID,
		&w.Kind, &w.ReadySince, &w.Due, &w.Overdue, &w.AssignedGroup, &w.AssignedPerson,
		&w.AlsoGroups, &w.Handoff, &w.Item)
	return w, err
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
