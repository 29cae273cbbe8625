package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/interpreter"
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

// CheckCallWait reports a call wait outside its bounds: more than 0 and at
// most CallTimeout. It is the check of Options.CallWait (once a zero took
// its default), for a caller that checks its settings before it makes a
// gateway.
func CheckCallWait(d time.Duration) error {
	if d <= 0 || d > CallTimeout {
		return fmt.Errorf("%v: want more than 0 and at most CallTimeout, %v", d, CallTimeout)
	}
	return nil
}

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
// does not say so there is refused without reading further. The rest is
// not buffered here: it streams on to the MCP SDK, which reads it once,
// and refuseLargeBodies refuses whatever the SDK decoded that is not a
// tools/call of upload, so a duplicated key cannot make the SDK run
// another tool or method with a large body.
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
		// The rest streams on to the MCP SDK, which reads it once; what
		// the SDK decoded must be an upload (largeBody).
		rest := http.MaxBytesReader(w, body, uploadLimit-int64(len(prefix)))
		r.Body = readCloser{io.MultiReader(bytes.NewReader(prefix), rest), rest}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), largeBodyKey{}, true)))
	})
}

// largeBodyKey marks the context of a request whose body is over
// MaxRequestBytes: only a tools/call of upload may have one.
type largeBodyKey struct{}

// largeBody reports whether ctx is a request's with a body over
// MaxRequestBytes.
func largeBody(ctx context.Context) bool {
	v, _ := ctx.Value(largeBodyKey{}).(bool)
	return v
}

// refuseLargeBodies is MCP middleware that refuses every method of a
// request whose body is over MaxRequestBytes but a tools/call of upload,
// as the MCP SDK decoded it: a key repeated after the first MiB cannot
// make the SDK run another tool or method with it.
func refuseLargeBodies(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if largeBody(ctx) {
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if method != "tools/call" || !ok || p.Name != string(interpreter.ToolUpload) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("The request body is over %d bytes: only a tools/call of upload may be larger.", MaxRequestBytes)}
			}
		}
		return next(ctx, method, req)
	}
}

type readCloser struct {
	io.Reader
	io.Closer
}

// uploadPrefix reports whether the start of a JSON-RPC request says it is a
// tools/call of upload: "method" and then "params" whose "name" comes
// before anything too long to fit. It only saves reading the rest of a body
// that is no upload; refuseLargeBodies decides on what the MCP SDK decoded.
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
					return d.Decode(&name) == nil && name == string(interpreter.ToolUpload)
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
