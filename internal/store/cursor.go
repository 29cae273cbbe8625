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
	Kind string `json:"k"`           // which listing issued it: cursorWork, cursorRuns or cursorProcesses
	Time int64  `json:"t,omitempty"` // ready_since or started_at, Unix microseconds
	Run  string `json:"r,omitempty"` // run_id
	Step string `json:"s,omitempty"` // step_id, for work
	Name string `json:"n,omitempty"` // process name, for processes
}

const (
	cursorWork      = "w"
	cursorRuns      = "r"
	cursorProcesses = "p"
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
	valid := c.Kind == kind
	switch kind {
	case cursorWork:
		valid = valid && c.Run != "" && c.Step != "" && c.Name == ""
	case cursorRuns:
		valid = valid && c.Run != "" && c.Step == "" && c.Name == ""
	case cursorProcesses:
		valid = valid && c.Name != "" && c.Run == "" && c.Step == "" && c.Time == 0
	}
	if !valid {
		return cursor{}, false, fmt.Errorf("%w: not from this listing", ErrBadCursor)
	}
	return c, true, nil
}
