package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	segjson "github.com/segmentio/encoding/json"
)

// Request size and time limits. A tool call's body is at most
// MaxRequestBytes, except a tools/call of upload, which may carry its file
// (base64, up to Options.MaxUploadBytes) and gets the time a slow link needs
// to send it.
const (
	// MaxRequestBytes bounds the body of every request but an upload.
	MaxRequestBytes = 1 << 20
	// ReadTimeout is how long a request of MaxRequestBytes may take to
	// arrive: 1 MiB at 256 kbit/s takes 33 seconds.
	ReadTimeout = time.Minute
	// CallTimeout is how long a call may take to answer once it has
	// arrived; a caller that misses the answer retries with its requestId.
	CallTimeout = 2 * time.Minute
	// DefaultCallWait is how long a call waits by default for what it
	// needs (Temporal, PostgreSQL) before answering retry: under the
	// 60 seconds many MCP clients give a request, so while Temporal is
	// down they get Baton's retry rather than a timeout of their own,
	// and longer than a checked submission's model usually takes.
	DefaultCallWait = 50 * time.Second
	// slowestLink is the slowest upload speed planned for, in bytes per
	// second: 256 kbit/s.
	slowestLink = 32 << 10
)

// MaxUploadRequestBytes is the largest body of an upload call: the file's
// base64 and a MaxRequestBytes allowance for the rest.
func MaxUploadRequestBytes(maxUploadBytes int) int64 {
	return int64(base64Len(maxUploadBytes)) + MaxRequestBytes
}

// UploadTimeout is how long an upload call of up to maxUploadBytes may take
// to arrive: its body at 256 kbit/s, and never less than ReadTimeout. For
// the default 10 MiB, about 7 minutes.
func UploadTimeout(maxUploadBytes int) time.Duration {
	return max(ReadTimeout, time.Duration(MaxUploadRequestBytes(maxUploadBytes)/slowestLink)*time.Second)
}

func base64Len(n int) int { return (n + 2) / 3 * 4 }

// limitBodies caps the body of every request to next at MaxRequestBytes,
// answering 413 past it, unless the request is a JSON-RPC tools/call of
// upload: that one may run to MaxUploadRequestBytes, and its read and write
// deadlines are pushed back by UploadTimeout so a server's ReadTimeout and
// WriteTimeout do not cut a slow link short.
//
// Whether a body over MaxRequestBytes is an upload is first read from its
// first MaxRequestBytes, so method and params.name must come before
// params.arguments (every MCP SDK writes them in that order); a body that
// does not say so there is refused without reading further. The whole body
// is then decoded exactly as the MCP SDK decodes it, so a duplicated key
// cannot make the SDK see another tool than the one allowed here.
func limitBodies(next http.Handler, maxUploadBytes int) http.Handler {
	uploadLimit := MaxUploadRequestBytes(maxUploadBytes)
	uploadTime := UploadTimeout(maxUploadBytes)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body := r.Body
		prefix, err := io.ReadAll(io.LimitReader(body, MaxRequestBytes+1))
		if err != nil {
			http.Error(w, "The request body could not be read in time.", http.StatusBadRequest)
			return
		}
		if len(prefix) <= MaxRequestBytes {
			r.Body = readCloser{bytes.NewReader(prefix), body}
			next.ServeHTTP(w, r)
			return
		}
		tooLarge := fmt.Sprintf("The request body is over %d bytes: only a tools/call of upload may be larger, up to %d bytes, with method and params.name before params.arguments.", MaxRequestBytes, uploadLimit)
		if !uploadPrefix(prefix) {
			http.Error(w, tooLarge, http.StatusRequestEntityTooLarge)
			return
		}
		rc := http.NewResponseController(w)
		deadline := time.Now().Add(uploadTime)
		_ = rc.SetReadDeadline(deadline) // not every ResponseWriter can; then the server's own timeouts apply
		_ = rc.SetWriteDeadline(deadline.Add(CallTimeout))
		rest, err := io.ReadAll(http.MaxBytesReader(w, body, uploadLimit-int64(len(prefix))))
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			http.Error(w, tooLarge, http.StatusRequestEntityTooLarge)
			return
		case err != nil:
			http.Error(w, "The request body could not be read in time.", http.StatusBadRequest)
			return
		}
		full := append(prefix, rest...)
		if !isUploadCall(full) {
			http.Error(w, tooLarge, http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = readCloser{bytes.NewReader(full), body}
		next.ServeHTTP(w, r)
	})
}

type readCloser struct {
	io.Reader
	io.Closer
}

// uploadPrefix reports whether the start of a JSON-RPC request says it is a
// tools/call of upload: "method" and then "params" whose "name" comes
// before anything too long to fit. It only saves reading the rest of a body
// that is no upload; isUploadCall decides.
func uploadPrefix(prefix []byte) bool {
	d := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	method := ""
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return false
		}
		switch k {
		case "method":
			if d.Decode(&method) != nil {
				return false
			}
		case "params":
			if method != "tools/call" {
				return false
			}
			if t, err := d.Token(); err != nil || t != json.Delim('{') {
				return false
			}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return false
				}
				if k == "name" {
					var name string
					return d.Decode(&name) == nil && name == "upload"
				}
				var skip json.RawMessage
				if d.Decode(&skip) != nil {
					return false
				}
			}
			return false
		default:
			var skip json.RawMessage
			if d.Decode(&skip) != nil {
				return false
			}
		}
	}
	return false
}

// isUploadCall reports whether a whole JSON-RPC request body is a tools/call
// of upload as the MCP SDK reads it: the same decoder with the same settings
// (keys matched case-sensitively; of repeated keys the last wins), the
// message first, then its params.
func isUploadCall(body []byte) bool {
	var msg struct {
		Method string             `json:"method"`
		Params segjson.RawMessage `json:"params"`
	}
	var params struct {
		Name string `json:"name"`
	}
	return sdkDecode(body, &msg) == nil && msg.Method == "tools/call" &&
		sdkDecode(msg.Params, &params) == nil && params.Name == "upload"
}

func sdkDecode(b []byte, v any) error {
	d := segjson.NewDecoder(bytes.NewReader(b))
	d.DontMatchCaseInsensitiveStructFields()
	return d.Decode(v)
}
