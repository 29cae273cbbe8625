package drive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// plainVersion is the protocol version a plain call speaks: the stateless
// one, where every request says who the client is and nothing is opened
// first.
const plainVersion = "2026-07-28"

// plainClient sends tool calls as single JSON-RPC requests (MCPOptions.Plain).
type plainClient struct {
	url   string
	token func(Who) (string, error)
	http  *http.Client
	ids   atomic.Int64

	mu     sync.Mutex
	tokens map[string]string
}

// plainMeta is what every plain call says of its client in _meta.
var plainMeta = map[string]any{
	mcp.MetaKeyProtocolVersion:    plainVersion,
	mcp.MetaKeyClientInfo:         clientInfo,
	mcp.MetaKeyClientCapabilities: map[string]any{},
}

// bearer returns who's token, asked for once.
func (c *plainClient) bearer(who Who) (string, error) {
	key := string(who.Kind) + "\x00" + who.ID
	c.mu.Lock()
	tok, ok := c.tokens[key]
	c.mu.Unlock()
	if ok {
		return tok, nil
	}
	tok, err := c.token(who)
	if err != nil {
		return "", fmt.Errorf("token for %s %s: %w", who.Kind, who.ID, err)
	}
	c.mu.Lock()
	c.tokens[key] = tok
	c.mu.Unlock()
	return tok, nil
}

// call posts one tools/call and returns its result's first content, which
// must be text, and isError.
func (c *plainClient) call(ctx context.Context, who Who, tool string, args map[string]any) ([]byte, bool, error) {
	tok, err := c.bearer(who)
	if err != nil {
		return nil, false, err
	}
	if args == nil {
		args = map[string]any{}
	}
	id := c.ids.Add(1)
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args, "_meta": plainMeta},
	})
	if err != nil {
		return nil, false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", plainVersion)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, false, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, fmt.Errorf("HTTP %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, false, fmt.Errorf("the answer is %q, not one JSON response", mt)
	}
	var msg struct {
		ID     int64 `json:"id"`
		Result *struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &msg); err != nil {
		return nil, false, fmt.Errorf("the answer is not JSON-RPC: %w", err)
	}
	switch {
	case msg.Error != nil:
		return nil, false, fmt.Errorf("JSON-RPC error %d: %s", msg.Error.Code, msg.Error.Message)
	case msg.ID != id:
		return nil, false, fmt.Errorf("the answer is to request %d, not %d", msg.ID, id)
	case msg.Result == nil:
		return nil, false, errors.New("the answer has no result")
	case len(msg.Result.Content) == 0:
		return nil, false, errors.New("empty result")
	case msg.Result.Content[0].Type != "text":
		return nil, false, errors.New("result is not text")
	}
	return []byte(msg.Result.Content[0].Text), msg.Result.IsError, nil
}
