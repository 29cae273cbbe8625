package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// toolNames lists the tools in the order describe reports them.
var toolNames = []string{
	"describe", "list_processes", "start_run", "get_run", "get_work", "claim", "renew",
	"upload", "submit", "escalate", "decide", "cancel", "send_event", "list_runs",
}

var toolDescriptions = map[string]string{
	"describe":       "Protocol version, profiles, lease seconds, person format, tools and limits.",
	"list_processes": "Published processes: name, description, version number, inputs.",
	"start_run":      "Start a run of a published process. Inputs are checked against its inputs. Returns the run view.",
	"get_run":        "The run view: run data, step states, open work items. Never a token.",
	"get_work":       "For an agent: ready agent steps with the exact claim call. For a person: open work items with the exact decide call. Oldest first.",
	"claim":          "Claim a ready agent step: a token, its expiry, the step, the body and the run data, and the handoff.",
	"renew":          "Extend a lease; optionally leave a progress note. Returns a new token; the old one stops working.",
	"upload":         "Store a file (base64) and get its id and sha256, for evidence: [file].",
	"submit":         "Submit a claimed step: output, evidence, summary and the chosen next. Accepted, or not_accepted with every issue.",
	"escalate":       "Hand a claimed step to a person with a note.",
	"decide":         "Decide a work item: completed, approved, rejected, returned or failed.",
	"cancel":         "Cancel an active or waiting run with a reason (operators).",
	"send_event":     "Deliver an event to a run; a wait_for step consumes it or it is held.",
	"list_runs":      "Runs, filtered by process, state and input values.",
}

// call is one tool call on its way through the gateway.
type call struct {
	tool string
	id   *auth.Identity
	args map[string]any // decoded with exact numbers
	raw  json.RawMessage
}

func (c *call) str(name string) string {
	s, _ := c.args[name].(string)
	return s
}

func (c *call) optStr(name string) *string {
	s, ok := c.args[name].(string)
	if !ok {
		return nil
	}
	return &s
}

func (c *call) object(name string) interpreter.Values {
	m, ok := c.args[name].(map[string]any)
	if !ok {
		return nil
	}
	return m
}

func (c *call) evidence() []interpreter.Evidence {
	list, ok := c.args["evidence"].([]any)
	if !ok {
		return nil
	}
	out := make([]interpreter.Evidence, 0, len(list))
	for _, e := range list {
		m, _ := e.(map[string]any)
		k, _ := m["kind"].(string)
		r, _ := m["ref"].(string)
		out = append(out, interpreter.Evidence{Kind: k, Ref: r})
	}
	return out
}

func (c *call) actor() interpreter.Actor {
	return interpreter.Actor{ID: c.id.ID, Kind: interpreter.ActorKind(c.id.Kind), Groups: c.id.Groups}
}

type handler func(ctx context.Context, c *call) (any, error)

// envelope is every tool's structured result.
type envelope struct {
	OK    bool               `json:"ok"`
	Data  any                `json:"data,omitempty"`
	Error *interpreter.Error `json:"error,omitempty"`
}

func (g *Gateway) addTools() {
	handlers := map[string]handler{
		"describe": g.describe, "list_processes": g.listProcesses, "start_run": g.startRun,
		"get_run": g.getRun, "get_work": g.getWork, "claim": g.claim, "renew": g.renew,
		"upload": g.upload, "submit": g.submit, "escalate": g.escalate, "decide": g.decide,
		"cancel": g.cancel, "send_event": g.sendEvent, "list_runs": g.listRuns,
	}
	for _, name := range toolNames {
		name, h := name, handlers[name]
		tool := &mcp.Tool{Name: name, Description: toolDescriptions[name], InputSchema: g.schemas[name].schema}
		g.server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return g.dispatch(ctx, name, h, req), nil
		})
	}
}

// dispatch authenticates, checks the arguments, runs the tool and wraps its
// answer or refusal in the envelope.
func (g *Gateway) dispatch(ctx context.Context, name string, h handler, req *mcp.CallToolRequest) *mcp.CallToolResult {
	data, err := g.run(ctx, name, h, req)
	if err != nil {
		var e *interpreter.Error
		if !errors.As(err, &e) {
			g.opts.Logger.Error("tool failed", "tool", name, "error", err)
			e = &interpreter.Error{Code: interpreter.CodeRetry, Message: "The server could not complete the call; retry with the same requestId."}
		}
		return result(envelope{OK: false, Error: e}, true)
	}
	return result(envelope{OK: true, Data: data}, false)
}

func result(env envelope, isError bool) *mcp.CallToolResult {
	b, err := json.Marshal(env)
	if err != nil {
		b = []byte(`{"ok":false,"error":{"code":"retry","message":"The result could not be encoded."}}`)
	}
	return &mcp.CallToolResult{
		IsError:           isError,
		StructuredContent: json.RawMessage(b),
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
	}
}

func (g *Gateway) run(ctx context.Context, name string, h handler, req *mcp.CallToolRequest) (any, error) {
	var ti *auth.Identity
	if req.Extra != nil {
		ti, _ = auth.FromTokenInfo(req.Extra.TokenInfo)
	}
	if ti == nil {
		return nil, &interpreter.Error{Code: interpreter.CodeForbidden, Message: "No identity: send a bearer token."}
	}
	raw := req.Params.Arguments
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	c := &call{tool: name, id: ti, raw: raw}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, invalid("The arguments are not JSON.", "arguments: not JSON")
	}
	args, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("The arguments must be an object.", "arguments: expected object")
	}
	if issues := g.checkArgs(name, raw); len(issues) > 0 {
		return nil, invalid("The arguments do not match the tool's schema: "+strings.Join(issues, "; ")+".", issues...)
	}
	c.args = args
	return h(ctx, c)
}

// checkArgs validates arguments against the tool's schema and returns
// every issue as `<path>: <problem>`.
func (g *Gateway) checkArgs(name string, raw json.RawMessage) []string {
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return []string{"arguments: not JSON"}
	}
	err := g.schemas[name].resolved.Validate(generic)
	if err == nil {
		return nil
	}
	return schemaIssues(err, g.schemas[name].schema, generic)
}

// schemaIssues turns a validation failure into issue strings. The
// validator stops at the first failure, so the issues are found again
// field by field for the common cases: missing, unknown and mistyped
// arguments.
func schemaIssues(err error, s *jsonschema.Schema, v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return []string{"arguments: expected object"}
	}
	var issues []string
	for _, r := range s.Required {
		if _, ok := m[r]; !ok {
			issues = append(issues, r+": required")
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p, ok := s.Properties[k]
		if !ok {
			issues = append(issues, k+": not an argument of this tool")
			continue
		}
		r, err := p.Resolve(nil)
		if err != nil {
			continue
		}
		if err := r.Validate(m[k]); err != nil {
			issues = append(issues, fmt.Sprintf("%s: %s", k, shortReason(err)))
		}
	}
	if len(issues) == 0 {
		issues = []string{"arguments: " + shortReason(err)}
	}
	return issues
}

func shortReason(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		s = s[i+2:]
	}
	return s
}

func invalid(message string, issues ...string) *interpreter.Error {
	return &interpreter.Error{Code: interpreter.CodeInvalid, Message: message, Issues: issues}
}

func forbidden(message string) *interpreter.Error {
	return &interpreter.Error{Code: interpreter.CodeForbidden, Message: message}
}

func notFound(message string) *interpreter.Error {
	return &interpreter.Error{Code: interpreter.CodeNotFound, Message: message}
}

func conflict(message string, issues ...string) *interpreter.Error {
	return &interpreter.Error{Code: interpreter.CodeConflict, Message: message, Issues: issues}
}
