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
// workflow. Once the run answered, the record is asked at most once, and
// only when the run's answer is not the call's last word (afterRun).
func (g *Gateway) runWrite(ctx context.Context, c *call) (json.RawMessage, error) {
	replay := false
	if c.tool.kind == startWrite {
		// A run that ended kept its start, and its workflow may be gone,
		// so a start now would make another: its record answers. A start
		// of a run that exists is a replay (or the same start twice at
		// once).
		rec, err := g.store.Recall(ctx, store.Recall{Request: c.request(nil), RunID: workflows.RunID(c.org, c.reqID)})
		switch {
		case err != nil:
			return nil, err
		case interpreter.RunState(rec.RunState).Over():
			return fromRecord(rec, interpreter.ErrRequestIDReused())
		}
		replay = rec.RunState != ""
	}
	for tries := 0; ; tries++ {
		w, answer, err := g.send(ctx, c)
		if errors.Is(err, workflows.ErrNoRun) && c.tool.kind != startWrite && g.runs.Kept(ctx, w) == workflows.KeptNever {
			// The run ended without this write (its workflow closed and
			// says so): an answer its record holds is one a workflow
			// task stored and then lost.
			err = &workflows.FinalRefusal{Refusal: interpreter.ErrRunEnded()}
		}
		q, ask := c.afterRun(w.RunID, answer, err, replay)
		if !ask {
			return g.runsAnswer(ctx, c, w, answer, err)
		}
		rctx := ctx
		if q.Kind != store.RecallRead {
			// It writes, and must even when the call waited past
			// CallWait.
			rctx = context.WithoutCancel(ctx)
		}
		rec, rerr := g.store.Recall(rctx, q)
		if rerr != nil && q.Kind != store.RecallRead {
			g.opts.Logger.WarnContext(ctx, "asking the record of a write failed", "tool", c.tool.name, "kind", q.Kind, "error", rerr)
		}
		if q.Kind == store.RecallRefused && rerr == nil && rec.Ahead && tries < maxAttempts {
			// The refusal was an earlier call's, which Temporal remembers
			// under this attempt's update id: try the next.
			c.attempt = rec.Attempt
			continue
		}
		return g.settle(ctx, c, w, answer, err, q, rec, rerr)
	}
}

// afterRun says what a write asks the record once its run answered err
// (answer when nil), and whether it asks at all:
//
//   - a replayed start that the run answered sets the record to that
//     answer (the record held one the run never kept);
//   - a run whose workflow is not running, or that answered the
//     requestId before it continued as new, cannot answer: the record
//     does, read with the run's row;
//   - a refusal Temporal remembers under the update id (a failed check)
//     is counted, so a later try runs under the next attempt's id;
//   - a refusal from a run that kept every update id it answered, of a
//     requestId it answered under no attempt, is its last word: an
//     answer the record holds is one the run never kept (its workflow
//     task was lost), and is dropped;
//   - another refusal is a replay when the record holds this call's
//     answer (the run moved on, the process got a new version: §4), but
//     request_id_reused is the run's last word, save in an organization
//     that is not the default, where Temporal may have answered another
//     organization's update of the same id on a run that is not this
//     one's (its row tells);
//   - a run that did not answer may still apply the write: the requestId
//     is reserved for these arguments.
func (c *call) afterRun(runID string, answer json.RawMessage, err error, replay bool) (store.Recall, bool) {
	q := store.Recall{Request: c.request(nil), Kind: store.RecallRead}
	start := c.tool.kind == startWrite
	var e *interpreter.Error
	var recorded *workflows.RecordedRefusal
	var final *workflows.FinalRefusal
	switch {
	case err == nil:
		q.Kind, q.Result = store.RecallAnswered, answer
		return q, replay
	case errors.Is(err, workflows.ErrNoRun):
		if !start {
			q.RunID = runID
		}
	case errors.Is(err, workflows.ErrAnsweredBefore):
	case errors.As(err, &recorded) && !start:
		q.Kind, q.Attempt = store.RecallRefused, c.attempt
	case errors.As(err, &final) && !start && final.Refusal.Code != interpreter.CodeRetry && !isReused(final.Refusal):
		q.Kind = store.RecallDisowned
	case errors.As(err, &e) && e.Code != interpreter.CodeRetry:
		if isReused(e) {
			if start || c.orgTag == "" {
				return q, false
			}
			q.RunID = runID
		}
	default:
		q.Kind = store.RecallUnanswered
	}
	return q, true
}

// settle is a write's answer once the record told what it says of the
// call (rec, or rerr when it could not tell).
func (g *Gateway) settle(ctx context.Context, c *call, w workflows.Write, answer json.RawMessage, err error, q store.Recall, rec store.Recalled, rerr error) (json.RawMessage, error) {
	switch {
	case q.Kind == store.RecallAnswered:
		return answer, nil
	case q.Kind == store.RecallDisowned:
		// The run's last word: a record of an answer is one it never
		// kept, and Recall dropped it.
		var final *workflows.FinalRefusal
		errors.As(err, &final)
		return g.runsAnswer(ctx, c, w, nil, final.Refusal)
	case q.Kind == store.RecallUnanswered:
		if rerr == nil && rec.Said == store.SaidOther {
			return nil, interpreter.ErrRequestIDReused()
		}
		return nil, err
	case errors.Is(err, workflows.ErrNoRun):
		if rerr != nil {
			return nil, rerr
		}
		if c.tool.kind == startWrite {
			// The start discarded itself (its requestId was another
			// call's), or its run ended just now.
			return fromRecord(rec, interpreter.ErrRequestIDReused())
		}
		// No such run in this organization, or a run that ended
		// (run_ended comes before every other check of a write).
		if rec.RunState == "" {
			return fromRecord(rec, interpreter.ErrNoRun(w.RunID))
		}
		return fromRecord(rec, interpreter.ErrRunEnded())
	case errors.Is(err, workflows.ErrAnsweredBefore):
		if rerr != nil {
			return nil, rerr
		}
		return fromRecord(rec, interpreter.ErrRequestIDReused())
	}
	var recorded *workflows.RecordedRefusal
	if errors.As(err, &recorded) {
		err = recorded.Refusal
	}
	var e *interpreter.Error
	if errors.As(err, &e) && isReused(e) {
		if q.RunID != "" && rerr == nil && rec.RunState == "" {
			// Temporal answered another organization's update of the
			// same id: the run is not this organization's.
			return nil, interpreter.ErrNoRun(w.RunID)
		}
	} else if rerr == nil && rec.Said == store.SaidSame {
		return rec.Answer, nil
	}
	return g.runsAnswer(ctx, c, w, nil, err)
}

// runsAnswer ends a write whose answer is the run's: its answer, or its
// refusal, which the tool is told of.
func (g *Gateway) runsAnswer(ctx context.Context, c *call, w workflows.Write, answer json.RawMessage, err error) (json.RawMessage, error) {
	var e *interpreter.Error
	if errors.As(err, &e) && e.Code != interpreter.CodeRetry && c.tool.refused != nil && w.Command != nil {
		c.tool.refused(g, ctx, w.RunID, w.Command, e)
	}
	return answer, err
}

// send is the one way a call reaches a run: a start, or the tool's
// command, sent to its run in turn with this gateway's other writes to
// that run (runQueue). The write it returns names the run, and the command
// once the tool made it, whatever the error.
func (g *Gateway) send(ctx context.Context, c *call) (workflows.Write, json.RawMessage, error) {
	if c.tool.kind == startWrite {
		w := workflows.Write{Org: c.org, RequestID: c.reqID, Digest: c.digest, RunID: workflows.RunID(c.org, c.reqID)}
		answer, err := c.tool.write(g, ctx, c)
		return w, answer, err
	}
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

// fromRecord answers a write from its record when the run can no longer:
// the answer recorded for this call, conflict for a requestId recorded for
// another, and otherwise none.
func fromRecord(r store.Recalled, none error) (json.RawMessage, error) {
	switch r.Said {
	case store.SaidSame:
		return r.Answer, nil
	case store.SaidOther:
		return nil, interpreter.ErrRequestIDReused()
	}
	return nil, none
}

func isReused(e *interpreter.Error) bool {
	return slices.Contains(e.Issues, interpreter.IssueRequestIDReused)
}
