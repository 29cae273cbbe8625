package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/toolreg"
	"github.com/baton-run/baton/interpreter"
)

// callTool is the baton-tools-1 profile's call_tool (docs/profile-tools.md
// §6): an agent holding a claim calls one of its step's tools through the
// run. The gateway resolves what the run cannot know, the registration as
// it stands and the tool's input schema, and the run decides the rest in
// the profile's order of checks.
func (g *Gateway) callTool(ctx context.Context, c *call) (string, interpreter.Command, error) {
	runID, stepID, leaseID, err := g.token(c)
	if err != nil {
		return "", nil, err
	}
	var raw struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(c.raw, &raw); err != nil {
		return "", nil, invalid("The arguments are not JSON.", "arguments: not JSON")
	}
	args, e := interpreter.CheckCallArguments(raw.Arguments)
	if e != nil {
		return "", nil, e
	}
	ref := c.str("tool")
	server, _, ok := interpreter.SplitToolRef(ref)
	if !ok {
		return "", nil, invalid(fmt.Sprintf("tool %s is not server/tool.", interpreter.Quote(ref)), "tool: expected server/tool")
	}
	digest, err := interpreter.CallDigest(ref, args)
	if err != nil {
		return "", nil, invalid("The arguments cannot be made canonical: "+err.Error(), "arguments: "+err.Error())
	}
	cmd := interpreter.CallTool{
		StepID: stepID, LeaseID: leaseID, Actor: c.actor(), Tool: ref, Arguments: args, CallDigest: digest,
		Key: interpreter.IdempotencyKey(c.org, runID, stepID, digest),
	}
	// What the registration says now; a failure to resolve is the run's
	// forbidden, after its own checks (profile-tools §7).
	if err := g.resolveCall(ctx, c.org, runID, stepID, server, &cmd); err != nil {
		return "", nil, err
	}
	return runID, cmd, nil
}

// resolveCall fills in the registration's side of a call: the resolved
// policy and approvers, the server's test endpoint and timeout, and the
// arguments' issues against the tool's input schema.
func (g *Gateway) resolveCall(ctx context.Context, org, runID, stepID, server string, cmd *interpreter.CallTool) error {
	row, err := g.store.GetRun(ctx, org, runID)
	if errors.Is(err, store.ErrNotFound) {
		return interpreter.ErrNoRun(runID)
	}
	if err != nil {
		return err
	}
	pub, err := g.process(ctx, org, row.Process, row.Version)
	if err != nil {
		return err
	}
	s := pub.p.Step(stepID)
	var use *interpreter.ToolUse
	if s != nil {
		use = s.ToolUse(cmd.Tool)
	}
	if use == nil {
		return nil // the run refuses it, naming the step's tools
	}
	ts, err := g.store.GetToolServer(ctx, org, server)
	if errors.Is(err, store.ErrNotFound) {
		cmd.ResolveError = fmt.Sprintf("tool server %s is no longer registered", server)
		return nil
	}
	if err != nil {
		return err
	}
	_, tool, _ := interpreter.SplitToolRef(cmd.Tool)
	t := ts.Tool(tool)
	if t == nil {
		cmd.ResolveError = fmt.Sprintf("%s is no longer registered", cmd.Tool)
		return nil
	}
	resolved, err := interpreter.ResolveTool(*use, ts.CatalogTool(t), pub.roles)
	if err != nil {
		cmd.ResolveError = err.Error()
		return nil
	}
	cmd.Resolved, cmd.HasTestURL, cmd.Timeout = resolved, ts.TestURL != "", ts.Timeout
	if listed := ts.Listed(tool); listed != nil && len(listed.InputSchema) > 0 {
		cmd.ArgumentIssues = inputSchemaIssues(listed.InputSchema, cmd.Arguments)
	}
	return nil
}

// toolsExtension is a claim's extensions["baton-tools-1"] (profile-tools
// §4.1): the step's tools with their effective policy and the server's
// description and input schema, the journal, and the call to make.
func (g *Gateway) toolsExtension(ctx context.Context, org, token string, res *interpreter.ClaimResult) (*interpreter.ToolsExtension, error) {
	ext := &interpreter.ToolsExtension{
		Call: interpreter.NewCallTemplate(token), Tools: []interpreter.ExtensionTool{},
		Journal: res.Journal, Limits: interpreter.DefaultToolLimits(),
	}
	if ext.Journal == nil {
		ext.Journal = []interpreter.JournalEntry{}
	}
	servers := map[string]*toolreg.Server{}
	for _, use := range res.Tools {
		server, tool, _ := interpreter.SplitToolRef(use.Ref)
		ts, seen := servers[server]
		if !seen {
			t, err := g.store.GetToolServer(ctx, org, server)
			switch {
			case err == nil:
				ts = &t
			case !errors.Is(err, store.ErrNotFound):
				return nil, err
			}
			servers[server] = ts
		}
		et := interpreter.ExtensionTool{Name: use.Ref}
		var registered interpreter.Policy
		if ts != nil {
			if t := ts.Tool(tool); t != nil {
				registered = t.Policy
			}
			if l := ts.Listed(tool); l != nil {
				d := l.Description
				et.Description, et.InputSchema = &d, l.InputSchema
			}
		}
		et.Policy = use.EffectivePolicy(registered)
		if et.InputSchema == nil {
			et.InputSchema = json.RawMessage("null")
		}
		ext.Tools = append(ext.Tools, et)
	}
	return ext, nil
}
