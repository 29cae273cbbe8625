package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/gateway/store"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

func (g *Gateway) describe(ctx context.Context, c *call) (any, error) {
	return map[string]any{
		"protocol":       "agentprocess",
		"version":        "core-2",
		"profiles":       g.opts.Profiles,
		"leaseSeconds":   int(g.opts.Lease.Seconds()),
		"person":         map[string]any{"format": "email"},
		"tools":          toolNames,
		"maxUploadBytes": g.opts.MaxUploadBytes,
		// The check profile's limits are its defaults (profile-check §5);
		// the schema wants them whether or not check-1 is offered.
		"limits": map[string]any{
			"runDataBytes":    g.opts.RunDataBytes,
			"checkPass":       0.9,
			"checkFail":       nil,
			"checkConfidence": 0.8,
			"checkStateBytes": 65536,
		},
	}, nil
}

func (g *Gateway) listProcesses(ctx context.Context, c *call) (any, error) {
	rows, next, err := g.store.ListProcesses(ctx, g.opts.Org, 100, c.str("cursor"))
	if errors.Is(err, store.ErrBadCursor) {
		return nil, invalid("The cursor is not one this listing gave out.", "cursor: not valid")
	}
	if err != nil {
		return nil, err
	}
	items := []map[string]any{}
	for _, pv := range rows {
		p, _, err := g.process(ctx, pv.Name, pv.Version)
		if err != nil {
			return nil, err
		}
		item := map[string]any{"name": p.Name, "description": p.Description, "version": pv.Version, "inputs": inputsOf(p)}
		if p.Requires != nil {
			item["requires"] = p.Requires
		}
		items = append(items, item)
	}
	return map[string]any{"items": items, "nextCursor": nullable(next)}, nil
}

func inputsOf(p *interpreter.Process) interpreter.Fields {
	if p.Inputs == nil {
		return interpreter.Fields{}
	}
	return p.Inputs
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// derivedID derives an id from a requestId, so a write retried after a lost
// answer finds what it made instead of making another: runs and files.
func (g *Gateway) derivedID(prefix, reqID string) string {
	h := sha256.Sum256([]byte(g.opts.Org + "\x00" + prefix + "\x00" + reqID))
	return prefix + hex.EncodeToString(h[:10])
}

func (g *Gateway) startRun(ctx context.Context, c *call) (any, error) {
	if c.id.Kind != auth.KindAgent && c.id.Kind != auth.KindPerson {
		return nil, forbidden("Only an agent or a person can start a run.")
	}
	// Replays come first (SPEC-DECISIONS §4): the process and the inputs are
	// checked inside the write, so a replay answers even after a newer
	// version changed them.
	return g.write(ctx, c, func(ctx context.Context, reqID string, d []byte) (any, error) {
		version := 0
		if v, ok := c.args["version"].(json.Number); ok {
			n, err := v.Int64()
			if err != nil {
				return nil, invalid("version must be a whole number.", "version: expected integer")
			}
			version = int(n)
		}
		name := c.str("process")
		p, pv, err := g.process(ctx, name, version)
		if errors.Is(err, store.ErrNotFound) {
			if version > 0 {
				return nil, notFound(fmt.Sprintf("Process %q has no published version %d.", name, version))
			}
			return nil, notFound(fmt.Sprintf("No published process %q in this organization.", name))
		}
		if err != nil {
			return nil, err
		}
		mode := c.str("mode")
		if mode == "" {
			mode = interpreter.ModeLive
		}
		in := workflows.Input{
			Org: g.opts.Org, Process: p, Version: pv.Version, Roles: pv.Roles, Operators: g.opts.Operators,
			Inputs: c.object("inputs"), Mode: mode, Starter: c.actor(), Limits: interpreter.Limits{RunDataBytes: g.opts.RunDataBytes},
		}
		// The inputs are checked here, before anything is recorded.
		if _, err := interpreter.StartRun(interpreter.Start{
			RunID: "r_check", Process: p, Version: in.Version, Roles: in.Roles, Operators: in.Operators,
			Inputs: in.Inputs, Mode: in.Mode, Starter: in.Starter, Limits: in.Limits,
		}, timeNow()); err != nil {
			return nil, err
		}
		in.RunID = g.derivedID("r_", reqID)
		op := g.temporal.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
			ID:                       in.RunID,
			TaskQueue:                g.opts.TaskQueue,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			StaticSummary:            fmt.Sprintf("%s v%d (%s)", p.Name, pv.Version, mode),
			StaticDetails:            staticDetails(p, pv, in),
			TypedSearchAttributes: temporal.NewSearchAttributes(
				temporal.NewSearchAttributeKeyKeyword(workflows.SearchProcess).ValueSet(p.Name),
				temporal.NewSearchAttributeKeyInt64(workflows.SearchVersion).ValueSet(int64(pv.Version)),
				temporal.NewSearchAttributeKeyKeyword(workflows.SearchMode).ValueSet(mode),
				temporal.NewSearchAttributeKeyKeyword(workflows.SearchState).ValueSet("active"),
			),
		}, workflows.WorkflowName, in)
		h, err := g.temporal.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: op,
			UpdateOptions: client.UpdateWorkflowOptions{
				UpdateID: reqID, UpdateName: workflows.UpdateStart, WaitForStage: client.WorkflowUpdateStageCompleted,
				Args: []any{workflows.StartRequest{Digest: hex.EncodeToString(d)}},
			},
		})
		if err != nil {
			return nil, err
		}
		var res workflows.Result
		if err := h.Get(ctx, &res); err != nil {
			return nil, err
		}
		if res.Digest != hex.EncodeToString(d) {
			return nil, conflict("This requestId was already used with other arguments; use a new one.", interpreter.IssueRequestIDReused)
		}
		return g.viewWithURLs(res.Value)
	})
}

func staticDetails(p *interpreter.Process, pv store.ProcessVersion, in workflows.Input) string {
	inputs, _ := json.Marshal(in.Inputs)
	return fmt.Sprintf("**%s** version %d, content hash `%s`\n\nStarted by %s (%s), mode %s.\n\nInputs: `%s`",
		p.Name, pv.Version, pv.Hash, in.Starter.ID, in.Starter.Kind, in.Mode, inputs)
}

func (g *Gateway) getRun(ctx context.Context, c *call) (any, error) {
	runID := c.str("runId")
	final, err := g.store.FinalView(ctx, g.opts.Org, runID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(fmt.Sprintf("No run %q in this organization.", runID))
	}
	if err != nil {
		return nil, err
	}
	if final != nil {
		// An ended run's view never changes; it is served from the read
		// model, whatever Temporal's retention.
		return g.viewWithURLs(final)
	}
	q, err := g.temporal.QueryWorkflow(ctx, runID, "", workflows.QueryView)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := q.Get(&raw); err != nil {
		return nil, err
	}
	return g.viewWithURLs(raw)
}

func (g *Gateway) listRuns(ctx context.Context, c *call) (any, error) {
	f := store.RunFilter{Process: c.str("process"), State: c.str("state")}
	if in := c.object("inputs"); in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		f.Inputs = b
	}
	rows, next, err := g.store.ListRuns(ctx, g.opts.Org, f, limitOf(c), c.str("cursor"))
	if errors.Is(err, store.ErrBadCursor) {
		return nil, invalid("The cursor is not one this listing gave out.", "cursor: not valid")
	}
	if err != nil {
		return nil, err
	}
	items := []map[string]any{}
	for _, r := range rows {
		var inputs interpreter.Values
		if err := decodeExact(r.Inputs, &inputs); err != nil {
			return nil, err
		}
		items = append(items, map[string]any{
			"id": r.RunID, "process": r.Process, "version": r.Version, "state": r.State,
			"outcome": nullable(r.Outcome), "startedAt": stamp(r.StartedAt), "updatedAt": stamp(r.UpdatedAt), "inputs": inputs,
		})
	}
	return map[string]any{"items": items, "nextCursor": nullable(next)}, nil
}

func limitOf(c *call) int {
	if n, ok := c.args["limit"].(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			return int(v)
		}
	}
	return 20
}

func (g *Gateway) cancel(ctx context.Context, c *call) (any, error) {
	return g.write(ctx, c, func(ctx context.Context, reqID string, d []byte) (any, error) {
		runID := c.str("runId")
		v, err := g.update(ctx, runID, workflows.UpdateCancel, reqID, d, workflows.CancelRequest{
			Digest: hex.EncodeToString(d), Org: g.opts.Org, Cancel: interpreter.Cancel{Actor: c.actor(), Reason: c.str("reason")},
		})
		if err != nil {
			return nil, err
		}
		return g.viewWithURLs(v)
	})
}

func (g *Gateway) sendEvent(ctx context.Context, c *call) (any, error) {
	return g.write(ctx, c, func(ctx context.Context, reqID string, d []byte) (any, error) {
		runID := c.str("runId")
		v, err := g.update(ctx, runID, workflows.UpdateSendEvent, reqID, d, workflows.SendEventRequest{
			Digest: hex.EncodeToString(d), Org: g.opts.Org, SendEvent: interpreter.SendEvent{Name: c.str("name"), Data: c.object("data"), Actor: c.actor()},
		})
		if err != nil {
			return nil, err
		}
		return v, nil
	})
}
