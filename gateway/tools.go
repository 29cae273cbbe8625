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

// tool is one tool's entry in the pipeline (pipeline.go): what it says of
// itself in tools/list, who may call it, and how it reads, writes and
// renders. Entries are made by the constructor of their kind
// (newReadTool, newRunTool, newStartTool, newOwnTool), which takes the
// functions that kind needs and no others.
type tool struct {
	name interpreter.Tool
	meta toolMeta
	kind toolKind
	// who, when set, are the identity kinds that may call the tool at all,
	// checked right after the arguments; whoMessage is the refusal.
	who        map[auth.Kind]bool
	whoMessage string
	read       readFunc
	command    commandFunc
	refused    refusedFunc
	write      writeFunc
	render     renderFunc
}

type (
	// readFunc answers a readTool.
	readFunc = func(g *Gateway, ctx context.Context, c *call) (any, error)
	// commandFunc is a runWrite's: which run, and the machine command.
	commandFunc = func(g *Gateway, ctx context.Context, c *call) (runID string, cmd interpreter.Command, err error)
	// refusedFunc, when a runWrite has one, is told of its command's
	// refusal.
	refusedFunc = func(g *Gateway, ctx context.Context, runID string, cmd interpreter.Command, e *interpreter.Error)
	// writeFunc is a startWrite's or an ownWrite's; it returns the answer
	// as stored.
	writeFunc = func(g *Gateway, ctx context.Context, c *call) (json.RawMessage, error)
	// renderFunc turns a write's stored answer into the tool's data.
	renderFunc = func(g *Gateway, ctx context.Context, c *call, stored json.RawMessage) (any, error)
)

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

// newReadTool is a tool that writes nothing and takes no requestId.
func newReadTool(name interpreter.Tool, meta toolMeta, read readFunc) *tool {
	return &tool{name: name, meta: meta, kind: readTool, read: read}
}

// newRunTool is a tool that sends one command to one run.
func newRunTool(name interpreter.Tool, meta toolMeta, command commandFunc, render renderFunc) *tool {
	return &tool{name: name, meta: meta, kind: runWrite, command: command, render: render}
}

// newStartTool is a tool that starts a run.
func newStartTool(name interpreter.Tool, meta toolMeta, write writeFunc, render renderFunc) *tool {
	return &tool{name: name, meta: meta, kind: startWrite, write: write, render: render}
}

// newOwnTool is a tool whose write is the gateway's own, not a run's.
func newOwnTool(name interpreter.Tool, meta toolMeta, write writeFunc, render renderFunc) *tool {
	return &tool{name: name, meta: meta, kind: ownWrite, write: write, render: render}
}

// only lets only identities of the kinds given call t; message is the
// refusal of the others.
func (t *tool) only(message string, kinds ...auth.Kind) *tool {
	t.who, t.whoMessage = map[auth.Kind]bool{}, message
	for _, k := range kinds {
		t.who[k] = true
	}
	return t
}

// toolTable lists the fourteen tools in the order describe reports them,
// and call_tool.
func toolTable() []*tool {
	return []*tool{
		newReadTool(interpreter.ToolDescribe, toolMeta{title: "Describe this Baton server", arguments: argsDescribe, result: results.describe,
			description: "Protocol version, profiles, lease seconds, person format, tools and limits."}, (*Gateway).describe),
		newReadTool(interpreter.ToolListProcesses, toolMeta{title: "List published processes", arguments: argsListProcesses, result: results.listProcesses,
			description: "Published processes: name, description, version number, inputs."}, (*Gateway).listProcesses),
		newStartTool(interpreter.ToolStartRun, toolMeta{title: "Start a run", arguments: argsStartRun, result: results.runView,
			description: "Start a run of a published process. Inputs are checked against its inputs. Returns the run view."}, (*Gateway).startRun, (*Gateway).renderView).
			only("Only an agent or a person can start a run.", auth.KindAgent, auth.KindPerson),
		newReadTool(interpreter.ToolGetRun, toolMeta{title: "Show a run", arguments: argsGetRun, result: results.runView,
			description: "The run view: run data, step states, open work items. Never a token."}, (*Gateway).getRun),
		newReadTool(interpreter.ToolGetWork, toolMeta{title: "Find work to do", arguments: argsGetWork, result: results.getWork,
			description: "For an agent: ready agent steps with the exact claim call. For a person: open work items with the exact decide call. Oldest first."}, (*Gateway).getWork),
		newRunTool(interpreter.ToolClaim, toolMeta{title: "Claim a step", arguments: argsClaim, result: results.claim,
			description: "Claim a ready agent step: a token, its expiry, the step, the body and the run data, and the handoff."}, (*Gateway).claim, (*Gateway).renderClaim),
		newRunTool(interpreter.ToolRenew, toolMeta{title: "Renew a lease", arguments: argsRenew, result: results.renew,
			description: "Extend a lease; optionally leave a progress note. Returns a new token; the old one stops working."}, (*Gateway).renew, (*Gateway).renderRenew),
		newOwnTool(interpreter.ToolUpload, toolMeta{title: "Upload an evidence file", arguments: argsUpload, result: results.upload,
			description: "Store a file (base64) and get its id and sha256, for evidence: [file]."}, (*Gateway).upload, renderAsIs).
			only("Files are uploaded by agents, people and operators.", auth.KindAgent, auth.KindPerson, auth.KindOperator),
		newSubmitTool(),
		newRunTool(interpreter.ToolEscalate, toolMeta{title: "Escalate a step to a person", arguments: argsEscalate, result: results.runView,
			description: "Hand a claimed step to a person with a note."}, (*Gateway).escalate, (*Gateway).renderView),
		newRunTool(interpreter.ToolDecide, toolMeta{title: "Decide a work item", destructive: true, arguments: argsDecide, result: results.runView,
			description: "Decide a work item: completed (with output and at most 64 evidence items), approved, rejected, returned or failed."}, (*Gateway).decide, (*Gateway).renderView),
		newRunTool(interpreter.ToolCancel, toolMeta{title: "Cancel a run", destructive: true, arguments: argsCancel, result: results.runView,
			description: "Cancel an active or waiting run with a reason (operators)."}, (*Gateway).cancel, (*Gateway).renderView),
		newRunTool(interpreter.ToolSendEvent, toolMeta{title: "Send an event to a run", arguments: argsSendEvent, result: results.sendEvent,
			description: "Deliver an event to a run; a wait_for step consumes it or it is held."}, (*Gateway).sendEvent, renderAsIs),
		newReadTool(interpreter.ToolListRuns, toolMeta{title: "List runs", arguments: argsListRuns, result: results.listRuns,
			description: "Runs, filtered by process, state, input values and parent (the runs a run's process steps started)."}, (*Gateway).listRuns),
		// The baton-tools-1 profile's own tool (docs/profile-tools.md),
		// offered with the profile.
		newRunTool(interpreter.ToolCallTool, toolMeta{title: "Call a claimed step's tool", destructive: true, openWorld: true, arguments: argsCallTool, result: results.callTool,
			description: "Call one of your claimed step's tools (baton-tools-1): read and write tools run at once; an approval_required call waits for a person's approval of that exact call. Read the claim's extensions first."}, (*Gateway).callTool, renderAsIs),
	}
}

// newSubmitTool is submit: a run's write whose refusal (not_accepted)
// hands its issues to the run, for the next attempt's handoff.
func newSubmitTool() *tool {
	t := newRunTool(interpreter.ToolSubmit, toolMeta{title: "Submit a step's work", arguments: argsSubmit, result: results.runView,
		description: "Submit a claimed step: output, evidence (at most 64 items), summary and the chosen next. Accepted, or not_accepted with every issue."}, (*Gateway).submit, (*Gateway).renderView)
	t.refused = (*Gateway).noteRefusal
	return t
}

// The tool table by name: the schemas a tool's calls are checked against
// (loadSchemas, outputSchema).
var (
	argumentSchemas = indexTools(func(t *tool) string { return t.meta.arguments })
	resultSchemas   = indexTools(func(t *tool) string { return t.meta.result })
)

func indexTools[V any](f func(t *tool) V) map[interpreter.Tool]V {
	m := map[interpreter.Tool]V{}
	for _, t := range toolTable() {
		m[t.name] = f(t)
	}
	return m
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
		meta := t.meta
		input, err := json.Marshal(g.schemas[t.name].schema)
		if err != nil {
			return fmt.Errorf("gateway: tool %s: input schema: %w", t.name, err)
		}
		g.server.AddTool(&mcp.Tool{Name: string(t.name), Title: meta.title, Description: meta.description, Annotations: t.annotations(),
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
