package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// A run's write reaches its run with no round trip to PostgreSQL first.
// The requestId is the update's id, so Temporal answers a repeated one
// with the outcome it kept; the run checks the digest it echoes. The run
// records the requestId and its answer in the transaction that publishes
// the write to the read model, and when that finds the requestId taken by
// another call (another run, another tool, other arguments), nothing is
// stored, the run discards the write and answers conflict
// request_id_reused.
//
// The record answers what Temporal no longer can: a run whose workflow
// closed or is gone, or a requestId the run answered before it continued
// as new. It is read only then, and when a write is refused: a refusal of
// a requestId answered before (the write's run moved on, the process got
// a new version) is a replay, answered from its record (SPEC-DECISIONS
// §4).

// maxAttempts bounds how many remembered refusals one call skips.
const maxAttempts = 16

// runWrite runs a write to a run: start_run, or one command to a run's
// workflow.
func (g *Gateway) runWrite(ctx context.Context, c *call) (json.RawMessage, error) {
	if c.tool.kind == startWrite {
		return g.start(ctx, c)
	}
	for tries := 0; ; tries++ {
		w, answer, err := g.send(ctx, c)
		if e, ok := err.(*interpreter.Error); ok && slices.Contains(e.Issues, interpreter.IssueRequestIDReused) && c.orgTag != "" {
			// Temporal answered another organization's update of the
			// same id: the run is not this organization's, unless it is.
			if _, gerr := g.store.GetRun(ctx, c.org, w.RunID); errors.Is(gerr, store.ErrNotFound) {
				return nil, interpreter.ErrNoRun(w.RunID)
			}
		}
		var recorded *workflows.RecordedRefusal
		switch {
		case errors.Is(err, workflows.ErrNoRun):
			return g.fromRecord(ctx, c, func() error { return g.runGone(ctx, c.org, w.RunID) })
		case errors.Is(err, workflows.ErrAnsweredBefore):
			return g.fromRecord(ctx, c, func() error { return interpreter.ErrRequestIDReused() })
		case errors.As(err, &recorded):
			// A refusal the run gave after its validator accepted (a
			// failed check): Temporal remembers it under the update id,
			// so a try of this request after it runs under the next one.
			// When the record counts more tries than this call made, the
			// refusal was an earlier call's, remembered: try the next.
			next, ahead, nerr := g.store.NoteRefusal(context.WithoutCancel(ctx), nil, c.request(nil), c.attempt)
			if nerr != nil {
				g.opts.Logger.WarnContext(ctx, "counting a refused attempt failed", "tool", c.tool.name, "error", nerr)
			}
			if ahead && tries < maxAttempts {
				c.attempt = next
				continue
			}
			err = recorded.Refusal
		}
		var e *interpreter.Error
		if errors.As(err, &e) && e.Code != interpreter.CodeRetry {
			if e.Code != interpreter.CodeConflict || !isReused(e) {
				if stored, ok := g.record(ctx, c); ok {
					return stored, nil
				}
			}
			if c.tool.refused != nil && w.Command != nil {
				c.tool.refused(g, ctx, w.RunID, w.Command, e)
			}
			return nil, err
		}
		if err != nil {
			return nil, g.unanswered(ctx, c, err)
		}
		return answer, nil
	}
}

// unanswered is the error of a write its run did not answer (the server
// failing, or waiting past CallWait): the write may still apply, so the
// requestId is reserved for these arguments, as a call that reserves
// first would have it. When it is reserved for others already, the call
// is a conflict.
func (g *Gateway) unanswered(ctx context.Context, c *call, err error) error {
	stored, created, rerr := g.store.ReserveRequest(context.WithoutCancel(ctx), nil, c.request(nil))
	if rerr == nil && !created && stored.Digest != c.digest {
		return interpreter.ErrRequestIDReused()
	}
	return err
}

// send is the one way a call reaches a run: the tool's command, sent to
// its run in turn with this gateway's other writes to that run (runQueue).
// The write it returns names the run and the command once the tool made
// them, whatever the error.
func (g *Gateway) send(ctx context.Context, c *call) (workflows.Write, json.RawMessage, error) {
	// The renderers add the body back (views.go).
	w := workflows.Write{Org: c.org, RequestID: c.reqID, Attempt: c.attempt, Digest: c.digest, OmitBody: true}
	var err error
	w.RunID, w.Command, err = c.tool.command(g, ctx, c)
	if err != nil {
		return w, nil, err
	}
	release, err := g.queue.acquire(ctx, w.RunID)
	if err != nil {
		return w, nil, interpreter.ErrRetry()
	}
	defer release()
	answer, err := g.runs.Write(ctx, w)
	return w, answer, err
}

// start runs start_run. A run that ended kept its start, and its workflow
// may be gone, so a start now would make another: its record answers. A
// start of a run that exists is a replay (or the same start twice at
// once): the record is set to what the run answers, so it is right when
// the record is all that is left.
func (g *Gateway) start(ctx context.Context, c *call) (json.RawMessage, error) {
	row, err := g.store.GetRun(ctx, c.org, workflows.RunID(c.org, c.reqID))
	switch {
	case err == nil && interpreter.RunState(row.State).Over():
		return g.fromRecord(ctx, c, func() error { return interpreter.ErrRequestIDReused() })
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	replay := err == nil
	answer, err := c.tool.write(g, ctx, c)
	var e *interpreter.Error
	switch {
	case errors.Is(err, workflows.ErrNoRun):
		// The run's workflow closed: the start discarded itself (its
		// requestId was another call's), or it ended just now.
		return g.fromRecord(ctx, c, func() error { return interpreter.ErrRequestIDReused() })
	case errors.As(err, &e) && e.Code != interpreter.CodeRetry:
		if stored, ok := g.record(ctx, c); ok && !isReused(e) {
			return stored, nil
		}
		return nil, err
	case err != nil:
		return nil, g.unanswered(ctx, c, err)
	case replay:
		if rerr := g.store.ReplaceAnswer(ctx, nil, c.request(answer)); rerr != nil {
			g.opts.Logger.WarnContext(ctx, "correcting a replayed start's record failed", "error", rerr)
		}
	}
	return answer, nil
}

// fromRecord answers a write from its record when the run can no longer:
// the answer recorded for this call, conflict for a requestId recorded for
// another, and otherwise none's error.
func (g *Gateway) fromRecord(ctx context.Context, c *call, none func() error) (json.RawMessage, error) {
	r, err := g.store.GetRequest(ctx, c.org, c.reqID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, none()
	case err != nil:
		return nil, err
	case r.Digest != c.digest && (r.Result != nil || (r.RunID != "" && !r.Refused)):
		return nil, interpreter.ErrRequestIDReused()
	case r.Digest == c.digest && r.Result != nil:
		return r.Result, nil
	}
	return nil, none()
}

// record is the answer recorded for this very call, if any.
func (g *Gateway) record(ctx context.Context, c *call) (json.RawMessage, bool) {
	r, err := g.store.GetRequest(ctx, c.org, c.reqID)
	if err != nil || r.Digest != c.digest || r.Result == nil {
		return nil, false
	}
	return r.Result, true
}

func isReused(e *interpreter.Error) bool {
	for _, i := range e.Issues {
		if i == interpreter.IssueRequestIDReused {
			return true
		}
	}
	return false
}
