package gateway

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// replay answers a write whose requestId was answered before (step 4 of
// the pipeline).
//
// A run records the answer of its write from inside the workflow task
// that applies it, and Temporal may lose that task: its server or its
// database fails before the task completes. The task then runs again with
// another time, or, when the update itself was lost, never applies the
// write at all, while the record is already there. So a recorded answer of
// a run's write is not trusted by itself: the write is sent to the run
// again under the same update id. Temporal answers a completed update id
// with the outcome it kept, even after the workflow closed, and the run
// answers ids it carried across continue-as-new; an update it never kept
// is applied now, once. Only when the run no longer answers for it (its
// workflow is gone, or the requestId is older than what the run carries)
// does the record stand.
//
// Answers the gateway recorded itself (upload) are replayed as stored.
func (g *Gateway) replay(ctx context.Context, c *call, stored json.RawMessage) (any, error) {
	t := c.tool
	if t.kind == ownWrite {
		return t.render(g, ctx, c, stored)
	}
	answer, err := g.rewrite(ctx, c)
	var e *interpreter.Error
	switch {
	case err == nil:
		// The record now holds what the run kept, for when the run no
		// longer answers.
		if rerr := g.store.ReplaceAnswer(ctx, nil, c.request(answer)); rerr != nil {
			g.opts.Logger.Warn("correcting a replayed call's record failed", "tool", t.name, "error", rerr)
		}
		return t.render(g, ctx, c, answer)
	case errors.Is(err, errRecordStands), errors.Is(err, workflows.ErrNoRun),
		errors.Is(err, workflows.ErrAnsweredBefore),
		errors.As(err, &e) && e.Code != interpreter.CodeRetry:
		return t.render(g, ctx, c, stored)
	}
	return nil, err
}

// errRecordStands says a recorded answer needs no word from the run.
var errRecordStands = errors.New("gateway: the recorded answer stands")

// rewrite sends a replayed write to its run again. It never starts a run
// that has ended, and tells no run of a refusal: a replay changes nothing
// but what Temporal never kept.
func (g *Gateway) rewrite(ctx context.Context, c *call) (json.RawMessage, error) {
	t := c.tool
	if t.kind == startWrite {
		// start_run: a run that ended kept its start (and its workflow may
		// be gone, so a start now would make another).
		row, err := g.store.GetRun(ctx, c.org, workflows.RunID(c.org, c.reqID))
		if err == nil && interpreter.RunState(row.State).Over() {
			return nil, errRecordStands
		}
		return t.write(g, ctx, c)
	}
	_, answer, err := g.send(ctx, c)
	return answer, err
}
