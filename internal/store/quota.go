package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// UploadQuota limits the bytes one identity may upload within a sliding
// window. A zero Bytes means no limit.
type UploadQuota struct {
	Bytes  int64
	Window time.Duration
}

// QuotaError is returned by [Store.PutFileWithinQuota] for a file that
// would take its creator past their quota.
type QuotaError struct {
	Quota UploadQuota
	// Used is what the creator uploaded within the window before this file.
	Used int64
	// Size is the refused file's size.
	Size int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("store: upload quota of %d bytes per %v: %d bytes used, this file has %d", e.Quota.Bytes, e.Quota.Window, e.Used, e.Size)
}

const (
	// sqlLockCreator serializes one creator's quota-checked uploads until
	// the transaction ends.
	sqlLockCreator = `SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 0))`

	// sqlQuotaUsage returns what a creator uploaded within the window and
	// whether the file id, or the requestId, is taken.
	sqlQuotaUsage = `
SELECT (SELECT coalesce(sum(size), 0)::bigint FROM files
        WHERE org = $1 AND created_by = $2 AND created_at > now() - make_interval(secs => $3)),
       EXISTS (SELECT 1 FROM files WHERE org = $1 AND (file_id = $4 OR request_id = nullif($5, '')))`
)

// PutFileWithinQuota stores f like [Store.PutFile] unless its creator
// (f.CreatedBy) uploaded more than quota.Bytes - len(f.Bytes) within
// quota.Window: that is a *QuotaError and stores nothing. A taken id or requestId
// is ErrExists whatever the quota, so a retried upload is never refused by
// its own first copy. One creator's uploads are checked one at a time (a
// transaction-scoped advisory lock), so racing uploads cannot pass the
// quota together.
func (s *Store) PutFileWithinQuota(ctx context.Context, q Querier, f File, quota UploadQuota) (File, error) {
	if quota.Bytes <= 0 {
		return s.PutFile(ctx, q, f)
	}
	if quota.Window <= 0 {
		return File{}, fmt.Errorf("store: put file %s: quota window %v must be positive", f.ID, quota.Window)
	}
	var stored File
	err := inTx(ctx, s.q(q), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sqlLockCreator, f.Org, f.CreatedBy); err != nil {
			return fmt.Errorf("store: put file %s: %w", f.ID, err)
		}
		var used int64
		var taken bool
		if err := tx.QueryRow(ctx, sqlQuotaUsage, f.Org, f.CreatedBy, quota.Window.Seconds(), f.ID, f.RequestID).Scan(&used, &taken); err != nil {
			return fmt.Errorf("store: put file %s: %w", f.ID, err)
		}
		if taken {
			return fmt.Errorf("store: put file %s: %w", f.ID, ErrExists)
		}
		if size := int64(len(f.Bytes)); used+size > quota.Bytes {
			return &QuotaError{Quota: quota, Used: used, Size: size}
		}
		var err error
		stored, err = s.PutFile(ctx, tx, f)
		return err
	})
	if err != nil {
		return File{}, err
	}
	return stored, nil
}
