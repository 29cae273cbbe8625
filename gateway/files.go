package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

// upload stores a file under a random id, recording its uploader and its
// requestId: a retried or racing upload with the same requestId stores the
// bytes once and answers the first one's id, and no one who knows the
// requestId can derive the id to attach the file as their evidence. Operators
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
	random := make([]byte, 16)
	if _, err := rand.Read(random); err != nil {
		return nil, err
	}
	f, err := g.store.PutFileWithinQuota(ctx, nil, store.File{
		Org: c.org, ID: "f_" + hex.EncodeToString(random), Name: c.str("fileName"), ContentType: c.str("contentType"),
		Bytes: data, CreatedBy: c.id.ID, RequestID: c.reqID,
	}, g.opts.UploadQuota.store())
	var quota *store.QuotaError
	if errors.As(err, &quota) {
		return nil, quotaRefusal(quota)
	}
	if errors.Is(err, store.ErrExists) {
		if f, err = g.store.StatFileByRequest(ctx, c.org, c.reqID); err == nil && f.SHA256 != hex.EncodeToString(sha256Sum(data)) {
			return nil, interpreter.ErrRequestIDReused()
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

// MaxEvidence is the most evidence items one submit or decide may carry.
// A longer list is invalid before anything else is read, with the issue
// "evidence: over 64 items". describe cannot publish it: core-2's describe
// result allows no other field in limits. docs/production.md does.
const MaxEvidence = 64

// checkEvidence verifies the file items of an evidence list (spec §5) and
// returns a check for each distinct file ref, for
// interpreter.Submission.Files: whether the upload exists in this
// organization and its stored bytes still hash to what was recorded. A list
// over MaxEvidence items is invalid. All the refs are checked in one round
// trip, the bytes hashed inside PostgreSQL and never read here, and a file
// verified within store.VerifiedFilesTTL is not hashed again.
func (g *Gateway) checkEvidence(ctx context.Context, org string, evidence []interpreter.Evidence) (map[string]interpreter.FileCheck, error) {
	if len(evidence) > MaxEvidence {
		return nil, invalid(fmt.Sprintf("At most %d evidence items may be attached to one call; this one has %d. Attach each file once.", MaxEvidence, len(evidence)),
			fmt.Sprintf("evidence: over %d items", MaxEvidence))
	}
	var refs []string
	for _, e := range evidence {
		if e.Kind == "file" {
			refs = append(refs, e.Ref)
		}
	}
	checks := make(map[string]interpreter.FileCheck, len(refs))
	if len(refs) == 0 {
		return checks, nil
	}
	found, err := g.store.VerifyFiles(ctx, org, refs)
	if err != nil {
		return nil, err
	}
	for ref, f := range found {
		checks[ref] = interpreter.FileCheck{Found: f.Found, Matches: f.Matches, SHA256: f.SHA256}
	}
	return checks, nil
}

// inlineTypes are the media types a browser shows without running anything
// in the gateway's origin: an uploaded file of any other type (HTML, SVG,
// XML, scripts, or a type that does not parse) is served as a download.
var inlineTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true,
	"application/pdf": true, "text/plain": true,
}

// fileHeaders returns the Content-Type and Content-Disposition an uploaded
// file is served with: its declared type, inline when that type is in
// inlineTypes and as an attachment otherwise (application/octet-stream when
// the declared type does not parse).
func fileHeaders(contentType, name string) (ctype, disposition string) {
	disposition = "attachment"
	ctype = "application/octet-stream"
	if mt, params, err := mime.ParseMediaType(contentType); err == nil {
		if ctype = mime.FormatMediaType(mt, params); ctype == "" {
			ctype = "application/octet-stream"
		}
		if inlineTypes[mt] {
			disposition = "inline"
		}
	}
	if d := mime.FormatMediaType(disposition, map[string]string{"filename": name}); d != "" {
		return ctype, d
	}
	return ctype, disposition
}

// serveFile serves an uploaded file through a signed, expiring link. The
// answer is always sandboxed (Content-Security-Policy: sandbox) and never
// sniffed, and only inert types are shown inline (see inlineTypes), so an
// uploaded page cannot run script as the gateway.
func (g *Gateway) serveFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	q := r.URL.Query()
	// The link names its organization; a link without one is the default
	// organization's, as links were before there were others.
	org := q.Get("org")
	if org == "" {
		org = g.opts.Org
	}
	if err := g.files.Check(org, id, q.Get("exp"), q.Get("sig"), timeNow()); err != nil {
		http.Error(w, "This file link is not valid or has expired; read the run again for a fresh one.", http.StatusForbidden)
		return
	}
	f, err := g.store.GetFile(r.Context(), org, id)
	if errors.Is(err, store.ErrNotFound) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, "could not read the file", http.StatusInternalServerError)
		return
	}
	ctype, disposition := fileHeaders(f.ContentType, f.Name)
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(f.Bytes)))
	h.Set("Content-Disposition", disposition)
	h.Set("Content-Security-Policy", "sandbox")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-store")
	_, _ = w.Write(f.Bytes)
}
