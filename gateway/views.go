package gateway

import (
	"bytes"
	"context"
	"encoding/json"
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

// renderView adds a short-lived url to every file evidence item of a run
// view.
func (g *Gateway) renderView(_ context.Context, c *call, stored json.RawMessage) (any, error) {
	return g.viewWithURLs(c.org, stored)
}

func (g *Gateway) viewWithURLs(org string, raw json.RawMessage) (any, error) {
	if !bytes.Contains(raw, []byte(`"file"`)) {
		// No file evidence (whose kind is "file"): nothing to add, so no
		// need to decode it. Stored answers may be spaced (jsonb), so
		// the test looks for the word alone.
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
