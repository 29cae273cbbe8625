package gateway

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/gateway/store"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

func (g *Gateway) getWork(ctx context.Context, c *call) (any, error) {
	f := store.WorkFilter{Process: c.str("process")}
	var (
		rows []store.WorkRow
		next string
		err  error
	)
	if c.id.Kind == auth.KindAgent {
		rows, next, err = g.store.ListAgentWork(ctx, g.opts.Org, f, limitOf(c), c.str("cursor"))
	} else {
		groups := c.id.Groups
		if c.id.Kind == auth.KindOperator {
			groups = append(append([]string(nil), groups...), g.opts.Operators)
		}
		rows, next, err = g.store.ListPersonWork(ctx, g.opts.Org, strings.ToLower(c.id.ID), groups, f, limitOf(c), c.str("cursor"))
	}
	if errors.Is(err, store.ErrBadCursor) {
		return nil, invalid("The cursor is not one this listing gave out.", "cursor: not valid")
	}
	if err != nil {
		return nil, err
	}
	items := []any{}
	for _, r := range rows {
		if c.id.Kind == auth.KindAgent {
			w := interpreter.AgentWork{
				RunID: r.RunID, StepID: r.StepID, Process: r.Process, Version: r.Version, Mode: r.Mode,
				ReadySince: stamp(r.ReadySince), Overdue: r.Overdue,
				Claim: interpreter.ClaimCall{Tool: "claim", Arguments: interpreter.ClaimCallArgs{RunID: r.RunID, StepID: r.StepID, RequestID: interpreter.RequestIDPlaceholder}},
			}
			if r.Due != nil {
				d := stamp(*r.Due)
				w.Due = &d
			}
			if len(r.Handoff) > 0 {
				w.Handoff = &interpreter.Handoff{}
				if err := json.Unmarshal(r.Handoff, w.Handoff); err != nil {
					return nil, err
				}
			}
			items = append(items, w)
			continue
		}
		items = append(items, map[string]any{
			"runId": r.RunID, "process": r.Process, "version": r.Version, "mode": r.Mode,
			"workItem": json.RawMessage(r.Item),
		})
	}
	return map[string]any{"items": items, "nextCursor": nullable(next)}, nil
}

// token verifies a claim token; one that does not verify is invalid.
func (g *Gateway) token(c *call) (runID, stepID, leaseID string, err error) {
	org, runID, stepID, leaseID, err := g.tokens.Verify(c.str("token"))
	if err != nil || org != g.opts.Org {
		return "", "", "", invalid("The token does not verify. Use the token claim or renew returned.", "token: does not verify")
	}
	return runID, stepID, leaseID, nil
}

func (g *Gateway) claim(ctx context.Context, c *call) (any, error) {
	return g.write(ctx, c, func(ctx context.Context, reqID string, d []byte) (any, error) {
		runID, stepID := c.str("runId"), c.str("stepId")
		v, err := g.update(ctx, runID, workflows.UpdateClaim, reqID, d, workflows.ClaimRequest{
			Digest: hex.EncodeToString(d), Org: g.opts.Org,
			Claim: interpreter.Claim{StepID: stepID, Actor: c.actor(), LeaseID: reqID, Lease: g.opts.Lease},
		})
		if err != nil {
			return nil, err
		}
		var res interpreter.ClaimResult
		if err := decodeExact(v, &res); err != nil {
			return nil, err
		}
		g.fillURLs(res.Data)
		return res.Wire(g.tokens.Sign(g.opts.Org, runID, stepID, res.LeaseID)), nil
	})
}

func (g *Gateway) renew(ctx context.Context, c *call) (any, error) {
	runID, stepID, leaseID, err := g.token(c)
	if err != nil {
		return nil, err
	}
	return g.write(ctx, c, func(ctx context.Context, reqID string, d []byte) (any, error) {
		v, err := g.update(ctx, runID, workflows.UpdateRenew, reqID, d, workflows.RenewRequest{
			Digest: hex.EncodeToString(d), Org: g.opts.Org,
			Renew: interpreter.Renew{StepID: stepID, LeaseID: leaseID, NewLeaseID: reqID, Actor: c.actor(), Lease: g.opts.Lease, Progress: c.str("progress")},
		})
		if err != nil {
			return nil, err
		}
		var res interpreter.RenewResult
		if err := decodeExact(v, &res); err != nil {
			return nil, err
		}
		return res.Wire(g.tokens.Sign(g.opts.Org, runID, stepID, res.LeaseID)), nil
	})
}

// submission reads a submission's arguments and verifies its file
// evidence against the stored bytes (spec §5).
func (g *Gateway) submission(ctx context.Context, c *call) (interpreter.Submission, error) {
	sub := interpreter.Submission{
		Output: c.object("output"), Evidence: c.evidence(), Summary: c.optStr("summary"),
		Next: c.optStr("next"), Reason: c.optStr("reason"), Files: map[string]interpreter.FileCheck{},
	}
	if _, ok := c.args["evidence"]; !ok {
		sub.Evidence = nil
	}
	for _, e := range sub.Evidence {
		if e.Kind != "file" {
			continue
		}
		check, err := g.checkFile(ctx, e.Ref)
		if err != nil {
			return sub, err
		}
		sub.Files[e.Ref] = check
	}
	return sub, nil
}

func (g *Gateway) submit(ctx context.Context, c *call) (any, error) {
	runID, stepID, leaseID, err := g.token(c)
	if err != nil {
		return nil, err
	}
	return g.write(ctx, c, func(ctx context.Context, reqID string, d []byte) (any, error) {
		sub, err := g.submission(ctx, c)
		if err != nil {
			return nil, err
		}
		v, err := g.update(ctx, runID, workflows.UpdateSubmit, reqID, d, workflows.SubmitRequest{
			Digest: hex.EncodeToString(d), Org: g.opts.Org,
			Submit: interpreter.Submit{StepID: stepID, LeaseID: leaseID, Actor: c.actor(), Submission: sub},
		})
		var e *interpreter.Error
		if errors.As(err, &e) && e.Code == interpreter.CodeNotAccepted {
			// The refusal recorded nothing; hand its issues to whoever
			// attempts the step next (spec §3.3).
			note := interpreter.NoteRefusal{StepID: stepID, LeaseID: leaseID, Issues: e.Issues}
			if serr := g.temporal.SignalWorkflow(ctx, runID, "", workflows.SignalRefusal, note); serr != nil {
				g.opts.Logger.Warn("noting a refused submission failed", "run", runID, "error", serr)
			}
		}
		if err != nil {
			return nil, err
		}
		return g.viewWithURLs(v)
	})
}

func (g *Gateway) escalate(ctx context.Context, c *call) (any, error) {
	runID, stepID, leaseID, err := g.token(c)
	if err != nil {
		return nil, err
	}
	return g.write(ctx, c, func(ctx context.Context, reqID string, d []byte) (any, error) {
		v, err := g.update(ctx, runID, workflows.UpdateEscalate, reqID, d, workflows.EscalateRequest{
			Digest:   hex.EncodeToString(d),
			Escalate: interpreter.Escalate{StepID: stepID, LeaseID: leaseID, Actor: c.actor(), Note: c.str("note")},
		})
		if err != nil {
			return nil, err
		}
		return g.viewWithURLs(v)
	})
}

func (g *Gateway) decide(ctx context.Context, c *call) (any, error) {
	return g.write(ctx, c, func(ctx context.Context, reqID string, d []byte) (any, error) {
		runID := c.str("runId")
		sub, err := g.submission(ctx, c)
		if err != nil {
			return nil, err
		}
		dec := interpreter.Decide{
			WorkItemID: c.str("workItemId"), Snapshot: c.str("snapshot"), Decision: c.str("decision"),
			Actor: c.actor(), Note: c.optStr("note"), Submission: sub,
		}
		// Argument combinations are invalid before anything else
		// (SPEC-DECISIONS §1); the workflow checks the rest in order.
		if err := interpreter.CheckDecideArguments(dec); err != nil {
			return nil, err
		}
		v, err := g.update(ctx, runID, workflows.UpdateDecide, reqID, d, workflows.DecideRequest{Digest: hex.EncodeToString(d), Org: g.opts.Org, Decide: dec})
		if err != nil {
			return nil, err
		}
		return g.viewWithURLs(v)
	})
}
