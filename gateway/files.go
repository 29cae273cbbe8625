package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/baton-run/baton/gateway/store"
	"github.com/baton-run/baton/interpreter"
)

// upload stores a file. Its id derives from the requestId, so a retried or
// racing upload with the same requestId stores the bytes once. Operators
// upload too: one completing an escalated step in the agent's place
// attaches its file evidence (spec §3.4).
func (g *Gateway) upload(ctx context.Context, c *call) (json.RawMessage, error) {
	b64 := c.str("contentBase64")
	if base64.StdEncoding.DecodedLen(len(b64)) > g.opts.MaxUploadBytes+3 {
		return nil, invalid(fmt.Sprintf("The file is over the %d-byte limit.", g.opts.MaxUploadBytes), fmt.Sprintf("contentBase64: over %d bytes", g.opts.MaxUploadBytes))
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, invalid("contentBase64 is not valid base64.", "contentBase64: not base64")
	}
	if len(data) > g.opts.MaxUploadBytes {
		return nil, invalid(fmt.Sprintf("The file is over the %d-byte limit.", g.opts.MaxUploadBytes), fmt.Sprintf("contentBase64: over %d bytes", g.opts.MaxUploadBytes))
	}
	id := g.derivedID("f_", c.reqID)
	f, err := g.store.PutFile(ctx, nil, store.File{
		Org: c.org, ID: id, Name: c.str("fileName"), ContentType: c.str("contentType"),
		Bytes: data, CreatedBy: c.id.ID,
	})
	if errors.Is(err, store.ErrExists) {
		if f, err = g.store.StatFile(ctx, c.org, id); err == nil && f.SHA256 != hex.EncodeToString(sha256Sum(data)) {
			return nil, conflict("This requestId was already used to upload other bytes; use a new one.", interpreter.IssueRequestIDReused)
		}
	}
	if err != nil {
		return nil, err
	}
	return marshal(map[string]any{"id": f.ID, "sha256": f.SHA256, "bytes": f.Size})
}

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// checkFile verifies a file evidence reference: the upload exists in this
// organization and its stored bytes still hash to what was recorded.
func (g *Gateway) checkFile(ctx context.Context, ref string) (interpreter.FileCheck, error) {
	f, err := g.store.GetFile(ctx, g.opts.Org, ref)
	if errors.Is(err, store.ErrNotFound) {
		return interpreter.FileCheck{}, nil
	}
	if err != nil {
		return interpreter.FileCheck{}, err
	}
	sum := sha256.Sum256(f.Bytes)
	return interpreter.FileCheck{Found: true, Matches: hex.EncodeToString(sum[:]) == f.SHA256, SHA256: f.SHA256}, nil
}

// serveFile serves an uploaded file through a signed, expiring link.
func (g *Gateway) serveFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	q := r.URL.Query()
	if err := g.files.Check(g.opts.Org, id, q.Get("exp"), q.Get("sig"), timeNow()); err != nil {
		http.Error(w, "This file link is not valid or has expired; read the run again for a fresh one.", http.StatusForbidden)
		return
	}
	f, err := g.store.GetFile(r.Context(), g.opts.Org, id)
	if errors.Is(err, store.ErrNotFound) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, "could not read the file", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", f.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(f.Bytes)))
	w.Header().Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", f.Name))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(f.Bytes)
}
