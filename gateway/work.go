package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

func (g *Gateway) getWork(ctx context.Context, c *call) (any, error) {
	f := store.WorkFilter{Process: c.str("process")}
	var (
		rows []store.WorkRow
		next string
		err  error
	)
	if c.id.Kind == auth.KindAgent {
		rows, next, err = g.store.ListAgentWork(ctx, c.org, f, limitOf(c), c.str("cursor"))
	} else {
		groups := c.id.Groups
		if c.id.Kind == auth.KindOperator {
			groups = append(append([]string(nil), groups...), g.opts.Operators)
		}
		rows, next, err = g.store.ListPersonWork(ctx, c.org, strings.ToLower(c.id.ID), groups, f, limitOf(c), c.str("cursor"))
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
				ReadySince: interpreter.FormatTime(r.ReadySince), Overdue: r.Overdue,
				Claim: interpreter.ClaimCall{Tool: "claim", Arguments: interpreter.ClaimCallArgs{RunID: r.RunID, StepID: r.StepID, RequestID: interpreter.RequestIDPlaceholder}},
			}
			if r.Due != nil {
				d := interpreter.FormatTime(*r.Due)
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
		w, err := personWork(r)
		if err != nil {
			return nil, err
		}
		items = append(items, w)
	}
	return map[string]any{"items": items, "nextCursor": nullable(next)}, nil
}

// personWork is a person's get_work item of an open work item, as the
// read model keeps it.
func personWork(r store.WorkRow) (interpreter.PersonWork, error) {
	w := interpreter.PersonWork{RunID: r.RunID, Process: r.Process, Version: r.Version, Mode: r.Mode}
	if err := interpreter.DecodeExact(r.Item, &w.WorkItem); err != nil {
		return interpreter.PersonWork{}, fmt.Errorf("work item %s of run %s: %w", r.WorkItemID, r.RunID, err)
	}
	return w, nil
}

// token verifies a claim token; one that does not verify is invalid.
func (g *Gateway) token(c *call) (runID, stepID, leaseID string, err error) {
	org, runID, stepID, leaseID, err := g.tokens.Verify(c.str("token"))
	if err != nil || org != c.org {
		return "", "", "", invalid("The token does not verify. Use the token claim or renew returned.", "token: does not verify")
	}
	return runID, stepID, leaseID, nil
}

func (g *Gateway) claim(ctx context.Context, c *call) (string, interpreter.Command, error) {
	return c.str("runId"), interpreter.Claim{StepID: c.str("stepId"), Actor: c.actor(), LeaseID: c.reqID, Lease: g.opts.Lease}, nil
}

func (g *Gateway) renew(ctx context.Context, c *call) (string, interpreter.Command, error) {
	runID, stepID, leaseID, err := g.token(c)
	if err != nil {
		return "", nil, err
	}
	return runID, interpreter.Renew{StepID: stepID, LeaseID: leaseID, NewLeaseID: c.reqID, Actor: c.actor(), Lease: g.opts.Lease, Progress: c.str("progress")}, nil
}

// submission reads a submission's arguments; verifyFiles checks its file
// evidence (spec §5).
func (c *call) submission() interpreter.Submission {
	return interpreter.Submission{
		Output: c.object("output"), Evidence: c.evidence(), Summary: c.optStr("summary"),
		Next: c.optStr("next"), Reason: c.optStr("reason"),
	}
}

// verifyFiles checks a submission's file evidence: each upload exists in
// this organization and its bytes still match the hash recorded at upload
// (see checkEvidence, which also caps the list).
func (g *Gateway) verifyFiles(ctx context.Context, org string, sub *interpreter.Submission) error {
	files, err := g.checkEvidence(ctx, org, sub.Evidence)
	if err != nil {
		return err
	}
	sub.Files = files
	return nil
}

func (g *Gateway) submit(ctx context.Context, c *call) (string, interpreter.Command, error) {
	runID, stepID, leaseID, err := g.token(c)
	if err != nil {
		return "", nil, err
	}
	sub := c.submission()
	if err := g.verifyFiles(ctx, c.org, &sub); err != nil {
		return "", nil, err
	}
	return runID, interpreter.Submit{StepID: stepID, LeaseID: leaseID, Actor: c.actor(), Submission: sub}, nil
}

func (g *Gateway) escalate(ctx context.Context, c *call) (string, interpreter.Command, error) {
	runID, stepID, leaseID, err := g.token(c)
	if err != nil {
		return "", nil, err
	}
	return runID, interpreter.Escalate{StepID: stepID, LeaseID: leaseID, Actor: c.actor(), Note: c.str("note")}, nil
}

func (g *Gateway) decide(ctx context.Context, c *call) (string, interpreter.Command, error) {
	dec := interpreter.Decide{
		WorkItemID: c.str("workItemId"), Snapshot: c.str("snapshot"), Decision: c.str("decision"),
		Actor: c.actor(), Note: c.optStr("note"), Submission: c.submission(),
	}
	// Argument combinations are invalid before anything else, even on a
	// run that has ended (SPEC-DECISIONS §1); the run checks the rest in
	// order.
	if err := interpreter.CheckDecideArguments(dec); err != nil {
		return "", nil, err
	}
	if err := g.verifyFiles(ctx, c.org, &dec.Submission); err != nil {
		return "", nil, err
	}
	return c.str("runId"), dec, nil
}
