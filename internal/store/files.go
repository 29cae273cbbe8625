package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrExists is returned when inserting a row whose id is taken.
var ErrExists = errors.New("store: already exists")

// File is an uploaded file.
type File struct {
	Org         string
	ID          string
	Name        string
	ContentType string
	Size        int64  // len(Bytes); set by PutFile
	SHA256      string // hex SHA-256 of Bytes; set by PutFile
	Bytes       []byte // nil from StatFile
	// CreatedBy is the uploader's identity.
	CreatedBy string
	// RequestID is the upload's requestId: at most one file of an
	// organization has it. "" for none.
	RequestID string
	CreatedAt time.Time
}

const (
	sqlPutFile = `
INSERT INTO files (org, file_id, name, content_type, size, sha256, bytes, created_by, request_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, nullif($9, ''))
ON CONFLICT DO NOTHING
RETURNING created_at`

	fileHead = `SELECT org, file_id, name, content_type, size, sha256, `
	fileTail = `, created_by, coalesce(request_id, ''), created_at FROM files WHERE org = $1 AND `

	sqlGetFile           = fileHead + `bytes` + fileTail + `file_id = $2`
	sqlStatFile          = fileHead + `NULL::bytea` + fileTail + `file_id = $2`
	sqlStatFileByRequest = fileHead + `NULL::bytea` + fileTail + `request_id = $2`
)

// PutFile stores a file under f.ID, computing its size and SHA-256, and
// returns it as stored. A taken id, or a requestId another file has, is
// ErrExists (and leaves a caller's transaction usable): StatFileByRequest
// finds the file of a requestId. Size limits are the caller's to enforce.
func (s *Store) PutFile(ctx context.Context, q Querier, f File) (File, error) {
	if f.Org == "" || f.ID == "" {
		return File{}, fmt.Errorf("store: put file: Org and ID are required")
	}
	if f.Bytes == nil {
		f.Bytes = []byte{}
	}
	sum := sha256.Sum256(f.Bytes)
	f.Size, f.SHA256 = int64(len(f.Bytes)), hex.EncodeToString(sum[:])
	err := s.q(q).QueryRow(ctx, sqlPutFile, f.Org, f.ID, f.Name, f.ContentType, f.Size, sum[:], f.Bytes, f.CreatedBy, f.RequestID).Scan(&f.CreatedAt)
	if err == pgx.ErrNoRows {
		return File{}, fmt.Errorf("store: put file %s: %w", f.ID, ErrExists)
	}
	if err != nil {
		return File{}, fmt.Errorf("store: put file %s: %w", f.ID, err)
	}
	return f, nil
}

// GetFile returns a file with its bytes, or ErrNotFound.
func (s *Store) GetFile(ctx context.Context, org, id string) (File, error) {
	return s.getFile(ctx, sqlGetFile, org, id)
}

// StatFile returns a file without its bytes, or ErrNotFound.
func (s *Store) StatFile(ctx context.Context, org, id string) (File, error) {
	return s.getFile(ctx, sqlStatFile, org, id)
}

// StatFileByRequest returns the file a requestId uploaded, without its
// bytes, or ErrNotFound.
func (s *Store) StatFileByRequest(ctx context.Context, org, requestID string) (File, error) {
	return s.getFile(ctx, sqlStatFileByRequest, org, requestID)
}

func (s *Store) getFile(ctx context.Context, sql, org, id string) (File, error) {
	var f File
	var sum []byte
	err := s.pool.QueryRow(ctx, sql, org, id).Scan(&f.Org, &f.ID, &f.Name, &f.ContentType, &f.Size, &sum, &f.Bytes, &f.CreatedBy, &f.RequestID, &f.CreatedAt)
	if err == pgx.ErrNoRows {
		return File{}, fmt.Errorf("store: file %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return File{}, fmt.Errorf("store: get file %s: %w", id, err)
	}
	f.SHA256 = hex.EncodeToString(sum)
	return f, nil
}
