package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Request is the idempotency record of one requestId.
type Request struct {
	Org       string
	RequestID string
	Tool      string
	// Digest identifies the call: tool, arguments and caller, in hex as
	// the gateway computes it. A repeated requestId with another digest is
	// a conflict.
	Digest string
	// Result is the tool's result; nil while the call that inserted the
	// record is still running (inside its transaction).
	Result    json.RawMessage
	CreatedAt time.Time
	// Attempt counts the tries of a write that Temporal answered with a
	// refusal it remembers (see CountRefusal); each try has an update id
	// of its own.
	Attempt int
	// Refused is set on a reservation whose call was refused: another
	// call may take it over at once.
	Refused bool
	// RunID is the run that records the request itself (RecordRunRequest),
	// empty for a record the gateway keeps.
	RunID string
}

// ErrRequestIDReused is returned, wrapped, when a run's write finds its
// requestId recorded for another call: another digest, answered or still
// held. Nothing the write would have stored is stored.
var ErrRequestIDReused = errors.New("store: the requestId was used for another call")

const (
	sqlPutRequest = `
INSERT INTO requests (org, request_id, tool, digest, result)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (org, request_id) DO NOTHING
RETURNING ` + requestColumns

	sqlGetRequest = `
SELECT ` + requestColumns + `
FROM requests WHERE org = $1 AND request_id = $2`

	sqlSetRequestResult = `
UPDATE requests SET result = $3 WHERE org = $1 AND request_id = $2`

	sqlDeleteRequestsBefore = `
DELETE FROM requests WHERE created_at < $1`

	requestColumns = `org, request_id, tool, digest, result, created_at, attempt, refused, coalesce(run_id, '')`

	// sqlReserveRequest inserts a record without a result, or returns the
	// one there: created tells which.
	sqlReserveRequest = `
WITH ins AS (
    INSERT INTO requests (org, request_id, tool, digest, result)
    VALUES ($1, $2, $3, $4, NULL)
    ON CONFLICT (org, request_id) DO NOTHING
    RETURNING ` + requestColumns + `, true AS created
)
SELECT * FROM ins
UNION ALL
SELECT ` + requestColumns + `, false FROM requests
WHERE org = $1 AND request_id = $2 AND NOT EXISTS (SELECT 1 FROM ins)`

	// sqlTakeOverRequest gives an abandoned reservation (no result, older
	// than $5, or refused) to a call with another digest.
	sqlTakeOverRequest = `
UPDATE requests SET tool = $3, digest = $4, created_at = now(), refused = false
WHERE org = $1 AND request_id = $2 AND result IS NULL AND digest <> $4
  AND (refused OR (run_id IS NULL AND created_at < now() - $5::interval))
RETURNING ` + requestColumns

	sqlReleaseRequest = `
DELETE FROM requests WHERE org = $1 AND request_id = $2 AND digest = $3 AND result IS NULL`

	// sqlRecordAnswer stores a call's answer, inserting the record when no
	// reservation is there; a record of another digest is left alone.
	sqlRecordAnswer = `
INSERT INTO requests (org, request_id, tool, digest, result)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (org, request_id) DO UPDATE SET result = EXCLUDED.result
WHERE requests.digest = EXCLUDED.digest AND requests.result IS NULL`

	// sqlRecordRunRequest records a run's write: migrations 011 and 013.
	sqlRecordRunRequest = `SELECT record_run_request_json($1, $2, $3, $4, $5, $6, $7)`

	// sqlCountRefusal counts a refused try of a run's write: $5 is the
	// attempt refused; the record's count only grows.
	sqlCountRefusal = `
INSERT INTO requests (org, request_id, tool, digest, result, attempt, refused)
VALUES ($1, $2, $3, $4, NULL, $5 + 1, true)
ON CONFLICT (org, request_id) DO UPDATE SET
    attempt = GREATEST(requests.attempt, EXCLUDED.attempt),
    refused = requests.refused OR requests.result IS NULL
RETURNING ` + requestColumns

	sqlReplaceAnswer = `
UPDATE requests SET result = $4
WHERE org = $1 AND request_id = $2 AND digest = $3 AND result::text IS DISTINCT FROM $4::json::text`

	sqlDropAnswer = `
UPDATE requests SET result = NULL, refused = true
WHERE org = $1 AND request_id = $2 AND digest = $3 AND result IS NOT NULL`

	sqlReleaseHeld = `
UPDATE requests SET refused = true
WHERE org = $1 AND request_id = $2 AND digest = $3 AND result IS NULL`
)

// AbandonAfter is how long a reservation without a result binds its
// requestId to its digest: a call that died before answering frees its
// requestId for other arguments after it.
const AbandonAfter = 30 * time.Second

func (r Request) check() error {
	if r.Org == "" || r.RequestID == "" || r.Digest == "" {
		return fmt.Errorf("store: request record: Org, RequestID and Digest are required")
	}
	return nil
}

// ReserveRequest claims requestID for a call with digest, before the call
// runs: it returns the record now stored and whether this call created it.
// A stored record with a Result is a replay (same digest) or a conflict
// (another digest). One without a Result is a call still running or one
// that died before answering: with the same digest the caller goes on
// (the write underneath is idempotent by itself); with another digest it
// is a conflict, unless the reservation is older than AbandonAfter or its
// call was refused, in which case this call takes it over (created is then
// true).
func (s *Store) ReserveRequest(ctx context.Context, q Querier, r Request) (stored Request, created bool, err error) {
	if err := r.check(); err != nil {
		return Request{}, false, err
	}
	q = s.q(q)
	for range 3 {
		var c bool
		row := q.QueryRow(ctx, sqlReserveRequest, r.Org, r.RequestID, r.Tool, r.Digest)
		err = row.Scan(&stored.Org, &stored.RequestID, &stored.Tool, &stored.Digest, &stored.Result, &stored.CreatedAt, &stored.Attempt, &stored.Refused, &stored.RunID, &c)
		if err == pgx.ErrNoRows {
			continue // inserted and committed by another call between the two halves
		}
		if err != nil {
			return Request{}, false, fmt.Errorf("store: reserve request %s: %w", r.RequestID, err)
		}
		if c || stored.Result != nil || stored.Digest == r.Digest {
			return stored, c, nil
		}
		rows, _ := q.Query(ctx, sqlTakeOverRequest, r.Org, r.RequestID, r.Tool, r.Digest, AbandonAfter.String())
		taken, err := pgx.CollectExactlyOneRow(rows, scanRequest)
		if err == pgx.ErrNoRows {
			return stored, false, nil
		}
		if err != nil {
			return Request{}, false, fmt.Errorf("store: reserve request %s: %w", r.RequestID, err)
		}
		return taken, true, nil
	}
	return Request{}, false, fmt.Errorf("store: reserve request %s: the record keeps changing", r.RequestID)
}

// ReleaseRequest drops the reservation of a call that was refused, so the
// requestId may be used again (SPEC-DECISIONS §6). A record with a result
// stays.
func (s *Store) ReleaseRequest(ctx context.Context, q Querier, r Request) error {
	if _, err := s.q(q).Exec(ctx, sqlReleaseRequest, r.Org, r.RequestID, r.Digest); err != nil {
		return fmt.Errorf("store: release request %s: %w", r.RequestID, err)
	}
	return nil
}

// RecordRunRequest records the requestId of a write by run r.RunID, with
// its answer r.Result or, when that is nil, held for the answer to come
// (a write waiting for its check or downstream call). A record of the
// same digest is the run's own. One of another digest is
// ErrRequestIDReused unless it has no answer and was refused or
// abandoned (older than AbandonAfter, held by no run), in which case the
// write takes it over. The run publishes its write's answer this way
// (PublishRun), so a requestId used on another run or by another call is
// refused in the transaction that would have stored the write.
func (s *Store) RecordRunRequest(ctx context.Context, q Querier, r Request) error {
	if err := r.check(); err != nil {
		return err
	}
	_, err := s.q(q).Exec(ctx, sqlRecordRunRequest, r.Org, r.RequestID, r.Tool, r.Digest, nullJSON(r.Result), r.RunID, int64(-1))
	return runRequestError(r.RequestID, err)
}

// runRequestError names record_run_request's refusal.
func runRequestError(requestID string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "request_id_reused" {
		return fmt.Errorf("store: request %s: %w", requestID, ErrRequestIDReused)
	}
	if err != nil {
		return fmt.Errorf("store: record request %s: %w", requestID, err)
	}
	return nil
}

func nullJSON(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	return []byte(b)
}

// ReplaceAnswer replaces the answer recorded under r's requestId and digest
// with r.Result: the record of a run's write held an answer its run never
// kept (see UpsertRun), and the run has now answered what it kept. A record
// of another digest, or none, is left as it is.
func (s *Store) ReplaceAnswer(ctx context.Context, q Querier, r Request) error {
	if err := r.check(); err != nil {
		return err
	}
	if r.Result == nil {
		return fmt.Errorf("store: replace answer %s: result is nil", r.RequestID)
	}
	if _, err := s.q(q).Exec(ctx, sqlReplaceAnswer, r.Org, r.RequestID, r.Digest, []byte(r.Result)); err != nil {
		return fmt.Errorf("store: replace answer %s: %w", r.RequestID, err)
	}
	return nil
}

// DropAnswer drops the answer recorded under r's requestId and digest: the
// run refused the call and never answered it, so the answer is one its run
// never kept. The requestId is then free, as after any refusal. A record
// of another digest, or none, is left as it is.
func (s *Store) DropAnswer(ctx context.Context, q Querier, r Request) error {
	if err := r.check(); err != nil {
		return err
	}
	if _, err := s.q(q).Exec(ctx, sqlDropAnswer, r.Org, r.RequestID, r.Digest); err != nil {
		return fmt.Errorf("store: drop answer %s: %w", r.RequestID, err)
	}
	return nil
}

// ReleaseHeld frees a requestId a run held for a write it then refused (a
// check that failed): another call may take it over at once.
func (s *Store) ReleaseHeld(ctx context.Context, q Querier, r Request) error {
	if _, err := s.q(q).Exec(ctx, sqlReleaseHeld, r.Org, r.RequestID, r.Digest); err != nil {
		return fmt.Errorf("store: release request %s: %w", r.RequestID, err)
	}
	return nil
}

// CountRefusal counts a refusal a run gave the write r at attempt tried
// and that Temporal remembers under that attempt's update id. When the
// record already counts more attempts than tried, the refusal answered was
// an earlier call's, remembered: CountRefusal then returns the attempt to
// try next and ahead true. Otherwise it records the refusal (the requestId
// may be taken over at once; SPEC-DECISIONS §6) and the next call with it
// runs as attempt tried+1.
func (s *Store) CountRefusal(ctx context.Context, q Querier, r Request, tried int) (next int, ahead bool, err error) {
	stored, ahead, err := s.countRefusal(ctx, q, r, tried)
	return stored.Attempt, ahead, err
}

// countRefusal is CountRefusal, returning the record as it stands after.
func (s *Store) countRefusal(ctx context.Context, q Querier, r Request, tried int) (stored Request, ahead bool, err error) {
	if err := r.check(); err != nil {
		return Request{}, false, err
	}
	q = s.q(q)
	rows, _ := q.Query(ctx, sqlGetRequest, r.Org, r.RequestID)
	switch stored, err = pgx.CollectExactlyOneRow(rows, scanRequest); {
	case err == nil && stored.Attempt > tried:
		return stored, true, nil
	case err != nil && err != pgx.ErrNoRows:
		return Request{}, false, fmt.Errorf("store: count refusal of %s: %w", r.RequestID, err)
	}
	rows, _ = q.Query(ctx, sqlCountRefusal, r.Org, r.RequestID, r.Tool, r.Digest, tried)
	if stored, err = pgx.CollectExactlyOneRow(rows, scanRequest); err != nil {
		return Request{}, false, fmt.Errorf("store: count refusal of %s: %w", r.RequestID, err)
	}
	return stored, false, nil
}

// RecordAnswer stores a call's answer (r.Result) under its requestId: into
// its reservation, or as a new record when there is none. A record of the
// requestId with another digest is left as it is.
func (s *Store) RecordAnswer(ctx context.Context, q Querier, r Request) error {
	if err := r.check(); err != nil {
		return err
	}
	if r.Result == nil {
		return fmt.Errorf("store: record answer %s: result is nil", r.RequestID)
	}
	if _, err := s.q(q).Exec(ctx, sqlRecordAnswer, r.Org, r.RequestID, r.Tool, r.Digest, []byte(r.Result)); err != nil {
		return fmt.Errorf("store: record answer %s: %w", r.RequestID, err)
	}
	return nil
}

// PutRequest inserts r unless a record of r.RequestID exists, and returns
// the record now stored and whether this call inserted it. The caller then
// compares stored.Digest with its own: equal and a Result means a replay,
// other means a conflict.
//
// Call it first in the READ COMMITTED transaction that runs the call, and
// set the result with SetRequestResult before committing. A concurrent
// PutRequest of the same requestId waits until that transaction ends: after
// a commit it returns the committed record, after a rollback (a refused
// call, which leaves no record) it inserts its own. So one requestId runs
// once.
func (s *Store) PutRequest(ctx context.Context, q Querier, r Request) (stored Request, created bool, err error) {
	q = s.q(q)
	var result any
	if r.Result != nil {
		result = r.Result
	}
	// The existing record can vanish between the insert and the read when
	// its transaction rolls back; then insert again.
	for range 3 {
		rows, _ := q.Query(ctx, sqlPutRequest, r.Org, r.RequestID, r.Tool, r.Digest, result)
		stored, err = pgx.CollectExactlyOneRow(rows, scanRequest)
		if err == nil {
			return stored, true, nil
		}
		if err != pgx.ErrNoRows {
			return Request{}, false, fmt.Errorf("store: put request %s: %w", r.RequestID, err)
		}
		rows, _ = q.Query(ctx, sqlGetRequest, r.Org, r.RequestID)
		stored, err = pgx.CollectExactlyOneRow(rows, scanRequest)
		if err == nil {
			return stored, false, nil
		}
		if err != pgx.ErrNoRows {
			return Request{}, false, fmt.Errorf("store: put request %s: %w", r.RequestID, err)
		}
	}
	return Request{}, false, fmt.Errorf("store: put request %s: the existing record keeps disappearing (is the transaction REPEATABLE READ? use READ COMMITTED)", r.RequestID)
}

// SetRequestResult stores the result of the call PutRequest recorded.
func (s *Store) SetRequestResult(ctx context.Context, q Querier, org, requestID string, result json.RawMessage) error {
	if result == nil {
		return fmt.Errorf("store: set request %s result: result is nil", requestID)
	}
	tag, err := s.q(q).Exec(ctx, sqlSetRequestResult, org, requestID, result)
	if err != nil {
		return fmt.Errorf("store: set request %s result: %w", requestID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: set request %s result: %w", requestID, ErrNotFound)
	}
	return nil
}

// GetRequest returns the record of a requestId, or ErrNotFound.
func (s *Store) GetRequest(ctx context.Context, org, requestID string) (Request, error) {
	rows, _ := s.pool.Query(ctx, sqlGetRequest, org, requestID)
	r, err := pgx.CollectExactlyOneRow(rows, scanRequest)
	if err == pgx.ErrNoRows {
		return Request{}, fmt.Errorf("store: request %s: %w", requestID, ErrNotFound)
	}
	if err != nil {
		return Request{}, fmt.Errorf("store: get request %s: %w", requestID, err)
	}
	return r, nil
}

// DeleteRequestsBefore deletes the records created before t, in every
// organization, and returns how many it deleted. A requestId retried after
// its record is gone runs again.
func (s *Store) DeleteRequestsBefore(ctx context.Context, q Querier, t time.Time) (int64, error) {
	tag, err := s.q(q).Exec(ctx, sqlDeleteRequestsBefore, t)
	if err != nil {
		return 0, fmt.Errorf("store: delete old requests: %w", err)
	}
	return tag.RowsAffected(), nil
}

func scanRequest(row pgx.CollectableRow) (Request, error) {
	var r Request
	err := row.Scan(&r.Org, &r.RequestID, &r.Tool, &r.Digest, &r.Result, &r.CreatedAt, &r.Attempt, &r.Refused, &r.RunID)
	return r, err
}
