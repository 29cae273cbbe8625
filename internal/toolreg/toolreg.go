// Package toolreg is the tool registration of the baton-tools-1 profile
// (docs/profile-tools.md §1): the YAML file in which an operator registers
// the downstream MCP servers agents may call through Baton, with a policy
// for each tool. It parses and validates the file, reporting every issue
// with its line and column; and turns it into the interpreter's catalog,
// which publication checks a step's tools: key against. Its Server is the
// one shape of a tool server: parsed from the file, kept in PostgreSQL as
// it is by internal/store (with the server's last tool listing), and
// called by activities/downstream. It holds types and parsing only, so
// the store, the gateway and the worker all import it.
//
// Credentials are references (an environment variable or a file), never
// secrets: the secret is read where a call is made (activities/downstream).
package toolreg

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// Defaults and bounds of the file.
const (
	// DefaultTimeout is a server's timeout when the file names none.
	DefaultTimeout = 30 * time.Second
	// MinTimeout and MaxTimeout bound a server's timeout.
	MinTimeout = time.Second
	MaxTimeout = 10 * time.Minute
	// DefaultHeader and DefaultScheme are how credentials are sent unless
	// the file says otherwise: "Authorization: Bearer <secret>".
	DefaultHeader = "Authorization"
	DefaultScheme = "Bearer"
	// MaxFileBytes caps the size of a registration file.
	MaxFileBytes = 1 << 20
)

// File is a validated registration: the servers in the order written.
type File struct {
	Servers []Server
}

// Server is one downstream MCP server: as registered and, once stored, with
// its last tool listing.
type Server struct {
	// Name is how tool references name it: crm in crm/refund.
	Name string
	// URL is its Streamable HTTP MCP endpoint; TestURL, when not empty, the
	// one test runs use.
	URL     string
	TestURL string
	// Credentials is the reference to what Baton sends; nil for none.
	Credentials *Credentials
	// Timeout bounds one call.
	Timeout time.Duration
	// Tools are the registered tools in the order written.
	Tools []Tool
	// Listing is the server's last tools/list answer as stored; nil when it
	// never answered one (and in a parsed file). ListedAt is when it came
	// (zero without one).
	Listing  []ListedTool
	ListedAt time.Time
	// UpdatedAt is when the registration last changed the stored server;
	// zero in a parsed file.
	UpdatedAt time.Time
}

// ListedTool is one tool as its server's tools/list describes it.
type ListedTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Lister lists one server's tools (a tools/list call); the downstream
// client is one (activities/downstream).
type Lister func(ctx context.Context, s Server) ([]ListedTool, error)

// Credentials is a reference to a secret and how to send it: the value of
// the environment variable Env, or the contents of the file File (an
// absolute path once parsed), sent in Header as "Scheme value" (the value
// alone when Scheme is empty). The store keeps it as this JSON.
type Credentials struct {
	Env    string `json:"env,omitempty"`
	File   string `json:"file,omitempty"`
	Header string `json:"header"`
	Scheme string `json:"scheme"`
}

// Tool is one registered tool and its policy.
type Tool struct {
	Name        string
	Policy      interpreter.Policy
	Idempotency interpreter.Idempotency
	// Approvers are group ids; set only on approval_required tools.
	Approvers []string
	// ApprovalSLA is 0 for none.
	ApprovalSLA time.Duration
}

// Tool returns the registered tool named name, or nil.
func (s *Server) Tool(name string) *Tool {
	for i := range s.Tools {
		if s.Tools[i].Name == name {
			return &s.Tools[i]
		}
	}
	return nil
}

// Listed returns the listing of the named tool, or nil.
func (s *Server) Listed(tool string) *ListedTool {
	for i := range s.Listing {
		if s.Listing[i].Name == tool {
			return &s.Listing[i]
		}
	}
	return nil
}

// CatalogTool returns what publication and calls need to know of one
// registered tool.
func (s *Server) CatalogTool(t *Tool) interpreter.CatalogTool {
	return interpreter.CatalogTool{
		Server: s.Name, Tool: t.Name, Policy: t.Policy, Idempotency: t.Idempotency,
		Approvers: slices.Clone(t.Approvers), ApprovalSLA: t.ApprovalSLA,
	}
}

// Server returns the server named name, or nil.
func (f *File) Server(name string) *Server {
	if f == nil {
		return nil
	}
	for i := range f.Servers {
		if f.Servers[i].Name == name {
			return &f.Servers[i]
		}
	}
	return nil
}

// Tool returns the tool registered as ref ("server/tool") and its server,
// or nils.
func (f *File) Tool(ref string) (*Server, *Tool) {
	server, tool, ok := interpreter.SplitToolRef(ref)
	if !ok {
		return nil, nil
	}
	s := f.Server(server)
	if s == nil {
		return nil, nil
	}
	if t := s.Tool(tool); t != nil {
		return s, t
	}
	return nil, nil
}

// Catalog returns what publication and calls need to know of the
// registered tools. A nil File has an empty catalog.
func (f *File) Catalog() *interpreter.ToolCatalog {
	c := &interpreter.ToolCatalog{Tools: []interpreter.CatalogTool{}}
	if f == nil {
		return c
	}
	for i := range f.Servers {
		s := &f.Servers[i]
		for j := range s.Tools {
			c.Tools = append(c.Tools, s.CatalogTool(&s.Tools[j]))
		}
	}
	return c
}
