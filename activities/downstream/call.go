package downstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/interpreter"
)

// Call is one call of a downstream tool.
type Call struct {
	Endpoint Endpoint
	// Tool is the downstream tool's own name: refund, not crm/refund.
	Tool string
	// Arguments are sent byte for byte; empty means {}.
	Arguments json.RawMessage
	// IdempotencyKey goes in _meta and the Idempotency-Key header; ""
	// sends none.
	IdempotencyKey string
}

// Result is what the tool answered: a CallToolResult as JSON,
// {"content": [...], "structuredContent": ..., "isError": bool}, the
// structured content only when the server sent one.
type Result struct {
	JSON    json.RawMessage
	IsError bool
	// Truncated is true when the answer was over the client's
	// MaxResultBytes and JSON holds a text saying so instead.
	Truncated bool
}

// ErrorKind says what a caller may do after a failed call.
type ErrorKind int

// The kinds of CallError.
const (
	// NotSent: the tools/call request certainly did not reach the tool.
	// The server could not be reached, the handshake failed, the
	// credentials could not be read, or the server refused the request at
	// the HTTP layer (a 4xx) before running anything. Safe to send again.
	NotSent ErrorKind = iota + 1
	// NoAnswer: the request was sent and no answer came: the timeout
	// passed, the connection broke, or a 5xx came back. The tool may or may
	// not have run; send again only with an idempotency key the server
	// honours.
	NoAnswer
	// Refused: the server answered the call with a JSON-RPC error (an
	// unknown tool, invalid parameters): it did not run the tool. This is
	// the call's answer (docs/profile-tools.md §5.3: FAILED).
	Refused
)

// String names the kind.
func (k ErrorKind) String() string {
	switch k {
	case NotSent:
		return "not sent"
	case NoAnswer:
		return "no answer"
	case Refused:
		return "refused"
	}
	return "unknown"
}

// CallError is a call that did not get a result.
type CallError struct {
	Kind   ErrorKind
	Server string
	// Status is the HTTP status that came back, 0 for none.
	Status int
	// Code is the JSON-RPC error code of a Refused call.
	Code int64
	// Message says what happened, for the agent or operator.
	Message string
	Err     error
}

func (e *CallError) Error() string { return e.Message }

// RedactURL returns a URL without its userinfo, query and fragment, which
// may hold secrets: what a message may name of an endpoint. A text that
// does not parse as a URL becomes its scheme alone.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		scheme, _, _ := strings.Cut(s, "://")
		return scheme + "://…"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

var urlInText = regexp.MustCompile(`(?i)\bhttps?://[^\s"'<>\x60]+`)

// redactURLs redacts every http(s) URL in a text (RedactURL).
func redactURLs(text string) string { return urlInText.ReplaceAllStringFunc(text, RedactURL) }

// redacted is an error whose text has its URLs redacted; it unwraps to
// the error it wraps, for errors.Is and errors.As.
type redacted struct{ err error }

func (r redacted) Error() string { return redactURLs(r.err.Error()) }
func (r redacted) Unwrap() error { return r.err }

func (e *CallError) Unwrap() error { return e.Err }

// Retryable reports whether sending again may help: not sent, or no
// answer. Whether it is safe is the idempotency's question.
func (e *CallError) Retryable() bool { return e.Kind == NotSent || e.Kind == NoAnswer }

// MayHaveRun reports whether the tool may have run: no answer came.
// A Refused call reached the server, which says it did not run the tool.
func (e *CallError) MayHaveRun() bool { return e.Kind == NoAnswer }

// Result returns a Refused call's answer as a tool error result, the text
// saying that the server refused it; nil for other kinds.
func (e *CallError) Result() json.RawMessage {
	if e.Kind != Refused {
		return nil
	}
	return interpreter.TextResult(e.Message, true)
}

// tracker follows one call's HTTP requests.
type tracker struct {
	mu         sync.Mutex
	wrote      bool // the tools/call request was written in full
	callStatus int  // the tools/call response's status
	lastStatus int  // the last response's status, any request
}

func (t *tracker) set(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f()
}

// callTransport adds the credentials to every request of a call, and to
// the tools/call request the idempotency key, watching whether it was
// written and what came back.
type callTransport struct {
	base          http.RoundTripper
	header, value string
	key           string
	track         *tracker
}

func (t *callTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if t.header != "" {
		req.Header.Set(t.header, t.value)
	}
	isCall := false
	if req.Method == http.MethodPost && req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		var msg struct {
			Method string `json:"method"`
		}
		isCall = json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call"
	}
	if isCall {
		if t.key != "" {
			req.Header.Set(HeaderIdempotencyKey, t.key)
		}
		trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				t.track.set(func() { t.track.wrote = true })
			}
		}}
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	}
	resp, err := t.base.RoundTrip(req)
	if resp != nil {
		t.track.set(func() {
			t.track.lastStatus = resp.StatusCode
			if isCall {
				t.track.callStatus = resp.StatusCode
			}
		})
	}
	return resp, err
}

// Call calls one tool. The whole call, handshake included, is bounded by
// the endpoint's timeout. It returns the tool's answer, isError or not, or
// a *CallError.
func (c *Client) Call(ctx context.Context, call Call) (res *Result, err error) {
	if c.opts.Observe != nil {
		start := time.Now()
		defer func() { c.opts.Observe(call.Endpoint.Server, call.Tool, Outcome(res, err), time.Since(start)) }()
	}
	ep := call.Endpoint
	header, value, err := c.credentials(ep)
	if err != nil {
		return nil, &CallError{Kind: NotSent, Server: ep.Server, Message: err.Error() + "; nothing was sent", Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, ep.timeout())
	defer cancel()
	track := &tracker{}
	cs, err := c.connect(ctx, ep, &callTransport{base: c.opts.Transport, header: header, value: value, key: call.IdempotencyKey, track: track})
	if err != nil {
		return nil, c.classify(ctx, ep, err, track, false)
	}
	args := call.Arguments
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	params := &mcp.CallToolParams{Name: call.Tool, Arguments: args}
	if call.IdempotencyKey != "" {
		params.Meta = mcp.Meta{MetaIdempotencyKey: call.IdempotencyKey}
	}
	answer, err := cs.CallTool(ctx, params)
	if err != nil {
		// Closing a session ends it on the server, which may first wait
		// for the call it is still running: the caller does not wait too.
		go cs.Close()
		return nil, c.classify(ctx, ep, err, track, true)
	}
	cs.Close()
	return c.result(answer)
}

// Outcome names how a call ended, for metrics: "ok", "tool_error" (a
// result with isError), the kind of a *CallError ("not_sent", "no_answer",
// "refused"), or "error".
func Outcome(res *Result, err error) string {
	var ce *CallError
	switch {
	case err == nil && res != nil && res.IsError:
		return "tool_error"
	case err == nil:
		return "ok"
	case errors.As(err, &ce) && ce.Kind == NotSent:
		return "not_sent"
	case errors.As(err, &ce) && ce.Kind == NoAnswer:
		return "no_answer"
	case errors.As(err, &ce) && ce.Kind == Refused:
		return "refused"
	}
	return "error"
}

// connect opens an MCP session with the endpoint through rt.
func (c *Client) connect(ctx context.Context, ep Endpoint, rt http.RoundTripper) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "baton", Version: c.opts.Version}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             ep.URL,
		HTTPClient:           &http.Client{Transport: rt, CheckRedirect: refuseRedirect},
		MaxRetries:           -1, // retries are the caller's: it knows the idempotency
		DisableStandaloneSSE: true,
	}, nil)
}

// ErrRedirect is wrapped by a CallError whose server answered with a
// redirect. Baton follows none: the credentials would go wherever the
// server points, over plain http if it says so (docs/profile-tools.md
// §1.2). A server that moved is fixed in its registration.
var ErrRedirect = errors.New("the tool server answered with a redirect")

func refuseRedirect(*http.Request, []*http.Request) error { return ErrRedirect }

func isRedirect(status int) bool { return status >= 300 && status < 400 }

// classify turns a failure into a CallError. called is false when the
// session never opened, so the tools/call was never sent.
func (c *Client) classify(ctx context.Context, ep Endpoint, err error, track *tracker, called bool) *CallError {
	track.mu.Lock()
	wrote, callStatus, lastStatus := track.wrote, track.callStatus, track.lastStatus
	track.mu.Unlock()
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	e := &CallError{Server: ep.Server, Err: redacted{err}}
	// The endpoint's userinfo and query may hold secrets, and the message
	// reaches the agent, Temporal history and work items.
	defer func() { e.Message = redactURLs(e.Message) }()
	var wire *jsonrpc.Error
	switch {
	case isRedirect(lastStatus) && (!called || !wrote || callStatus == lastStatus):
		// The server that redirected did not run the call, and the
		// request went nowhere else.
		e.Kind, e.Status, e.Err = NotSent, lastStatus, redacted{fmt.Errorf("%w: %w", ErrRedirect, err)}
		e.Message = fmt.Sprintf("%s answered HTTP %d, a redirect, which Baton does not follow; nothing was sent. An operator must fix the tool registration's url.", ep.Server, lastStatus)
	case !called || !wrote:
		e.Kind, e.Status = NotSent, lastStatus
		switch {
		case lastStatus == http.StatusUnauthorized || lastStatus == http.StatusForbidden:
			e.Message = fmt.Sprintf("%s refused Baton's credentials (HTTP %d); nothing was sent. An operator must fix the tool registration or the secret.", ep.Server, lastStatus)
		case lastStatus >= 400:
			e.Message = fmt.Sprintf("%s answered HTTP %d before the call was sent; nothing was sent", ep.Server, lastStatus)
		case timedOut:
			e.Message = fmt.Sprintf("%s did not answer within %s; the call was not sent", ep.Server, ep.timeout())
		default:
			e.Message = fmt.Sprintf("%s could not be reached (%v); the call was not sent", ep.Server, err)
		}
	case errors.As(err, &wire):
		e.Kind, e.Code, e.Status = Refused, wire.Code, callStatus
		e.Message = fmt.Sprintf("%s refused the call: %s (JSON-RPC error %d)", ep.Server, wire.Message, wire.Code)
	case callStatus >= 400 && callStatus < 500:
		e.Kind, e.Status = NotSent, callStatus
		e.Message = fmt.Sprintf("%s refused the request (HTTP %d) without running it", ep.Server, callStatus)
	case callStatus >= 500:
		e.Kind, e.Status = NoAnswer, callStatus
		e.Message = fmt.Sprintf("%s failed the request (HTTP %d); the call may or may not have run", ep.Server, callStatus)
	case timedOut:
		e.Kind = NoAnswer
		e.Message = fmt.Sprintf("%s did not answer within %s; the call may or may not have run", ep.Server, ep.timeout())
	default:
		e.Kind = NoAnswer
		e.Message = fmt.Sprintf("%s's answer was lost (%v); the call may or may not have run", ep.Server, err)
	}
	return e
}

// result renders a CallToolResult as the journal keeps it.
func (c *Client) result(res *mcp.CallToolResult) (*Result, error) {
	content := res.Content
	if content == nil {
		content = []mcp.Content{}
	}
	b, err := json.Marshal(struct {
		Content           []mcp.Content `json:"content"`
		StructuredContent any           `json:"structuredContent,omitempty"`
		IsError           bool          `json:"isError"`
	}{content, res.StructuredContent, res.IsError})
	if err != nil {
		return nil, fmt.Errorf("downstream: render the result: %w", err)
	}
	out := &Result{JSON: b, IsError: res.IsError}
	if len(b) > c.opts.MaxResultBytes {
		out.JSON = interpreter.TextResult(fmt.Sprintf("The tool's answer was %d bytes, over the %d bytes Baton keeps; it was not kept.", len(b), c.opts.MaxResultBytes), res.IsError)
		out.Truncated = true
	}
	return out, nil
}
