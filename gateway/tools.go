package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// tool is one tool's entry in the pipeline (pipeline.go): who may call
// it, and how it reads, writes and renders. Its kind says which of its
// functions serve it.
type tool struct {
	name        interpreter.Tool
	description string
	kind        toolKind
	// who, when set, are the identity kinds that may call the tool at all,
	// checked right after the arguments; whoMessage is the refusal.
	who        map[auth.Kind]bool
	whoMessage string
	// read answers a readTool.
	read func(g *Gateway, ctx context.Context, c *call) (any, error)
	// command is a runWrite: which run, and the machine command.
	command func(g *Gateway, ctx context.Context, c *call) (runID string, cmd interpreter.Command, err error)
	// refused, when set, is told of a command's refusal.
	refused func(g *Gateway, ctx context.Context, runID string, cmd interpreter.Command, e *interpreter.Error)
	// write is a startWrite or an ownWrite; it returns the answer as
	// stored.
	write func(g *Gateway, ctx context.Context, c *call) (json.RawMessage, error)
	// render turns a write's stored answer into the tool's data.
	render func(g *Gateway, ctx context.Context, c *call, stored json.RawMessage) (any, error)
}

// toolKind says how a tool's calls go through the pipeline, and which of
// the tool's functions serve them.
type toolKind int

const (
	// readTool writes nothing and has no requestId: read answers.
	readTool toolKind = iota + 1
	// runWrite is one command to one run's workflow (command), which
	// records the answer beside its read model.
	runWrite
	// startWrite starts a run (write), which records the answer with its
	// first read-model write.
	startWrite
	// ownWrite is the gateway's own write (write), not a run's: the
	// pipeline records its answer.
	ownWrite
)

// check reports a tool whose functions do not fit its kind.
func (t *tool) check() error {
	ok := false
	switch t.kind {
	case readTool:
		ok = t.read != nil && t.command == nil && t.write == nil
	case runWrite:
		ok = t.command != nil && t.write == nil && t.render != nil
	case startWrite, ownWrite:
		ok = t.write != nil && t.command == nil && t.render != nil
	}
	if !ok {
		return fmt.Errorf("gateway: tool %s: its functions do not fit its kind %d", t.name, t.kind)
	}
	return nil
}

func kinds(ks ...auth.Kind) map[auth.Kind]bool {
	m := map[auth.Kind]bool{}
	for _, k := range ks {
		m[k] = true
	}
	return m
}

// toolTable lists the fourteen tools in the order describe reports them.
func toolTable() []*tool {
	return []*tool{
		{name: interpreter.ToolDescribe, description: "Protocol version, profiles, lease seconds, person format, tools and limits.",
			kind: readTool, read: (*Gateway).describe},
		{name: interpreter.ToolListProcesses, description: "Published processes: name, description, version number, inputs.",
			kind: readTool, read: (*Gateway).listProcesses},
		{name: interpreter.ToolStartRun, description: "Start a run of a published process. Inputs are checked against its inputs. Returns the run view.",
			who: kinds(auth.KindAgent, auth.KindPerson), whoMessage: "Only an agent or a person can start a run.",
			kind: startWrite, write: (*Gateway).startRun, render: (*Gateway).renderView},
		{name: interpreter.ToolGetRun, description: "The run view: run data, step states, open work items. Never a token.",
			kind: readTool, read: (*Gateway).getRun},
		{name: interpreter.ToolGetWork, description: "For an agent: ready agent steps with the exact claim call. For a person: open work items with the exact decide call. Oldest first.",
			kind: readTool, read: (*Gateway).getWork},
		{name: interpreter.ToolClaim, description: "Claim a ready agent step: a token, its expiry, the step, the body and the run data, and the handoff.",
			kind: runWrite, command: (*Gateway).claim, render: (*Gateway).renderClaim},
		{name: interpreter.ToolRenew, description: "Extend a lease; optionally leave a progress note. Returns a new token; the old one stops working.",
			kind: runWrite, command: (*Gateway).renew, render: (*Gateway).renderRenew},
		{name: interpreter.ToolUpload, description: "Store a file (base64) and get its id and sha256, for evidence: [file].",
			who: kinds(auth.KindAgent, auth.KindPerson, auth.KindOperator), whoMessage: "Files are uploaded by agents, people and operators.",
			kind: ownWrite, write: (*Gateway).upload, render: renderAsIs},
		{name: interpreter.ToolSubmit, description: "Submit a claimed step: output, evidence (at most 64 items), summary and the chosen next. Accepted, or not_accepted with every issue.",
			kind: runWrite, command: (*Gateway).submit, refused: (*Gateway).noteRefusal, render: (*Gateway).renderView},
		{name: interpreter.ToolEscalate, description: "Hand a claimed step to a person with a note.",
			kind: runWrite, command: (*Gateway).escalate, render: (*Gateway).renderView},
		{name: interpreter.ToolDecide, description: "Decide a work item: completed (with output and at most 64 evidence items), approved, rejected, returned or failed.",
			kind: runWrite, command: (*Gateway).decide, render: (*Gateway).renderView},
		{name: interpreter.ToolCancel, description: "Cancel an active or waiting run with a reason (operators).",
			kind: runWrite, command: (*Gateway).cancel, render: (*Gateway).renderView},
		{name: interpreter.ToolSendEvent, description: "Deliver an event to a run; a wait_for step consumes it or it is held.",
			kind: runWrite, command: (*Gateway).sendEvent, render: renderAsIs},
		{name: interpreter.ToolListRuns, description: "Runs, filtered by process, state and input values.",
			kind: readTool, read: (*Gateway).listRuns},
		// The baton-tools-1 profile's own tool (docs/profile-tools.md),
		// offered with the profile.
		{name: interpreter.ToolCallTool, description: "Call one of your claimed step's tools (baton-tools-1): read and write tools run at once; an approval_required call waits for a person's approval of that exact call. Read the claim's extensions first.",
			kind: runWrite, command: (*Gateway).callTool, render: renderAsIs},
	}
}

// envelope is every tool's structured result.
type envelope struct {
	OK    bool               `json:"ok"`
	Data  any                `json:"data,omitempty"`
	Error *interpreter.Error `json:"error,omitempty"`
}

// addTools registers every tool on the MCP server. The input schema goes
// to the SDK as JSON: the SDK reads it on every call (for header
// annotations), and marshalling the schema type each time was a third of
// the gateway's own work for a call.
func (g *Gateway) addTools() error {
	for _, t := range g.toolList {
		meta := toolMetas[t.name]
		input, err := json.Marshal(g.schemas[t.name].schema)
		if err != nil {
			return fmt.Errorf("gateway: tool %s: input schema: %w", t.name, err)
		}
		g.server.AddTool(&mcp.Tool{Name: string(t.name), Title: meta.title, Description: t.description, Annotations: meta.annotations(),
			InputSchema: json.RawMessage(input), OutputSchema: g.schemas[t.name].output},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var id *auth.Identity
				if req.Extra != nil {
					id, _ = auth.FromTokenInfo(req.Extra.TokenInfo)
				}
				data, err := g.serve(ctx, t, id, req.Params.Arguments)
				return g.result(ctx, string(t.name), data, err), nil
			})
	}
	return nil
}

// result wraps a tool's data or refusal in the envelope, as structured
// content and as text. A refused call is a tool result, not a protocol
// error.
func (g *Gateway) result(ctx context.Context, tool string, data any, err error) *mcp.CallToolResult {
	env := envelope{OK: true, Data: data}
	if err != nil {
		var e *interpreter.Error
		if !errors.As(err, &e) {
			g.opts.Logger.ErrorContext(ctx, "tool failed", "tool", tool, "error", err)
			e = interpreter.ErrRetry()
		}
		env = envelope{OK: false, Error: e}
	}
	b, merr := marshal(env)
	if merr != nil {
		g.opts.Logger.ErrorContext(ctx, "encoding a tool result failed", "tool", tool, "error", merr)
		b, env.OK = []byte(`{"ok":false,"error":{"code":"retry","message":"The result could not be encoded."}}`), false
	}
	content := []mcp.Content{&mcp.TextContent{Text: string(b)}}
	if env.OK {
		content = append(content, g.fileLinks(ctx, b)...)
	}
	return &mcp.CallToolResult{
		IsError:           !env.OK,
		StructuredContent: json.RawMessage(b),
		Content:           content,
	}
}
