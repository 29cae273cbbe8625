// Package crmtest is a real downstream MCP server for tests and the demo of
// the baton-tools-1 profile: "crm", with the tools get_customer,
// create_ticket and refund, built with the MCP Go SDK and served over
// Streamable HTTP.
//
// It keeps what a test needs to see: every HTTP request it received, the
// refused ones and those answered from an idempotency key included; every
// tools/call, with the idempotency key in its _meta and its Idempotency-Key
// header; how many calls of each tool took effect; the first answer of each
// key; the tickets and refunds made. Like a
// payment API it deduplicates effectful calls by idempotency key: the same
// key with the same arguments gets the first answer and takes no second
// effect, and the same key with other arguments is refused. A test can make
// it slow (SetDelay), unavailable (SetUnavailable, 503 on every request) or
// down (SetDown, connection refused).
package crmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MetaIdempotencyKey is the _meta key that carries the idempotency key
// (docs/profile-tools.md §5.2).
const MetaIdempotencyKey = "baton/idempotency-key"

// Options configure the server.
type Options struct {
	// Addr is the address to listen on. Default "127.0.0.1:0": a free
	// loopback port.
	Addr string
	// Token, when set, is required on every request: as "Bearer <token>"
	// in Authorization, or alone in Header when Header names another
	// header. Default "": no credentials.
	Token string
	// Header carries Token. Default "Authorization".
	Header string
	// IgnoreKeys makes the server ignore idempotency keys, like a server
	// registered with idempotency: none: every call takes effect. Default
	// false: calls are deduplicated by key.
	IgnoreKeys bool
	// Stateless serves without sessions (MCP protocol 2026-07-28). Default
	// false: sessions (protocol 2025-11-25).
	Stateless bool
	// RefundLimit is the largest refund the crm makes; larger ones answer
	// with a tool error. Default 500.
	RefundLimit float64
	// Logger receives a line for every call and effect. Default: none.
	Logger *slog.Logger
}

// Customer is one of the crm's customers.
type Customer struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
	Tier  string `json:"tier"`
}

// Customers are the crm's customers.
var Customers = []Customer{
	{ID: "c_001", Name: "Alice Martin", Email: "alice@example.com", Tier: "gold"},
	{ID: "c_002", Name: "Bob Stone", Email: "bob@example.com", Tier: "silver"},
	{ID: "c_003", Name: "Carol Diaz", Email: "carol@example.com", Tier: "bronze"},
}

// Ticket is a ticket the crm opened.
type Ticket struct {
	ID       string `json:"ticket"`
	Customer string `json:"customer"`
	Subject  string `json:"subject"`
	Body     string `json:"body,omitempty"`
}

// Refund is a refund the crm made.
type Refund struct {
	ID       string  `json:"refund"`
	Customer string  `json:"customer"`
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
	Reason   string  `json:"reason,omitempty"`
}

// Call is one tools/call the server received.
type Call struct {
	Tool      string
	Arguments json.RawMessage
	// MetaKey is the idempotency key in the request's _meta; HeaderKey the
	// Idempotency-Key header of its HTTP request.
	MetaKey   string
	HeaderKey string
	// Replayed is true when an earlier call with the key answered it.
	Replayed bool
}

// Request is one HTTP request the server received, whatever came of it:
// its JSON-RPC method, for a tools/call the tool and the idempotency key in
// its _meta, its Idempotency-Key header, and the credential header
// (Options.Header) as it arrived, whether the server requires one or not.
type Request struct {
	Method     string
	Tool       string
	MetaKey    string
	HeaderKey  string
	Credential string
}

// Server is a running crm.
type Server struct {
	opts Options
	mcp  *mcp.Server
	h    http.Handler

	mu          sync.Mutex
	addr        string
	srv         *http.Server
	down        bool
	unavailable bool
	delay       time.Duration
	calls       []Call
	requests    []Request
	effects     map[string]int
	tickets     []Ticket
	refunds     []Refund
	done        map[string]answer // idempotency key → first answer
}

// answer is a stored first answer of a key.
type answer struct {
	tool string
	args string // canonical enough: compacted arguments
	res  *mcp.CallToolResult
}

// Start starts a crm listening on opts.Addr.
func Start(opts *Options) (*Server, error) {
	s := New(opts)
	if err := s.listen(); err != nil {
		return nil, err
	}
	return s, nil
}

// New returns a crm that does not listen; Handler serves it. Nil options
// mean defaults.
func New(opts *Options) *Server {
	s := &Server{effects: map[string]int{}, done: map[string]answer{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Addr == "" {
		s.opts.Addr = "127.0.0.1:0"
	}
	if s.opts.Header == "" {
		s.opts.Header = "Authorization"
	}
	if s.opts.RefundLimit == 0 {
		s.opts.RefundLimit = 500
	}
	if s.opts.Logger == nil {
		s.opts.Logger = slog.New(slog.DiscardHandler)
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "crm", Version: "1.0.0"}, nil)
	s.addTools()
	mh := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: s.opts.Stateless, JSONResponse: s.opts.Stateless})
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.guard(mh))
	s.h = mux
	return s
}

// Handler serves the crm's MCP endpoint at /mcp.
func (s *Server) Handler() http.Handler { return s.h }

// URL returns the MCP endpoint, http://ADDR/mcp.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "http://" + s.addr + "/mcp"
}

// Close stops listening and serving.
func (s *Server) Close() error {
	s.mu.Lock()
	srv := s.srv
	s.srv, s.down = nil, true
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close()
}

// listen starts serving on the configured address (the same port again
// after SetDown(false)).
func (s *Server) listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	addr := s.addr
	if addr == "" {
		addr = s.opts.Addr
	}
	var ln net.Listener
	var err error
	for range 50 { // a just-closed port can take a moment to free
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("crm: listen on %s: %w", addr, err)
	}
	s.addr = ln.Addr().String()
	s.srv = &http.Server{Handler: s.h, ReadHeaderTimeout: 10 * time.Second}
	s.down = false
	go s.srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed on Close
	return nil
}

// SetDown takes the server down (connection refused) or brings it back up
// on the same address.
func (s *Server) SetDown(down bool) error {
	s.mu.Lock()
	isDown := s.down
	s.mu.Unlock()
	switch {
	case down && !isDown:
		return s.Close()
	case !down && isDown:
		return s.listen()
	}
	return nil
}

// SetUnavailable makes every request answer 503 Service Unavailable, or
// stops that.
func (s *Server) SetUnavailable(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unavailable = on
}

// SetDelay makes every tools/call answer d late. The call takes effect
// first, as a slow server's would: a caller that stops waiting does not
// know whether it happened.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Calls returns the tools/call requests received for tool ("" for all),
// oldest first.
func (s *Server) Calls(tool string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if tool == "" || c.Tool == tool {
			out = append(out, c)
		}
	}
	return out
}

// Requests returns every POST received, refused ones included, oldest
// first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Effects returns how many calls of tool took effect: found a customer,
// opened a ticket, made a refund. A call answered with a tool error or from
// its idempotency key took none.
func (s *Server) Effects(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.effects[tool]
}

// Answer returns the structured result the server first answered for an
// idempotency key (the one every later call with the key gets), and false
// when no call with the key took effect.
func (s *Server) Answer(key string) (json.RawMessage, bool) {
	s.mu.Lock()
	first, ok := s.done[key]
	s.mu.Unlock()
	if !ok || first.res == nil || first.res.IsError {
		return nil, false
	}
	b, err := json.Marshal(first.res.StructuredContent)
	if err != nil {
		return nil, false
	}
	return b, true
}

// Tickets returns the tickets opened, oldest first.
func (s *Server) Tickets() []Ticket {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tickets)
}

// Refunds returns the refunds made, oldest first.
func (s *Server) Refunds() []Refund {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.refunds)
}

// guard records each POST's JSON-RPC method and Idempotency-Key header,
// answers 503 while unavailable, and checks the credentials.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string         `json:"name"`
					Meta map[string]any `json:"_meta"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &msg)
			req := Request{Method: msg.Method, HeaderKey: r.Header.Get("Idempotency-Key"), Credential: r.Header.Get(s.opts.Header)}
			if msg.Method == "tools/call" {
				req.Tool = msg.Params.Name
				req.MetaKey, _ = msg.Params.Meta[MetaIdempotencyKey].(string)
			}
			s.mu.Lock()
			s.requests = append(s.requests, req)
			s.mu.Unlock()
		}
		s.mu.Lock()
		unavailable := s.unavailable
		s.mu.Unlock()
		if unavailable {
			http.Error(w, "crm is unavailable", http.StatusServiceUnavailable)
			return
		}
		if s.opts.Token != "" {
			want := s.opts.Token
			if strings.EqualFold(s.opts.Header, "Authorization") {
				want = "Bearer " + want
			}
			if r.Header.Get(s.opts.Header) != want {
				http.Error(w, "crm: missing or wrong credentials", http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

type getCustomerIn struct {
	Email string `json:"email" jsonschema:"the customer's email address"`
}

type createTicketIn struct {
	Customer string `json:"customer" jsonschema:"the customer's email address"`
	Subject  string `json:"subject" jsonschema:"one line: what the ticket is about"`
	Body     string `json:"body,omitempty" jsonschema:"the details"`
}

type refundIn struct {
	Customer string  `json:"customer" jsonschema:"the customer's email address"`
	Amount   float64 `json:"amount" jsonschema:"the amount to refund, more than 0"`
	Currency string  `json:"currency" jsonschema:"EUR or USD"`
	Reason   string  `json:"reason,omitempty" jsonschema:"why, for the customer's statement"`
	Ticket   string  `json:"ticket,omitempty" jsonschema:"the ticket the refund settles"`
}

func (s *Server) addTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "get_customer", Description: "Look up a customer by email address: id, name and tier."},
		func(ctx context.Context, req *mcp.CallToolRequest, in getCustomerIn) (*mcp.CallToolResult, any, error) {
			return serve(s, ctx, req, "get_customer", false, func() (any, error) {
				c, ok := customer(in.Email)
				if !ok {
					return nil, fmt.Errorf("no customer with email %q", in.Email)
				}
				return c, nil
			})
		})
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "create_ticket", Description: "Open a support ticket for a customer. Send an idempotency key: the same key opens one ticket."},
		func(ctx context.Context, req *mcp.CallToolRequest, in createTicketIn) (*mcp.CallToolResult, any, error) {
			return serve(s, ctx, req, "create_ticket", true, func() (any, error) {
				if _, ok := customer(in.Customer); !ok {
					return nil, fmt.Errorf("no customer with email %q", in.Customer)
				}
				if strings.TrimSpace(in.Subject) == "" {
					return nil, errors.New("a ticket needs a subject")
				}
				s.mu.Lock()
				t := Ticket{ID: fmt.Sprintf("T-%d", 1001+len(s.tickets)), Customer: in.Customer, Subject: in.Subject, Body: in.Body}
				s.tickets = append(s.tickets, t)
				s.mu.Unlock()
				s.opts.Logger.Info("crm: ticket opened", "ticket", t.ID, "customer", t.Customer, "subject", t.Subject)
				return t, nil
			})
		})
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "refund", Description: "Refund a customer. Moves money: send an idempotency key, the same key refunds once."},
		func(ctx context.Context, req *mcp.CallToolRequest, in refundIn) (*mcp.CallToolResult, any, error) {
			return serve(s, ctx, req, "refund", true, func() (any, error) {
				if _, ok := customer(in.Customer); !ok {
					return nil, fmt.Errorf("no customer with email %q", in.Customer)
				}
				switch {
				case in.Amount <= 0:
					return nil, errors.New("the amount must be more than 0")
				case in.Amount > s.opts.RefundLimit:
					return nil, fmt.Errorf("refunds over %g are not made here; a manager refunds them by hand", s.opts.RefundLimit)
				case in.Currency != "EUR" && in.Currency != "USD":
					return nil, fmt.Errorf("currency %q: EUR or USD", in.Currency)
				}
				s.mu.Lock()
				r := Refund{ID: fmt.Sprintf("R-%d", 5001+len(s.refunds)), Customer: in.Customer, Amount: in.Amount, Currency: in.Currency, Reason: in.Reason}
				s.refunds = append(s.refunds, r)
				s.mu.Unlock()
				s.opts.Logger.Info("crm: refund made", "refund", r.ID, "customer", r.Customer, "amount", r.Amount, "currency", r.Currency)
				return r, nil
			})
		})
}

// customer finds a customer by email, without case.
func customer(email string) (Customer, bool) {
	for _, c := range Customers {
		if strings.EqualFold(c.Email, email) {
			return c, true
		}
	}
	return Customer{}, false
}

// serve records a call, answers a repeated idempotency key from its first
// answer, and otherwise runs do, counting its effect. Only effectful tools
// are deduplicated; a lookup always runs. The result carries do's value as
// structured content and as JSON text, or do's error as a tool error.
func serve(s *Server, ctx context.Context, req *mcp.CallToolRequest, tool string, effectful bool, do func() (any, error)) (*mcp.CallToolResult, any, error) {
	metaKey, _ := req.Params.Meta[MetaIdempotencyKey].(string)
	headerKey := ""
	if req.Extra != nil && req.Extra.Header != nil {
		headerKey = req.Extra.Header.Get("Idempotency-Key")
	}
	var args bytes.Buffer
	_ = json.Compact(&args, req.Params.Arguments)
	call := Call{Tool: tool, Arguments: json.RawMessage(args.Bytes()), MetaKey: metaKey, HeaderKey: headerKey}

	key := metaKey
	if key == "" {
		key = headerKey
	}
	if metaKey != "" && headerKey != "" && metaKey != headerKey {
		s.record(call)
		return nil, nil, fmt.Errorf("the idempotency key in _meta (%s) and the Idempotency-Key header (%s) differ", metaKey, headerKey)
	}
	dedupe := effectful && key != "" && !s.opts.IgnoreKeys
	if dedupe {
		s.mu.Lock()
		first, seen := s.done[key]
		s.mu.Unlock()
		if seen {
			call.Replayed = true
			s.record(call)
			if first.tool != tool || first.args != args.String() {
				return nil, nil, fmt.Errorf("idempotency key %s was used for another call; use a new key for a new call", key)
			}
			s.opts.Logger.Info("crm: answered from the idempotency key", "tool", tool, "key", key)
			s.wait(ctx)
			return first.res, nil, nil
		}
	}
	s.record(call)
	out, err := do()
	if err == nil {
		s.mu.Lock()
		s.effects[tool]++
		s.mu.Unlock()
	}
	var res *mcp.CallToolResult
	if err != nil {
		res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
	} else {
		b, _ := json.Marshal(out)
		res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: out}
	}
	if dedupe {
		s.mu.Lock()
		s.done[key] = answer{tool: tool, args: args.String(), res: res}
		s.mu.Unlock()
	}
	s.wait(ctx)
	return res, nil, nil
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	s.opts.Logger.Info("crm: call", "tool", c.Tool, "arguments", string(c.Arguments), "key", c.MetaKey, "replayed", c.Replayed)
}

// wait sleeps the configured delay, or until the caller gives up.
func (s *Server) wait(ctx context.Context) {
	s.mu.Lock()
	d := s.delay
	s.mu.Unlock()
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
