package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// timeNow is the gateway's clock.
var timeNow = time.Now

// marshal encodes JSON as the tools answer it: compact, and without
// escaping <, > and & (SPEC-DECISIONS §9's sizes count them as written).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// The renderers turn a stored answer into a tool's data, adding what must
// be fresh on every answer and so is never stored: file links (spec §5)
// and claim tokens.

// renderView adds the process's body to a run view that left it out, and
// a short-lived url to every file evidence item.
func (g *Gateway) renderView(ctx context.Context, c *call, stored json.RawMessage) (any, error) {
	raw, err := g.withBody(ctx, c.org, stored)
	if err != nil {
		return nil, err
	}
	return g.viewWithURLs(c.org, raw)
}

// The gateway's writes ask their runs for answers without the body
// (workflows.Write.OmitBody): a run's body is its pinned version's, which
// never changes, so it is not kept in every answer's history event and
// record but added here, from the published version. Answers recorded
// before, and those of a worker from before, carry it and are left so.

// leftOutBody ends a run view as a run encodes it when it left the body
// out: body is its last field.
var leftOutBody = []byte(`,"body":""}`)

// withBody returns the run view raw with its process's body when raw left
// it out.
func (g *Gateway) withBody(ctx context.Context, org string, raw json.RawMessage) (json.RawMessage, error) {
	if bytes.HasSuffix(raw, leftOutBody) {
		var head struct {
			Run struct {
				Process string `json:"process"`
				Version int    `json:"version"`
			} `json:"run"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, err
		}
		pub, err := g.pinned(ctx, org, head.Run.Process, head.Run.Version)
		if err != nil {
			return nil, err
		}
		n := len(raw) - len(`""}`)
		out := make([]byte, 0, n+len(pub.body)+1)
		out = append(append(out, raw[:n]...), pub.body...)
		return append(out, '}'), nil
	}
	if !bytes.Contains(raw, []byte(`"body": ""`)) {
		return raw, nil
	}
	// A record PostgreSQL stored as jsonb (before its migration 013 kept
	// answers as given), which spaces it and orders its keys its own way.
	var v interpreter.View
	if err := interpreter.DecodeExact(raw, &v); err != nil {
		return nil, err
	}
	if v.Body != "" {
		return raw, nil // an empty "body" inside the run's data
	}
	pub, err := g.pinned(ctx, org, v.Run.Process, v.Run.Version)
	if err != nil {
		return nil, err
	}
	v.Body = pub.p.Body
	return marshal(&v)
}

// pinned returns the published version a run of it pinned.
func (g *Gateway) pinned(ctx context.Context, org, name string, version int) (published, error) {
	if name == "" || version < 1 {
		return published{}, fmt.Errorf("an answer names no process version (%q v%d) to take its body from", name, version)
	}
	pub, err := g.process(ctx, org, name, version)
	if err != nil {
		return published{}, fmt.Errorf("the body of %s v%d: %w", name, version, err)
	}
	return pub, nil
}

func (g *Gateway) viewWithURLs(org string, raw json.RawMessage) (any, error) {
	if !bytes.Contains(raw, []byte(`"file"`)) {
		// No file evidence (whose kind is "file"): nothing to add, so no
		// need to decode it. Answers stored as jsonb (before migration
		// 013) are spaced, so the test looks for the word alone.
		return raw, nil
	}
	var v interpreter.View
	if err := interpreter.DecodeExact(raw, &v); err != nil {
		return nil, err
	}
	g.fillURLs(org, v.Data)
	return &v, nil
}

// renderClaim signs the claim's token and adds file links. Answers
// recorded before tokens were signed on the way out hold their token.
func (g *Gateway) renderClaim(ctx context.Context, c *call, stored json.RawMessage) (any, error) {
	var res struct {
		interpreter.ClaimResult
		Token string `json:"token"`
	}
	if err := interpreter.DecodeExact(stored, &res); err != nil {
		return nil, err
	}
	if res.Body == "" && res.Process != "" {
		pub, err := g.pinned(ctx, c.org, res.Process, res.Version)
		if err != nil {
			return nil, err
		}
		res.Body = pub.p.Body
	}
	g.fillURLs(c.org, res.Data)
	tok := res.Token
	if tok == "" {
		tok = g.tokens.Sign(c.org, res.RunID, res.StepID, res.LeaseID)
	}
	w := res.Wire(tok)
	if len(res.Tools) > 0 {
		ext, err := g.toolsExtension(ctx, c.org, tok, &res.ClaimResult)
		if err != nil {
			return nil, err
		}
		w.Extensions = map[string]any{interpreter.ProfileTools: ext}
	}
	return w, nil
}

// renderRenew signs the renewed lease's token.
func (g *Gateway) renderRenew(_ context.Context, c *call, stored json.RawMessage) (any, error) {
	var res struct {
		interpreter.RenewResult
		Token string `json:"token"`
	}
	if err := interpreter.DecodeExact(stored, &res); err != nil {
		return nil, err
	}
	tok := res.Token
	if tok == "" {
		tok = g.tokens.Sign(c.org, res.RunID, res.StepID, res.LeaseID)
	}
	return res.Wire(tok), nil
}

// renderAsIs answers what was stored.
func renderAsIs(_ *Gateway, _ context.Context, _ *call, stored json.RawMessage) (any, error) {
	return stored, nil
}

func (g *Gateway) fillURLs(org string, d *interpreter.Data) {
	if d == nil {
		return
	}
	now := timeNow()
	fill := func(r *interpreter.Record) {
		if r == nil {
			return
		}
		for i := range r.Evidence {
			if r.Evidence[i].Kind == "file" {
				r.Evidence[i].URL = g.files.URL(org, r.Evidence[i].Ref, now)
			}
		}
	}
	for _, sd := range d.Steps {
		fill(sd.Record)
		for _, h := range sd.History {
			fill(h)
		}
	}
}
