package store

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
)

// FileStatus is what [Store.VerifyFiles] found for one file id.
type FileStatus struct {
	// Found is true when the file exists in the organization.
	Found bool
	// Matches is true when its stored bytes hash to SHA256.
	Matches bool
	// SHA256 is the hex SHA-256 recorded at upload; "" when not found.
	SHA256 string
}

// sqlVerifyFiles hashes the stored bytes in the database and answers only
// whether they match, so no file's bytes leave PostgreSQL. A file whose
// recorded hash is the one the caller already verified ($3, NULL when not
// cached) is not hashed: CASE evaluates the hash only when needed, and the
// bytes, stored out of line, are not even read.
const sqlVerifyFiles = `
SELECT r.file_id, f.sha256,
       CASE WHEN r.known IS NOT NULL AND r.known = f.sha256 THEN true
            ELSE sha256(f.bytes) = f.sha256 END
FROM unnest($2::text[], $3::bytea[]) AS r(file_id, known)
JOIN files f ON f.org = $1 AND f.file_id = r.file_id`

// VerifyFiles checks, in one round trip, that each id names a file of org
// whose stored bytes still hash to the SHA-256 recorded at upload (spec §5).
// Repeated ids are checked once. The bytes are hashed inside PostgreSQL and
// never sent; a file verified within [VerifiedFilesTTL] against the same
// recorded hash is not hashed again. The result has an entry for every id,
// zero for an id that names no file of org.
func (s *Store) VerifyFiles(ctx context.Context, org string, ids []string) (map[string]FileStatus, error) {
	out := make(map[string]FileStatus, len(ids))
	cached := make(map[string][]byte)
	var distinct []string
	var known [][]byte // per distinct id: the hash it was verified against, or nil
	for _, id := range ids {
		if _, dup := out[id]; dup {
			continue
		}
		out[id] = FileStatus{}
		k := s.verified.get(org, id)
		cached[id] = k
		distinct = append(distinct, id)
		known = append(known, k)
	}
	if len(distinct) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, sqlVerifyFiles, org, distinct, known)
	if err != nil {
		return nil, fmt.Errorf("store: verify files: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var sum []byte
		var matches bool
		if err := rows.Scan(&id, &sum, &matches); err != nil {
			return nil, fmt.Errorf("store: verify files: %w", err)
		}
		out[id] = FileStatus{Found: true, Matches: matches, SHA256: hex.EncodeToString(sum)}
		// A hit keeps its expiry: the TTL counts from the last hashing.
		if matches {
			if !bytes.Equal(cached[id], sum) {
				s.verified.put(org, id, sum)
			}
		} else {
			s.verified.forget(org, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: verify files: %w", err)
	}
	return out, nil
}
