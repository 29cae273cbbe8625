// Package downstream calls tools on downstream MCP servers for the
// baton-tools-1 profile (docs/profile-tools.md §6.3): one tools/call over
// Streamable HTTP with the MCP Go SDK's client, the idempotency key in the
// request's _meta and as an Idempotency-Key header, the server's
// credentials read from their reference at the moment of the call, and a
// timeout. Its errors tell what a caller must know to stay exactly-once:
// whether the request was certainly not sent (safe to send again), or sent
// with no answer (it may have run), or answered with a protocol error.
// A tool's own error is not an error here: it is a result with isError.
//
// It also lists a server's tools, for the registration's listing that a
// claim's extension shows.
package downstream

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/baton-run/baton/internal/toolreg"
	"github.com/baton-run/baton/interpreter"
)

// Where the idempotency key travels (docs/profile-tools.md §5.2).
const (
	MetaIdempotencyKey   = "baton/idempotency-key"
	HeaderIdempotencyKey = "Idempotency-Key"
)

// DefaultTimeout bounds a call to an endpoint that names no timeout.
const DefaultTimeout = 30 * time.Second

// Endpoint is where and how to reach one server for one call; EndpointFor
// makes it from the registration.
type Endpoint struct {
	// Server names the server in messages: crm.
	Server string
	// URL is its Streamable HTTP MCP endpoint.
	URL string
	// Credentials is the reference to what to send; nil for none.
	Credentials *toolreg.Credentials
	// Timeout bounds the whole call: connecting, the call and its answer.
	// Default DefaultTimeout.
	Timeout time.Duration
}

// EndpointFor returns the endpoint a call of a registered server's tool
// goes to (docs/profile-tools.md §6.6), and whether it is sent at all. Live
// (test false; listing the tools is live): the url. In a test run: the
// test_url when the server has one; without one a read goes to the url,
// and any other call is not sent (send is false).
func EndpointFor(s toolreg.Server, test bool, policy interpreter.Policy) (ep Endpoint, send bool) {
	ep = Endpoint{Server: s.Name, URL: s.URL, Credentials: s.Credentials, Timeout: s.Timeout}
	if !test {
		return ep, true
	}
	if s.TestURL != "" {
		ep.URL = s.TestURL
		return ep, true
	}
	return ep, policy == interpreter.PolicyRead
}

// Options configure a Client.
type Options struct {
	// Transport sends the HTTP requests. Default: a clone of
	// http.DefaultTransport.
	Transport http.RoundTripper
	// LookupEnv reads a credentials variable. Default os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// ReadFile reads a credentials file. Default os.ReadFile.
	ReadFile func(string) ([]byte, error)
	// MaxResultBytes bounds a result kept and returned; a larger one is
	// replaced by a text saying so. Default interpreter.MaxToolResultBytes.
	MaxResultBytes int
	// Version is the client version sent in the MCP handshake. Default "1".
	Version string
	// Observe, when set, is told of every call: the server and tool, its
	// outcome (Outcome) and how long it took. telemetry.Metrics.DownstreamCall
	// is such an observer. Default none.
	Observe func(server, tool, outcome string, took time.Duration)
}

// Client calls downstream tools. It is safe for concurrent use; each call
// opens and closes its own MCP session.
type Client struct {
	opts Options
}

// New returns a client. Nil options mean defaults.
func New(opts *Options) (*Client, error) {
	c := &Client{}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.MaxResultBytes < 0 {
		return nil, fmt.Errorf("downstream: MaxResultBytes is %d; it must not be negative", c.opts.MaxResultBytes)
	}
	if c.opts.Transport == nil {
		c.opts.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	if c.opts.LookupEnv == nil {
		c.opts.LookupEnv = os.LookupEnv
	}
	if c.opts.ReadFile == nil {
		c.opts.ReadFile = os.ReadFile
	}
	if c.opts.MaxResultBytes == 0 {
		c.opts.MaxResultBytes = interpreter.MaxToolResultBytes
	}
	if c.opts.Version == "" {
		c.opts.Version = "1"
	}
	return c, nil
}

// ErrCredentials is wrapped by a CallError whose credentials could not be
// read.
var ErrCredentials = errors.New("credentials cannot be read")

// credentials reads an endpoint's secret: the header to set and its value,
// or "" for none.
func (c *Client) credentials(ep Endpoint) (header, value string, err error) {
	cr := ep.Credentials
	if cr == nil {
		return "", "", nil
	}
	var secret string
	switch {
	case cr.Env != "":
		v, ok := c.opts.LookupEnv(cr.Env)
		if !ok || v == "" {
			return "", "", fmt.Errorf("%w: the environment variable %s of %s is not set where calls are made", ErrCredentials, cr.Env, ep.Server)
		}
		secret = v
	case cr.File != "":
		b, err := c.opts.ReadFile(cr.File)
		if err != nil {
			return "", "", fmt.Errorf("%w: the credentials file of %s: %v", ErrCredentials, ep.Server, err)
		}
		secret = strings.TrimRight(string(b), "\r\n")
		if secret == "" {
			return "", "", fmt.Errorf("%w: the credentials file %s of %s is empty", ErrCredentials, cr.File, ep.Server)
		}
	default:
		return "", "", fmt.Errorf("%w: %s names neither env nor file", ErrCredentials, ep.Server)
	}
	if strings.ContainsAny(secret, "\r\n") {
		return "", "", fmt.Errorf("%w: the secret of %s spans lines", ErrCredentials, ep.Server)
	}
	header = cr.Header
	if header == "" {
		header = toolreg.DefaultHeader
	}
	if cr.Scheme != "" {
		secret = cr.Scheme + " " + secret
	}
	return header, secret, nil
}

func (ep Endpoint) timeout() time.Duration {
	if ep.Timeout > 0 {
		return ep.Timeout
	}
	return DefaultTimeout
}
