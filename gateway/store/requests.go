package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Request is the idempotency record of one requestId.
type Request struct {
	Org       string
	RequestID string
	Tool      string
	// Digest identifies the call: tool, arguments and caller. A repeated
	// requestId with another digest is a conflict.
	Digest []byte
	// Result is the tool's result; nil while the call that inserted the
	// record is still running (inside its transaction).
	Result    json.RawMessage
	CreatedAt time.Time
}

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

	requestColumns = `org, request_id, tool, digest, result, created_at`
)

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
	err := row.Scan(&r.Org, &r.RequestID, &r.Tool, &r.Digest, &r.Result, &r.CreatedAt)
	return r, err
}
