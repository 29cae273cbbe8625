package drive

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/interpreter"
)

// MCPOptions configure an MCP driver.
type MCPOptions struct {
	// Transport sends the requests, with the bearer token added. Default:
	// http.DefaultTransport.
	Transport http.RoundTripper
	// Observe, when set, sees every tool result's text before it is
	// decoded, to check it against the official schemas.
	Observe func(tool string, result []byte)
	// Timed, when set, is told how long every tool call took, refused or
	// not; err is set only when the call failed outright.
	Timed func(tool string, took time.Duration, err error)
	// Plain sends every tool call as one JSON-RPC POST of the stateless
	// protocol (plainVersion), with no session to open, and reads only the
	// result's text, instead of going through the MCP SDK's client
	// session. baton bench uses it: its clients share the machine with the
	// server they measure, and the SDK's client costs about twice the CPU
	// a call.
	Plain bool
}

// clientInfo is how the driver names itself to the server, either way it
// calls.
var clientInfo = &mcp.Implementation{Name: "baton-drive", Version: "0"}

// MCP drives Baton's gateway over MCP, one client session per identity.
// It is safe for concurrent use.
type MCP struct {
	url   string
	token func(Who) (string, error)
	opts  MCPOptions

	mu       sync.Mutex
	sessions map[string]*mcp.ClientSession
	plain    *plainClient
}

// NewMCP returns a driver for the MCP endpoint url (".../mcp"); token
// returns the bearer token of an identity. Nil options mean defaults.
func NewMCP(url string, token func(Who) (string, error), opts *MCPOptions) *MCP {
	d := &MCP{url: url, token: token, sessions: map[string]*mcp.ClientSession{}}
	if opts != nil {
		d.opts = *opts
	}
	if d.opts.Transport == nil {
		d.opts.Transport = http.DefaultTransport
	}
	if d.opts.Plain {
		d.plain = &plainClient{url: url, token: token, http: &http.Client{Transport: d.opts.Transport}, tokens: map[string]string{}}
	}
	return d
}

// Close closes every session.
func (d *MCP) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	for k, s := range d.sessions {
		errs = append(errs, s.Close())
		delete(d.sessions, k)
	}
	return errors.Join(errs...)
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// Session returns who's client session, connecting it on first use.
func (d *MCP) Session(ctx context.Context, who Who) (*mcp.ClientSession, error) {
	key := string(who.Kind) + "\x00" + who.ID
	d.mu.Lock()
	s := d.sessions[key]
	d.mu.Unlock()
	if s != nil {
		return s, nil
	}
	tok, err := d.token(who)
	if err != nil {
		return nil, fmt.Errorf("token for %s %s: %w", who.Kind, who.ID, err)
	}
	cl := mcp.NewClient(clientInfo, nil)
	s, err = cl.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   d.url,
		HTTPClient: &http.Client{Transport: bearer{tok, d.opts.Transport}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect as %s %s: %w", who.Kind, who.ID, err)
	}
	d.mu.Lock()
	if old := d.sessions[key]; old != nil {
		d.mu.Unlock()
		_ = s.Close()
		return old, nil
	}
	d.sessions[key] = s
	d.mu.Unlock()
	return s, nil
}

// Call calls one tool as who and decodes its data into out (when not nil).
// A refusal comes back as an *interpreter.Error.
func (d *MCP) Call(ctx context.Context, who Who, tool string, args map[string]any, out any) error {
	text, isError, err := d.call(ctx, who, tool, args)
	if err != nil {
		return err
	}
	if d.opts.Observe != nil {
		d.opts.Observe(tool, text)
	}
	var env struct {
		OK    bool               `json:"ok"`
		Data  json.RawMessage    `json:"data"`
		Error *interpreter.Error `json:"error"`
	}
	if err := interpreter.DecodeExact(text, &env); err != nil {
		return fmt.Errorf("%s: result is not JSON: %w", tool, err)
	}
	if isError == env.OK {
		return fmt.Errorf("%s: the result says isError %v with ok %v", tool, isError, env.OK)
	}
	if !env.OK {
		if env.Error == nil {
			return fmt.Errorf("%s: refused without an error", tool)
		}
		return env.Error
	}
	if out == nil {
		return nil
	}
	if err := interpreter.DecodeExact(env.Data, out); err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	return nil
}

// call calls one tool as who, timed, and returns its result's text.
func (d *MCP) call(ctx context.Context, who Who, tool string, args map[string]any) (text []byte, isError bool, err error) {
	if d.plain != nil {
		start := time.Now()
		text, isError, err = d.plain.call(ctx, who, tool, args)
		if d.opts.Timed != nil {
			d.opts.Timed(tool, time.Since(start), err)
		}
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", tool, err)
		}
		return text, isError, nil
	}
	s, err := d.Session(ctx, who)
	if err != nil {
		return nil, false, err
	}
	start := time.Now()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if d.opts.Timed != nil {
		d.opts.Timed(tool, time.Since(start), err)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", tool, err)
	}
	if len(res.Content) == 0 {
		return nil, false, fmt.Errorf("%s: empty result", tool)
	}
	t, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return nil, false, fmt.Errorf("%s: result is not text", tool)
	}
	return []byte(t.Text), res.IsError, nil
}

// RequestID returns a fresh requestId.
func RequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "req-" + hex.EncodeToString(b)
}

func (w Work) args() map[string]any {
	a := map[string]any{"output": w.Output}
	if w.Output == nil {
		a["output"] = map[string]any{}
	}
	if w.Evidence != nil {
		ev := make([]any, len(w.Evidence))
		for i, e := range w.Evidence {
			ev[i] = map[string]any{"kind": e.Kind, "ref": e.Ref}
		}
		a["evidence"] = ev
	}
	if w.Summary != nil {
		a["summary"] = *w.Summary
	}
	if w.Next != nil {
		a["next"] = *w.Next
	}
	if w.Reason != nil {
		a["reason"] = *w.Reason
	}
	return a
}

func (d *MCP) Start(ctx context.Context, starter Who, process string, inputs map[string]any, mode string) (*interpreter.View, error) {
	if inputs == nil {
		inputs = map[string]any{}
	}
	args := map[string]any{"process": process, "inputs": inputs, "requestId": RequestID()}
	if mode != "" {
		args["mode"] = mode
	}
	var v interpreter.View
	return &v, d.Call(ctx, starter, "start_run", args, &v)
}

func (d *MCP) GetRun(ctx context.Context, who Who, runID string) (*interpreter.View, error) {
	var v interpreter.View
	return &v, d.Call(ctx, who, "get_run", map[string]any{"runId": runID}, &v)
}

func (d *MCP) Claim(ctx context.Context, agent Who, runID, stepID string) (*interpreter.ClaimWire, error) {
	var c interpreter.ClaimWire
	return &c, d.Call(ctx, agent, "claim", map[string]any{"runId": runID, "stepId": stepID, "requestId": RequestID()}, &c)
}

func (d *MCP) Renew(ctx context.Context, agent Who, token, progress string) (*interpreter.RenewWire, error) {
	args := map[string]any{"token": token, "requestId": RequestID()}
	if progress != "" {
		args["progress"] = progress
	}
	var r interpreter.RenewWire
	return &r, d.Call(ctx, agent, "renew", args, &r)
}

func (d *MCP) Submit(ctx context.Context, agent Who, token string, w Work) (*interpreter.View, error) {
	args := w.args()
	args["token"], args["requestId"] = token, RequestID()
	if _, ok := args["summary"]; !ok {
		args["summary"] = ""
	}
	var v interpreter.View
	return &v, d.Call(ctx, agent, "submit", args, &v)
}

func (d *MCP) Escalate(ctx context.Context, agent Who, token, note string) (*interpreter.View, error) {
	var v interpreter.View
	return &v, d.Call(ctx, agent, "escalate", map[string]any{"token": token, "note": note, "requestId": RequestID()}, &v)
}

func (d *MCP) Decide(ctx context.Context, who Who, runID string, dec Decision) (*interpreter.View, error) {
	args := map[string]any{}
	if dec.Work != nil {
		args = dec.Work.args()
	}
	args["runId"], args["workItemId"], args["snapshot"] = runID, dec.WorkItemID, dec.Snapshot
	args["decision"], args["requestId"] = dec.Decision, RequestID()
	if dec.Note != nil {
		args["note"] = *dec.Note
	}
	var v interpreter.View
	return &v, d.Call(ctx, who, "decide", args, &v)
}

func (d *MCP) SendEvent(ctx context.Context, who Who, runID, name string, data map[string]any) (*interpreter.EventResult, error) {
	args := map[string]any{"runId": runID, "name": name, "requestId": RequestID()}
	if data != nil {
		args["data"] = data
	}
	var r interpreter.EventResult
	return &r, d.Call(ctx, who, "send_event", args, &r)
}

func (d *MCP) Cancel(ctx context.Context, who Who, runID, reason string) (*interpreter.View, error) {
	var v interpreter.View
	return &v, d.Call(ctx, who, "cancel", map[string]any{"runId": runID, "reason": reason, "requestId": RequestID()}, &v)
}

func (d *MCP) Upload(ctx context.Context, who Who, name string, content []byte) (string, error) {
	var r struct {
		ID string `json:"id"`
	}
	err := d.Call(ctx, who, "upload", map[string]any{
		"fileName": name, "contentType": "text/plain", "contentBase64": base64.StdEncoding.EncodeToString(content), "requestId": RequestID(),
	}, &r)
	return r.ID, err
}

// GetWork calls get_work as who, page after page.
func (d *MCP) GetWork(ctx context.Context, who Who, process string) (*WorkList, error) {
	list := &WorkList{}
	args := map[string]any{"limit": 100}
	if process != "" {
		args["process"] = process
	}
	for {
		var page struct {
			Items      json.RawMessage `json:"items"`
			NextCursor *string         `json:"nextCursor"`
		}
		if err := d.Call(ctx, who, "get_work", args, &page); err != nil {
			return nil, err
		}
		var err error
		if who.Kind == interpreter.ActorAgent {
			var items []interpreter.AgentWork
			err = interpreter.DecodeExact(page.Items, &items)
			list.Agent = append(list.Agent, items...)
		} else {
			var items []interpreter.PersonWork
			err = interpreter.DecodeExact(page.Items, &items)
			list.Person = append(list.Person, items...)
		}
		if err != nil {
			return nil, fmt.Errorf("get_work: %w", err)
		}
		if page.NextCursor == nil {
			return list, nil
		}
		args["cursor"] = *page.NextCursor
	}
}
