package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/gowebpki/jcs"

	"github.com/baton-run/baton/interpreter"
)

// digest identifies a write: the tool, its arguments and the caller
// (SPEC-DECISIONS §5), in hex, the one form the run echoes and the record
// keeps. The same requestId with another digest is a conflict.
func digest(c *call) string {
	canon, err := jcs.Transform(c.raw)
	if err != nil {
		canon = c.raw
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", c.tool.name, c.id.Kind, c.id.ID)
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil))
}

// noteRefusal hands the issues of a refused submission to the run, for the
// next attempt's handoff (spec §3.3); the refusal itself recorded nothing.
func (g *Gateway) noteRefusal(ctx context.Context, runID string, cmd interpreter.Command, e *interpreter.Error) {
	sub, ok := cmd.(interpreter.Submit)
	if !ok || e.Code != interpreter.CodeNotAccepted {
		return
	}
	note := interpreter.NoteRefusal{StepID: sub.StepID, LeaseID: sub.LeaseID, Issues: e.Issues}
	if err := g.runs.NoteRefusal(ctx, runID, note); err != nil {
		g.opts.Logger.WarnContext(ctx, "noting a refused submission failed", "run", runID, "error", err)
	}
}
