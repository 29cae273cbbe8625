// Package oauth is the OAuth 2.1 authorization server of `baton dev`, so that
// an MCP client reaches a dev gateway with its URL alone.
//
// It serves what the MCP authorization spec asks of an authorization server:
// RFC 8414 metadata, client ID metadata documents (clients known by the
// https URL of their metadata) beside RFC 7591 dynamic client registration, the
// authorization-code grant with PKCE (S256 only), RFC 8707 resource
// indicators bound to the one gateway it serves, and refresh tokens that are
// rotated on every use. Its authorization page is the dev sign-in
// ([SignInPage]): there is no password, whoever reaches the loopback listener
// picks who they are. Access tokens are the gateway's dev tokens, made by
// [auth.DevIssuer.IssueFor] for the gateway's MCP URL alone, which the gateway
// checks with [auth.DevIssuer.VerifierFor].
//
// Other handlers of the gateway that need a dev identity (a web inbox, say)
// reuse the sign-in itself: render a [SignInPage] with their own hidden
// fields, and read the posted identity back with [ReadSignIn].
package oauth

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// The server's endpoints, relative to its issuer URL. The metadata of an
// issuer with a path, such as http://127.0.0.1:8080/oauth, is at the
// path inserted after MetadataPath (RFC 8414 §3.1:
// /.well-known/oauth-authorization-server/oauth), and also at the issuer
// URL followed by MetadataPath, for clients that look there.
const (
	MetadataPath  = "/.well-known/oauth-authorization-server"
	AuthorizePath = "/authorize"
	TokenPath     = "/token"
	RegisterPath  = "/register"
)

// Minter makes the access tokens the server hands out: a token for id, meant
// for audience alone, valid for ttl. [auth.DevIssuer] is one.
type Minter interface {
	IssueFor(id auth.Identity, audience string, ttl time.Duration) (string, error)
}

// Options configure a [Server].
type Options struct {
	// Issuer is the server's own URL as clients reach it, such as
	// http://127.0.0.1:8080/oauth: https, or http on a loopback host, with
	// no query or fragment. Handler serves the endpoints under its path,
	// so a server may share the gateway's listener. Required.
	Issuer string
	// Resource is the MCP endpoint tokens are issued for (RFC 8707), such as
	// http://127.0.0.1:8080/mcp. A client asking for any other resource is
	// refused with invalid_target. Required.
	Resource string
	// StateFile keeps registered clients and refresh tokens across restarts,
	// as JSON readable by the owner only. Default "": in memory only, so
	// clients register again after a restart.
	StateFile string
	// AccessTokenTTL is how long an access token is valid. Default 1 hour.
	AccessTokenTTL time.Duration
	// RefreshTokenTTL is how long a refresh token is valid; each use gives a
	// new one. Default 30 days.
	RefreshTokenTTL time.Duration
	// DefaultOrg is the organization of a sign-in that names none, shown
	// on the sign-in page. Default auth.DefaultOrg.
	DefaultOrg string
	// Operators is the group every operator who signs in belongs to.
	// Default interpreter.DefaultOperators.
	Operators string
	// Groups are the groups the sign-in page offers a person. Default none.
	Groups []string
	// Logger receives failures to save the state file. Default slog.Default().
	Logger *slog.Logger
	// LoopbackClientMetadata lets a client ID metadata document be
	// fetched from a loopback address, as baton dev does for clients that
	// serve theirs on the same machine. Other private addresses are never
	// fetched from. Default false: public addresses only.
	LoopbackClientMetadata bool
	// ClientMetadataRoots are the certificate authorities that verify the
	// servers of client ID metadata documents. Default nil: the system's.
	ClientMetadataRoots *x509.CertPool
}

// Server is the authorization server. Serve it with [Server.Handler].
type Server struct {
	minter   Minter
	opts     Options
	resource string // canonical form of opts.Resource, see canonicalResource
	path     string // the issuer URL's path: "" or like "/oauth"
	state    *state
	metadata *metadataClients
	now      func() time.Time
}

// New returns an authorization server that mints access tokens with m. Nil
// options are refused: Issuer and Resource have no defaults.
func New(m Minter, opts *Options) (*Server, error) {
	if m == nil {
		return nil, errors.New("oauth: a Minter is required: pass the dev issuer of the data folder")
	}
	if opts == nil {
		return nil, errors.New("oauth: Options are required: set at least Issuer and Resource")
	}
	o := *opts
	iss, err := checkIssuer(o.Issuer)
	if err != nil {
		return nil, err
	}
	o.Issuer = iss
	u, _ := url.Parse(iss)
	res, err := canonicalResource(o.Resource)
	if err != nil {
		return nil, fmt.Errorf("oauth: Options.Resource: %w; give the gateway's MCP URL, like http://127.0.0.1:8080/mcp", err)
	}
	if o.AccessTokenTTL == 0 {
		o.AccessTokenTTL = time.Hour
	}
	if o.AccessTokenTTL < time.Minute {
		return nil, fmt.Errorf("oauth: Options.AccessTokenTTL %v is under the minimum of 1m", o.AccessTokenTTL)
	}
	if o.RefreshTokenTTL == 0 {
		o.RefreshTokenTTL = 30 * 24 * time.Hour
	}
	if o.RefreshTokenTTL < o.AccessTokenTTL {
		return nil, fmt.Errorf("oauth: Options.RefreshTokenTTL %v is shorter than AccessTokenTTL %v", o.RefreshTokenTTL, o.AccessTokenTTL)
	}
	if o.Operators == "" {
		o.Operators = interpreter.DefaultOperators
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	st, err := loadState(o.StateFile, o.Logger)
	if err != nil {
		return nil, err
	}
	s := &Server{minter: m, opts: o, resource: res, path: u.Path, state: st, now: time.Now}
	s.metadata = newMetadataClients(&s.opts, func() time.Time { return s.now() })
	return s, nil
}

// Issuer is the server's issuer URL, the value the gateway's
// protected-resource metadata lists among its authorization servers.
func (s *Server) Issuer() string { return s.opts.Issuer }

// Handler serves the metadata, registration, authorization and token
// endpoints, under the issuer URL's path. The machine-facing ones answer
// browsers of any origin (CORS), since browser-based MCP clients call them
// from script. Every endpoint answers only requests whose Host is the
// issuer's ([RequireHost]). Mount it at [Server.Patterns] beside other
// handlers.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	meta := cors(http.HandlerFunc(s.serveMetadata), http.MethodGet)
	mux.Handle(MetadataPath+s.path, meta)
	if s.path != "" {
		mux.Handle(s.path+MetadataPath, meta)
	}
	mux.Handle(s.path+RegisterPath, cors(http.HandlerFunc(s.serveRegister), http.MethodPost))
	mux.Handle(s.path+TokenPath, cors(http.HandlerFunc(s.serveToken), http.MethodPost))
	mux.HandleFunc("GET "+s.path+AuthorizePath, s.serveAuthorize)
	mux.HandleFunc("POST "+s.path+AuthorizePath, s.serveSignIn)
	mux.HandleFunc("GET "+s.path+"/{$}", s.serveIndex)
	iss, _ := url.Parse(s.opts.Issuer) // checked by New
	return RequireHost(iss, mux)
}

// Patterns are the http.ServeMux patterns Handler answers: the issuer's
// path and the metadata's.
func (s *Server) Patterns() []string {
	if s.path == "" {
		return []string{"/"}
	}
	return []string{s.path + "/", MetadataPath + s.path}
}

// serveIndex tells a person who opened the server's URL what it is for.
func (s *Server) serveIndex(w http.ResponseWriter, _ *http.Request) {
	_ = renderPage(w, http.StatusOK, "index", struct{ Title, Resource string }{"Baton dev sign-in", s.opts.Resource})
}

// cors lets scripts of any origin call h with method (and GET for metadata),
// answering preflight requests itself; other methods get 405.
func cors(h http.Handler, method string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodOptions:
			w.Header().Set("Access-Control-Allow-Methods", method+", OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
			w.Header().Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
		case method, methodAlias(method):
			h.ServeHTTP(w, r)
		default:
			w.Header().Set("Allow", method+", OPTIONS")
			writeError(w, &Error{Code: "invalid_request", Description: r.Method + " is not allowed here; use " + method, status: http.StatusMethodNotAllowed})
		}
	})
}

// methodAlias is HEAD for GET, so metadata answers HEAD too.
func methodAlias(m string) string {
	if m == http.MethodGet {
		return http.MethodHead
	}
	return m
}

// checkIssuer checks an issuer URL and returns it without a trailing slash.
func checkIssuer(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("oauth: Options.Issuer %q is not an absolute URL: give the server's own URL, like http://127.0.0.1:8080/oauth", s)
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())) {
		return "", fmt.Errorf("oauth: Options.Issuer %q must be https, or http on a loopback host", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil || u.RawPath != "" {
		return "", fmt.Errorf("oauth: Options.Issuer %q has a query, fragment, user or escaped path: give scheme://host:port[/path] only", s)
	}
	return u.Scheme + "://" + u.Host + strings.TrimSuffix(u.Path, "/"), nil
}

// isLoopback reports whether host (without brackets or port) is localhost or
// a loopback IP address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// canonicalResource checks a resource indicator (RFC 8707 §2: an absolute
// URI without fragment) and returns the form resources are compared in:
// scheme and host lowercased, no trailing slash.
func canonicalResource(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return "", fmt.Errorf("resource %q is not an absolute URL", s)
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return "", fmt.Errorf("resource %q has a fragment", s)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}
