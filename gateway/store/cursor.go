package store

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrBadCursor is returned by a listing given a cursor it did not issue (or
// one issued by another listing). The gateway answers it with `invalid`.
var ErrBadCursor = errors.New("store: bad cursor")

// cursor is the keyset of the last row of a page: the next page starts
// after it. Encoded as base64url JSON, which callers treat as opaque.
type cursor struct {
	Kind string `json:"k"`           // which listing issued it: cursorWork or cursorRuns
	Time int64  `json:"t"`           // ready_since or started_at, Unix microseconds
	Run  string `json:"r"`           // run_id
	Step string `json:"s,omitempty"` // step_id, for work
}

const (
	cursorWork = "w"
	cursorRuns = "r"
)

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (c cursor) time() time.Time { return time.UnixMicro(c.Time) }

// decodeCursor returns the cursor s encodes; ok is false for "" (the first
// page).
func decodeCursor(s, kind string) (c cursor, ok bool, err error) {
	if s == "" {
		return cursor{}, false, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, false, fmt.Errorf("%w: not base64url", ErrBadCursor)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || dec.More() {
		return cursor{}, false, fmt.Errorf("%w: undecodable", ErrBadCursor)
	}
	if c.Kind != kind || c.Run == "" || (kind == cursorWork) != (c.Step != "") {
		return cursor{}, false, fmt.Errorf("%w: not from this listing", ErrBadCursor)
	}
	return c, true, nil
}
