package downstream

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/baton-run/baton/internal/toolreg"
)

// ListTools returns every tool a server lists, across pages, bounded by
// the endpoint's timeout. A failure is a *CallError (NotSent or NoAnswer;
// listing has no effect, so either is safe to retry).
func (c *Client) ListTools(ctx context.Context, ep Endpoint) ([]toolreg.ListedTool, error) {
	header, value, err := c.credentials(ep)
	if err != nil {
		return nil, &CallError{Kind: NotSent, Server: ep.Server, Message: err.Error(), Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, ep.timeout())
	defer cancel()
	track := &tracker{}
	cs, err := c.connect(ctx, ep, &callTransport{base: c.opts.Transport, header: header, value: value, track: track})
	if err != nil {
		return nil, c.classify(ctx, ep, err, track, false)
	}
	defer cs.Close()
	var out []toolreg.ListedTool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			e := c.classify(ctx, ep, err, track, false)
			e.Message = fmt.Sprintf("list the tools of %s: %s", ep.Server, e.Message)
			return nil, e
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("downstream: the input schema of %s/%s: %w", ep.Server, t.Name, err)
		}
		out = append(out, toolreg.ListedTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return out, nil
}

// Lister returns the client as the registration's lister, for
// store.RefreshToolListings.
func (c *Client) Lister() toolreg.Lister {
	return func(ctx context.Context, s toolreg.Server) ([]toolreg.ListedTool, error) {
		ep, _ := EndpointFor(s, false, "")
		return c.ListTools(ctx, ep)
	}
}
