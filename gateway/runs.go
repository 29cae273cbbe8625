package gateway

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/baton-run/baton/internal/store"
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
		"tools":          g.toolNames(),
		"maxUploadBytes": g.opts.MaxUploadBytes,
		// The check profile's limits (profile-check §5); the schema wants
		// them whether or not check-1 is offered.
		"limits": map[string]any{
			"runDataBytes":    g.opts.RunDataBytes,
			"checkPass":       g.opts.CheckLimits.Pass,
			"checkFail":       g.opts.CheckLimits.Fail,
			"checkConfidence": g.opts.CheckLimits.Confidence,
			"checkStateBytes": g.opts.CheckLimits.StateBytes,
		},
	}, nil
}

func (g *Gateway) listProcesses(ctx context.Context, c *call) (any, error) {
	rows, next, err := g.store.ListProcesses(ctx, c.org, 100, c.str("cursor"))
	if errors.Is(err, store.ErrBadCursor) {
		return nil, invalid("The cursor is not one this listing gave out.", "cursor: not valid")
	}
	if err != nil {
		return nil, err
	}
	items := []map[string]any{}
	for _, pv := range rows {
		pub, err := g.keep(pv)
		if err != nil {
			return nil, err
		}
		p := pub.p
		item := map[string]any{"name": p.Name, "description": p.Description, "version": pv.Version, "inputs": inputsOf(p)}
		if p.Requires != nil {
			item["requires"] = p.Requires
		}
		if len(pub.children) > 0 {
			item["processes"] = processesOf(pub.children)
		}
		items = append(items, item)
	}
	return map[string]any{"items": items, "nextCursor": nullable(next)}, nil
}

// processesOf is a list_processes item's processes: each process step's
// bound child (baton-subprocess-1, docs/profile-subprocess.md §1.4).
func processesOf(children interpreter.Bindings) []map[string]any {
	out := make([]map[string]any, len(children))
	for i, b := range children {
		out[i] = map[string]any{"step": b.Step, "process": b.Process, "version": b.Version}
	}
	return out
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

// startRun starts a run of a published version. The process and the
// inputs are checked here, after the replay check (SPEC-DECISIONS §4), so
// a replay answers even after a newer version changed them.
func (g *Gateway) startRun(ctx context.Context, c *call) (json.RawMessage, error) {
	version := 0
	if v, ok := c.args["version"].(json.Number); ok {
		n, err := v.Int64()
		if err != nil {
			return nil, invalid("version must be a whole number.", "version: expected integer")
		}
		version = int(n)
	}
	name := c.str("process")
	pub, err := g.process(ctx, c.org, name, version)
	if errors.Is(err, store.ErrNotFound) {
		if version > 0 {
			return nil, notFound(fmt.Sprintf("Process %s has no published version %d.", interpreter.Quote(name), version))
		}
		return nil, interpreter.ErrNoProcess(name)
	}
	if err != nil {
		return nil, err
	}
	return g.runs.StartRun(ctx, workflows.Input{
		Org: c.org, RequestID: c.reqID, Digest: c.digest, InboxURL: g.opts.InboxURL, OmitBody: true,
		Start: interpreter.Start{
			Process: pub.p, Version: pub.version, Roles: pub.roles, Children: pub.children, Operators: g.opts.Operators,
			Inputs: c.object("inputs"), Mode: c.str("mode"), Starter: c.actor(),
			Limits: interpreter.Limits{RunDataBytes: g.opts.RunDataBytes, Check: g.opts.CheckLimits, Children: g.opts.MaxChildren},
		},
	})
}

func (g *Gateway) getRun(ctx context.Context, c *call) (any, error) {
	runID := c.str("runId")
	final, err := g.store.FinalView(ctx, c.org, runID)
	if errors.Is(err, store.ErrNotFound) {
		return g.getBegun(ctx, c, runID)
	}
	if err != nil {
		return nil, err
	}
	if final != nil {
		// An ended run's view never changes; it is served from the read
		// model, whatever Temporal's retention.
		return g.renderView(ctx, c, final)
	}
	raw, err := g.runs.ViewWithoutBody(ctx, runID)
	if errors.Is(err, workflows.ErrNoRun) {
		// It ended between the two reads.
		if final, err = g.store.FinalView(ctx, c.org, runID); err == nil && final != nil {
			return g.renderView(ctx, c, final)
		}
		return nil, interpreter.ErrRetry()
	}
	if err != nil {
		return nil, err
	}
	return g.renderView(ctx, c, raw)
}

// getBegun answers get_run of a run the read model has no row of: a
// child whose parent named it (its workflow started) before the child's
// own first write is read from its workflow, or answers retry while the
// workflow cannot answer yet; any other id is no run
// (docs/profile-subprocess.md §6). Only an id of the form Baton gives its
// runs is asked of Temporal.
func (g *Gateway) getBegun(ctx context.Context, c *call, runID string) (any, error) {
	if !runIDShaped(runID) {
		return nil, interpreter.ErrNoRun(runID)
	}
	begun, err := g.runs.Begun(ctx, c.org, runID)
	if err != nil {
		return nil, err
	}
	if !begun {
		return nil, interpreter.ErrNoRun(runID)
	}
	raw, err := g.runs.ViewWithoutBody(ctx, runID)
	if err != nil {
		return nil, interpreter.ErrRetry()
	}
	return g.renderView(ctx, c, raw)
}

// runIDShaped reports whether id has the form of the run ids Baton makes
// (workflows.RunID, interpreter.ChildRunID): r_ and 20 hex digits.
func runIDShaped(id string) bool {
	if len(id) != 22 || !strings.HasPrefix(id, "r_") {
		return false
	}
	_, err := hex.DecodeString(id[2:])
	return err == nil
}

func (g *Gateway) listRuns(ctx context.Context, c *call) (any, error) {
	f := store.RunFilter{Process: c.str("process"), State: c.str("state"), Parent: c.str("parent")}
	if in := c.object("inputs"); in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		f.Inputs = b
	}
	rows, next, err := g.store.ListRuns(ctx, c.org, f, limitOf(c), c.str("cursor"))
	if errors.Is(err, store.ErrBadCursor) {
		return nil, invalid("The cursor is not one this listing gave out.", "cursor: not valid")
	}
	if err != nil {
		return nil, err
	}
	items := make([]interpreter.RunListItem, len(rows))
	for i, r := range rows {
		it := interpreter.RunListItem{
			ID: r.RunID, Process: r.Process, Version: r.Version, State: r.State,
			StartedAt: interpreter.FormatTime(r.StartedAt), UpdatedAt: interpreter.FormatTime(r.UpdatedAt),
		}
		if r.Outcome != "" {
			it.Outcome = &r.Outcome
		}
		if err := interpreter.DecodeExact(r.Inputs, &it.Inputs); err != nil {
			return nil, err
		}
		items[i] = it
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

func (g *Gateway) cancel(ctx context.Context, c *call) (string, interpreter.Command, error) {
	return c.str("runId"), interpreter.Cancel{Actor: c.actor(), Reason: c.str("reason")}, nil
}

func (g *Gateway) sendEvent(ctx context.Context, c *call) (string, interpreter.Command, error) {
	return c.str("runId"), interpreter.SendEvent{Name: c.str("name"), Data: c.object("data"), Actor: c.actor()}, nil
}
