// Package toolreg is the tool registration of the baton-tools-1 profile
// (docs/profile-tools.md §1): the YAML file in which an operator registers
// the downstream MCP servers agents may call through Baton, with a policy
// for each tool. It parses and validates the file, reporting every issue
// with its line and column; turns it into the interpreter's catalog, which
// publication checks a step's tools: key against; and keeps it in
// PostgreSQL through internal/store, with each server's last tool listing.
//
// Credentials are references (an environment variable or a file), never
// secrets: the secret is read where a call is made (activities/downstream).
package toolreg

import (
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

// Server is one downstream MCP server.
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
}

// Credentials is a reference to a secret and how to send it: the value of
// the environment variable Env, or the contents of the file File (an
// absolute path once parsed), sent in Header as "Scheme value" (the value
// alone when Scheme is empty).
type Credentials struct {
	Env    string
	File   string
	Header string
	Scheme string
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
	for i := range s.Tools {
		if s.Tools[i].Name == tool {
			return s, &s.Tools[i]
		}
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
	for _, s := range f.Servers {
		for _, t := range s.Tools {
			c.Tools = append(c.Tools, interpreter.CatalogTool{
				Server: s.Name, Tool: t.Name, Policy: t.Policy, Idempotency: t.Idempotency,
				Approvers: slices.Clone(t.Approvers), ApprovalSLA: t.ApprovalSLA,
			})
		}
	}
	return c
}
