package soak

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/activities/downstream"
)

// The tools of the soak's tool server, one per policy of the mix. Each
// takes a "call" argument, unique to one call a client makes, so that every
// request the server receives is counted against the call that sent it.
const (
	// ToolLookup is registered read: it changes nothing.
	ToolLookup = "lookup"
	// ToolTicket is registered write with idempotency key: the server takes
	// one effect per key and answers a repeated key with its first answer.
	ToolTicket = "ticket"
	// ToolRefund is registered approval_required with idempotency key.
	ToolRefund = "refund"
	// ToolNote is registered write with idempotency none: every request
	// takes effect.
	ToolNote = "note"
)

// Received is one tools/call the tool server received.
type Received struct {
	Tool string
	// Call is the call argument: which call of a client it is.
	Call string
	// Key is the idempotency key of the request's _meta, HeaderKey the
	// Idempotency-Key header.
	Key, HeaderKey string
	At             time.Time
	// Effect is true when the request took effect: not answered from a
	// key seen before.
	Effect bool
}

// ToolServer is the downstream MCP server of the soak: a server of the
// four tools above that records every tools/call it receives.
type ToolServer struct {
	srv *http.Server
	url string

	mu       sync.Mutex
	received []Received
	answers  map[string]*mcp.CallToolResult // key → first answer
	effects  int
}

// StartToolServer serves the tool server on a free loopback port.
func StartToolServer() (*ToolServer, error) {
	s := &ToolServer{answers: map[string]*mcp.CallToolResult{}}
	m := mcp.NewServer(&mcp.Implementation{Name: "soak-tools", Version: "1"}, nil)
	type in struct {
		Call string `json:"call" jsonschema:"the calling client's id of this call"`
	}
	for _, name := range []string{ToolLookup, ToolTicket, ToolRefund, ToolNote} {
		mcp.AddTool(m, &mcp.Tool{Name: name, Description: "Soak tool " + name + "."},
			func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
				return s.serve(req, name, a.Call), nil, nil
			})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.url = "http://" + ln.Addr().String() + "/mcp"
	s.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed on Close
	return s, nil
}

// URL is the MCP endpoint.
func (s *ToolServer) URL() string { return s.url }

// Close stops serving.
func (s *ToolServer) Close() error { return s.srv.Close() }

// serve records a call and answers it: a key seen before on an effectful
// tool gets its first answer and no second effect.
func (s *ToolServer) serve(req *mcp.CallToolRequest, tool, call string) *mcp.CallToolResult {
	key, _ := req.Params.Meta[downstream.MetaIdempotencyKey].(string)
	r := Received{Tool: tool, Call: call, Key: key, At: time.Now()}
	if req.Extra != nil && req.Extra.Header != nil {
		r.HeaderKey = req.Extra.Header.Get(downstream.HeaderIdempotencyKey)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	dedupe := (tool == ToolTicket || tool == ToolRefund) && key != ""
	if first, ok := s.answers[key]; dedupe && ok {
		s.received = append(s.received, r)
		return first
	}
	r.Effect = tool != ToolLookup
	if r.Effect {
		s.effects++
	}
	s.received = append(s.received, r)
	out := map[string]any{"tool": tool, "call": call, "effect": s.effects}
	b, _ := json.Marshal(out)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: out}
	if dedupe {
		s.answers[key] = res
	}
	return res
}

// Received returns every tools/call received, oldest first.
func (s *ToolServer) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}
