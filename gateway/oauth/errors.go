package oauth

import (
	"encoding/json"
	"net/http"
)

// Error is an OAuth error response (RFC 6749 §5.2, RFC 7591 §3.2.2,
// RFC 8707 §2): a code such as invalid_grant and a description saying what to
// do next.
type Error struct {
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
	status      int
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

// oauthError returns an error with code and description, answered with 400.
func oauthError(code, description string) *Error {
	return &Error{Code: code, Description: description, status: http.StatusBadRequest}
}

// writeError answers e as JSON, with its status (400 when unset).
func writeError(w http.ResponseWriter, e *Error) {
	status := e.status
	if status == 0 {
		status = http.StatusBadRequest
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="baton dev sign-in"`)
	}
	writeJSON(w, status, e)
}

// writeJSON answers v as JSON that no cache may keep.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
