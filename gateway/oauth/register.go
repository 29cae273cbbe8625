package oauth

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// maxRegistrationBytes bounds a registration request's body.
const maxRegistrationBytes = 64 << 10

// registration is the part of an RFC 7591 registration request the server
// reads; other members are ignored.
type registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri"`
	Scope                   string   `json:"scope"`
	SoftwareID              string   `json:"software_id"`
	SoftwareVersion         string   `json:"software_version"`
}

// registered is the registration response (RFC 7591 §3.2.1): the client's
// metadata as registered, its id and, for a confidential client, its secret.
type registered struct {
	ClientID                string   `json:"client_id"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at,omitempty"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
	SoftwareID              string   `json:"software_id,omitempty"`
	SoftwareVersion         string   `json:"software_version,omitempty"`
}

// serveRegister is the RFC 7591 registration endpoint. Anyone may register:
// it is a dev server. Every client is registered for the authorization-code
// and refresh-token grants; a client with token_endpoint_auth_method "none"
// is public, any other gets a secret.
func (s *Server) serveRegister(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeError(w, oauthError("invalid_client_metadata", "send the client metadata as a JSON object with Content-Type: application/json"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRegistrationBytes))
	if err != nil {
		writeError(w, oauthError("invalid_client_metadata", fmt.Sprintf("registration request is over %d bytes or unreadable", maxRegistrationBytes)))
		return
	}
	var req registration
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, oauthError("invalid_client_metadata", "client metadata is not a JSON object of the RFC 7591 members: "+err.Error()))
		return
	}
	c, e := s.newClient(&req)
	if e != nil {
		writeError(w, e)
		return
	}
	var plainSecret string
	if c.AuthMethod != authNone {
		plainSecret = secret()
		c.SecretHash = digest(plainSecret)
	}
	if e := s.state.addClient(c, s.now()); e != nil {
		writeError(w, e)
		return
	}
	resp := registered{
		ClientID:                c.ID,
		ClientIDIssuedAt:        c.IssuedAt,
		RedirectURIs:            c.RedirectURIs,
		TokenEndpointAuthMethod: c.AuthMethod,
		GrantTypes:              []string{grantAuthorizationCode, grantRefreshToken},
		ResponseTypes:           []string{"code"},
		ClientName:              c.Name,
		ClientURI:               c.URI,
		Scope:                   c.Scope,
		SoftwareID:              c.SoftwareID,
		SoftwareVersion:         c.SoftwareVersion,
	}
	if plainSecret != "" {
		never := int64(0)
		resp.ClientSecret, resp.ClientSecretExpiresAt = plainSecret, &never
	}
	writeJSON(w, http.StatusCreated, resp)
}

// newClient checks a registration request and returns the client it
// registers, without a secret.
func (s *Server) newClient(req *registration) (*client, *Error) {
	if len(req.RedirectURIs) == 0 {
		return nil, oauthError("invalid_redirect_uri", "redirect_uris is empty: give at least one redirect URI")
	}
	for _, u := range req.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return nil, oauthError("invalid_redirect_uri", err.Error())
		}
	}
	method := req.TokenEndpointAuthMethod
	if method == "" {
		method = authSecretBasic // RFC 7591 §2
	}
	if !slices.Contains([]string{authNone, authSecretPost, authSecretBasic}, method) {
		return nil, oauthError("invalid_client_metadata", fmt.Sprintf("token_endpoint_auth_method %q is not supported: use none, client_secret_post or client_secret_basic", method))
	}
	for _, g := range req.GrantTypes {
		if g != grantAuthorizationCode && g != grantRefreshToken {
			return nil, oauthError("invalid_client_metadata", fmt.Sprintf("grant type %q is not supported: this server offers authorization_code and refresh_token", g))
		}
	}
	for _, t := range req.ResponseTypes {
		if t != "code" {
			return nil, oauthError("invalid_client_metadata", fmt.Sprintf("response type %q is not supported: this server offers code", t))
		}
	}
	return &client{
		ID:              "c_" + strings.ToLower(rand.Text()),
		AuthMethod:      method,
		RedirectURIs:    slices.Clone(req.RedirectURIs),
		Name:            req.ClientName,
		URI:             req.ClientURI,
		Scope:           req.Scope,
		SoftwareID:      req.SoftwareID,
		SoftwareVersion: req.SoftwareVersion,
		IssuedAt:        s.now().Unix(),
	}, nil
}

// checkRedirectURI checks a redirect URI a client registers (OAuth 2.1
// §2.3.1, RFC 8252): absolute, without fragment; http only to a loopback
// host; no scheme a browser would run or read locally.
func checkRedirectURI(s string) error {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() {
		return fmt.Errorf("redirect URI %q is not an absolute URI", s)
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return fmt.Errorf("redirect URI %q has a fragment, which OAuth forbids", s)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("redirect URI %q has no host", s)
		}
	case "http":
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("redirect URI %q is http to a host other than loopback: use https, or http://127.0.0.1:PORT for a native client", s)
		}
	case "javascript", "data", "file", "vbscript", "about", "blob":
		return fmt.Errorf("redirect URI %q has scheme %q, which cannot receive a code", s, u.Scheme)
	}
	return nil
}

// redirectMatches reports whether uri, from an authorization request, is
// one of the client's redirect URIs: exactly, or, for http to a loopback
// host, with any port (RFC 8252 §7.3, since native apps take a free port).
func redirectMatches(c *client, uri string) bool {
	if slices.Contains(c.RedirectURIs, uri) {
		return true
	}
	got, err := url.Parse(uri)
	if err != nil || got.Scheme != "http" || !isLoopback(got.Hostname()) {
		return false
	}
	for _, reg := range c.RedirectURIs {
		want, err := url.Parse(reg)
		if err != nil || want.Scheme != "http" || !isLoopback(want.Hostname()) {
			continue
		}
		if want.Hostname() == got.Hostname() && want.Path == got.Path && want.RawQuery == got.RawQuery && want.User == nil && got.User == nil {
			return true
		}
	}
	return false
}
