package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gowebpki/jcs"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/gateway/store"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// digest identifies a write: the tool, its arguments and the caller
// (SPEC-DECISIONS §5). The same requestId with another digest is a
// conflict.
func digest(c *call) []byte {
	canon, err := jcs.Transform(c.raw)
	if err != nil {
		canon = c.raw
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", c.tool, c.id.Kind, c.id.ID)
	h.Write(canon)
	return h.Sum(nil)
}

// write runs a write once per requestId. A replay returns the stored
// result unchanged, even when the run has ended since; the same requestId
// with other arguments or from another identity is a conflict; a refused
// call is not recorded, so a retry can succeed (spec §4, SPEC-DECISIONS
// §4–6).
//
// No connection is held while the write runs. Every write is idempotent by
// itself: a run's writes are Temporal updates whose update id is the
// requestId (Temporal answers a repeated id with its first answer, and
// concurrent ones with one execution), and uploads store the file under an
// id derived from the requestId. So two calls racing with one requestId
// get one answer, and the first to record it wins; a gateway that dies
// after the write but before recording it gets the same answer on retry.
func (g *Gateway) write(ctx context.Context, c *call, do func(ctx context.Context, reqID string, digest []byte) (any, error)) (any, error) {
	reqID := c.str("requestId")
	d := digest(c)
	stored, err := g.store.GetRequest(ctx, g.opts.Org, reqID)
	switch {
	case err == nil:
		return replayOf(stored, d)
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	data, err := do(ctx, reqID, d)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	stored, created, err := g.store.PutRequest(ctx, nil, store.Request{Org: g.opts.Org, RequestID: reqID, Tool: c.tool, Digest: d, Result: b})
	if err != nil {
		return nil, err
	}
	if !created {
		return replayOf(stored, d)
	}
	return json.RawMessage(b), nil
}

// replayOf answers a requestId that already has a record.
func replayOf(stored store.Request, d []byte) (any, error) {
	if !bytes.Equal(stored.Digest, d) || stored.Result == nil {
		return nil, conflict("This requestId was already used with other arguments or by another identity; use a new one.", interpreter.IssueRequestIDReused)
	}
	return stored.Result, nil
}

// checkRun makes sure a run belongs to this organization and has not
// ended: run_ended comes before every other check of a write.
func (g *Gateway) checkRun(ctx context.Context, runID string) error {
	row, err := g.store.GetRun(ctx, g.opts.Org, runID)
	if errors.Is(err, store.ErrNotFound) {
		return notFound(fmt.Sprintf("No run %q in this organization.", runID))
	}
	if err != nil {
		return err
	}
	if row.State == string(interpreter.RunEnded) || row.State == string(interpreter.RunCancelled) {
		return conflict("The run has ended; nothing more can be written to it.", interpreter.IssueRunEnded)
	}
	return nil
}

// update sends one write to a run's workflow, with the requestId as
// update id so a retry after a lost answer gets the original result.
func (g *Gateway) update(ctx context.Context, runID, name, reqID string, digest []byte, arg any) (json.RawMessage, error) {
	h, err := g.temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		UpdateID:     reqID,
		WorkflowID:   runID,
		UpdateName:   name,
		Args:         []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return nil, g.runGone(ctx, runID, err)
	}
	var res workflows.Result
	if err := h.Get(ctx, &res); err != nil {
		if e, ok := workflows.AsRefusal(err); ok {
			return nil, e
		}
		return nil, g.runGone(ctx, runID, err)
	}
	if res.Digest != hex.EncodeToString(digest) {
		return nil, conflict("This requestId was already used with other arguments; use a new one.", interpreter.IssueRequestIDReused)
	}
	return res.Value, nil
}

// runGone explains an update that found no running workflow.
func (g *Gateway) runGone(ctx context.Context, runID string, err error) error {
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		return err
	}
	if cerr := g.checkRun(ctx, runID); cerr != nil {
		return cerr
	}
	return conflict("The run has ended; nothing more can be written to it.", interpreter.IssueRunEnded)
}

func decodeExact(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}
