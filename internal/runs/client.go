// Package runs is the operator's view of runs for a terminal (`baton runs`):
// it lists runs, shows one, and cancels one by calling Baton's own MCP tools
// (list_runs, get_run, cancel) over MCP as an operator, so every rule is the
// tools' own, and it writes their answers for people to read.
//
// A refusal comes back as the tool's *interpreter.Error (not_found,
// forbidden, conflict, invalid), exactly as an MCP client would see it.
package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/interpreter"
)

// pageMax is the largest page list_runs gives (its limit argument).
const pageMax = 100

// ClientOptions configure a Client.
type ClientOptions struct {
	// MCP configures the MCP driver. Default: nil, its defaults.
	MCP *drive.MCPOptions
}

// Client calls the run tools of one Baton as one identity.
type Client struct {
	d   *drive.MCP
	who drive.Who
}

// NewClient returns a client of the MCP endpoint url (".../mcp") calling
// as who, with the bearer token token returns for who. Nil options mean
// defaults. Close it when done.
func NewClient(url string, who drive.Who, token func(drive.Who) (string, error), opts *ClientOptions) *Client {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	return &Client{d: drive.NewMCP(url, token, o.MCP), who: who}
}

// Close ends the MCP session.
func (c *Client) Close() error { return c.d.Close() }

// Filter selects runs, as list_runs' arguments do.
type Filter struct {
	// Process is a process name; "" for all.
	Process string
	// State is active, waiting, ended or cancelled; "" for all.
	State string
	// Inputs match runs whose inputs have these values; nil for all.
	Inputs map[string]any
	// Limit is how many runs to return at most. Default 0: 50.
	Limit int
}

// List calls list_runs, page after page, until it has f.Limit runs or
// there are no more. next is the cursor of the runs left beyond the limit,
// "" when none are.
func (c *Client) List(ctx context.Context, f Filter) (items []interpreter.RunListItem, next string, err error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	items = []interpreter.RunListItem{}
	cursor := ""
	for {
		args := map[string]any{"limit": min(pageMax, limit-len(items))}
		if f.Process != "" {
			args["process"] = f.Process
		}
		if f.State != "" {
			args["state"] = f.State
		}
		if f.Inputs != nil {
			args["inputs"] = f.Inputs
		}
		if cursor != "" {
			args["cursor"] = cursor
		}
		var page struct {
			Items      []interpreter.RunListItem `json:"items"`
			NextCursor *string                   `json:"nextCursor"`
		}
		if err := c.d.Call(ctx, c.who, "list_runs", args, &page); err != nil {
			return nil, "", err
		}
		items = append(items, page.Items...)
		if page.NextCursor == nil || *page.NextCursor == "" {
			return items, "", nil
		}
		if len(items) >= limit {
			return items, *page.NextCursor, nil
		}
		if len(page.Items) == 0 {
			return nil, "", errors.New("list_runs: an empty page with a next cursor")
		}
		cursor = *page.NextCursor
	}
}

// Get calls get_run and returns the run view as the tool gave it.
func (c *Client) Get(ctx context.Context, runID string) (json.RawMessage, error) {
	var v json.RawMessage
	if err := c.d.Call(ctx, c.who, "get_run", map[string]any{"runId": runID}, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// Cancel calls cancel with the reason and a fresh requestId, and returns
// the run view as the tool gave it.
func (c *Client) Cancel(ctx context.Context, runID, reason string) (json.RawMessage, error) {
	var v json.RawMessage
	args := map[string]any{"runId": runID, "reason": reason, "requestId": drive.RequestID()}
	if err := c.d.Call(ctx, c.who, "cancel", args, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// ParseInput reads one --input KEY=VALUE filter. VALUE is JSON when it
// reads as JSON (48000, true, "48000", {"a":1}), else the text itself.
func ParseInput(kv string) (string, any, error) {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return "", nil, fmt.Errorf("want KEY=VALUE, got %q", kv)
	}
	var x any
	if err := interpreter.DecodeExact([]byte(v), &x); err == nil {
		return k, x, nil
	}
	return k, v, nil
}
