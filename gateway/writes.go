package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/gowebpki/jcs"

	"github.com/baton-run/baton/interpreter"
)

// digest identifies a write: the tool, its arguments and the caller
// (SPEC-DECISIONS §5), and the caller's organization unless it is the
// default one (so digests made before there were organizations still
// match). The same requestId with another digest is a conflict; Temporal's
// update ids are requestIds, and the digest tells one organization's
// update from another's. It is hex, the one form the run echoes and
// the record keeps.
func digest(c *call) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", c.tool.name, c.id.Kind, c.id.ID)
	if c.orgTag != "" {
		fmt.Fprintf(h, "org\x00%s\x00", c.orgTag)
	}
	if !writeUploadCanon(h, c) {
		canon, err := jcs.Transform(c.raw)
		if err != nil {
			canon = c.raw
		}
		h.Write(canon)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// writeUploadCanon writes the canonical (JCS) form of an upload's
// arguments to w without making it whole: the file's base64, which JCS
// leaves as it is, goes straight from the decoded arguments into the
// hash, and only the rest is canonicalized. It reports false, having
// written nothing, for any other call, or when contentBase64 holds more
// than base64's alphabet; then the caller canonicalizes the raw
// arguments. Either way the digest is the same.
func writeUploadCanon(w io.Writer, c *call) bool {
	content, ok := c.args["contentBase64"].(string)
	if c.tool.name != interpreter.ToolUpload || !ok || strings.TrimLeft(content, base64Alphabet) != "" {
		return false
	}
	mark := rand.Text() // stands in for the content; no argument holds it
	rest := maps.Clone(c.args)
	rest["contentBase64"] = mark
	b, err := json.Marshal(rest)
	if err != nil {
		return false
	}
	canon, err := jcs.Transform(b)
	if err != nil {
		return false
	}
	before, after, found := bytes.Cut(canon, []byte(`"`+mark+`"`))
	if !found {
		return false
	}
	w.Write(before)
	w.Write([]byte{'"'})
	buf := make([]byte, 32<<10)
	for len(content) > 0 {
		n := copy(buf, content)
		w.Write(buf[:n])
		content = content[n:]
	}
	w.Write([]byte{'"'})
	w.Write(after)
	return true
}

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="

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
