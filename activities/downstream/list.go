package downstream

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/toolreg"
)

// Tool is one tool as a server's tools/list describes it.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// ListTools returns every tool a server lists, across pages, bounded by
// the endpoint's timeout. A failure is a *CallError (NotSent or NoAnswer;
// listing has no effect, so either is safe to retry).
func (c *Client) ListTools(ctx context.Context, ep Endpoint) ([]Tool, error) {
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
	var out []Tool
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
		out = append(out, Tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return out, nil
}

// Lister returns the client as the registration's lister, for
// toolreg.Refresh.
func (c *Client) Lister() toolreg.Lister {
	return func(ctx context.Context, s toolreg.Server) ([]store.ListedTool, error) {
		tools, err := c.ListTools(ctx, FromRegistration(s))
		if err != nil {
			return nil, err
		}
		out := make([]store.ListedTool, len(tools))
		for i, t := range tools {
			out[i] = store.ListedTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
		}
		return out, nil
	}
}

// CheckArguments checks a call's arguments against a tool's listed input
// schema (docs/profile-tools.md §6.1 step 4). It returns the issues, each
// "arguments: <what>", or none when they match. A schema that is absent or
// that Baton cannot use (one with remote references) checks nothing: the
// server checks what it gets.
func CheckArguments(schema, arguments json.RawMessage) []string {
	if len(schema) == 0 || string(schema) == "null" {
		return nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil
	}
	var instance any
	if len(arguments) == 0 {
		instance = map[string]any{}
	} else if err := json.Unmarshal(arguments, &instance); err != nil {
		return []string{"arguments: " + err.Error()}
	}
	if err := resolved.Validate(instance); err != nil {
		return []string{"arguments: " + err.Error()}
	}
	return nil
}
