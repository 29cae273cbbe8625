package oauth

import (
	"crypto/subtle"
	"net/http"
	"net/url"
)

// maxTokenRequestBytes bounds a token request's body.
const maxTokenRequestBytes = 64 << 10

// tokenResponse is a successful token response (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope,omitempty"`
}

// serveToken is the token endpoint: the authorization-code grant (with the
// PKCE verifier) and the refresh-token grant. Both answer an access token
// for the server's one resource and a new refresh token.
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenRequestBytes)
	if err := r.ParseForm(); err != nil {
		writeError(w, oauthError("invalid_request", "send the token request as an application/x-www-form-urlencoded body"))
		return
	}
	f := r.PostForm
	for k, v := range f {
		if len(v) > 1 && k != "resource" {
			writeError(w, oauthError("invalid_request", k+" is given more than once"))
			return
		}
	}
	c, e := s.authenticate(r)
	if e != nil {
		writeError(w, e)
		return
	}
	if e := s.checkResource(f["resource"]); e != nil {
		writeError(w, e)
		return
	}
	switch gt := f.Get("grant_type"); gt {
	case grantAuthorizationCode:
		s.exchangeCode(w, c, f)
	case grantRefreshToken:
		s.refresh(w, c, f)
	case "":
		writeError(w, oauthError("invalid_request", "grant_type is missing: use authorization_code or refresh_token"))
	default:
		writeError(w, oauthError("unsupported_grant_type", "grant_type "+gt+" is not supported: use authorization_code or refresh_token"))
	}
}

// authenticate returns the client making a token request: identified by
// client_id (a public client) or authenticated with its secret, in the body
// (client_secret_post) or in HTTP Basic (client_secret_basic).
func (s *Server) authenticate(r *http.Request) (*client, *Error) {
	id, sec := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	basicID, basicSecret, basic := r.BasicAuth()
	if basic {
		if sec != "" {
			return nil, oauthError("invalid_request", "the client authenticated twice (HTTP Basic and client_secret): use one")
		}
		// RFC 6749 §2.3.1: both are form-encoded before Basic encoding.
		var err1, err2 error
		basicID, err1 = url.QueryUnescape(basicID)
		basicSecret, err2 = url.QueryUnescape(basicSecret)
		if err1 != nil || err2 != nil || (id != "" && id != basicID) {
			return nil, unauthorized("HTTP Basic credentials are malformed or name another client than client_id")
		}
		id, sec = basicID, basicSecret
	}
	if id == "" {
		return nil, unauthorized("client_id is missing: send it in the body, or authenticate with HTTP Basic")
	}
	c, e := s.lookupClient(r.Context(), id)
	if e != nil {
		return nil, e
	}
	if c == nil {
		return nil, unauthorized("client " + id + " is not registered here: register again at " + s.opts.Issuer + RegisterPath)
	}
	if c.SecretHash == "" {
		if sec != "" {
			return nil, unauthorized("client " + id + " is public (token_endpoint_auth_method none) and has no secret: send client_id alone")
		}
		return c, nil
	}
	if sec == "" {
		return nil, unauthorized("client " + id + " must authenticate with the client_secret it was registered with")
	}
	if subtle.ConstantTimeCompare([]byte(digest(sec)), []byte(c.SecretHash)) != 1 {
		return nil, unauthorized("client_secret is wrong for client " + id)
	}
	return c, nil
}

// unauthorized is invalid_client, answered with 401 whatever the client
// tried (RFC 6749 §5.2 allows it): MCP clients take a 401 invalid_client to
// mean "register again", which is what a client this server forgot must do.
func unauthorized(desc string) *Error {
	return &Error{Code: "invalid_client", Description: desc, status: http.StatusUnauthorized}
}

// exchangeCode is the authorization-code grant.
func (s *Server) exchangeCode(w http.ResponseWriter, c *client, f url.Values) {
	value := f.Get("code")
	if value == "" {
		writeError(w, oauthError("invalid_request", "code is missing: send the code the redirect carried"))
		return
	}
	now := s.now()
	code, e := s.state.redeemCode(digest(value), now)
	if e != nil {
		writeError(w, e)
		return
	}
	if code.clientID != c.ID {
		writeError(w, oauthError("invalid_grant", "the code was issued to another client"))
		return
	}
	redirect := f.Get("redirect_uri")
	if (code.redirectSet || redirect != "") && redirect != code.redirectURI {
		writeError(w, oauthError("invalid_grant", "redirect_uri differs from the authorization request's; send the same one"))
		return
	}
	if e := checkVerifier(f.Get("code_verifier"), code.challenge); e != nil {
		writeError(w, e)
		return
	}
	g := &grant{
		Family:   code.family,
		ClientID: c.ID,
		Identity: fromIdentity(code.identity),
		Resource: s.resource,
		Scope:    code.scope,
		Expires:  now.Add(s.opts.RefreshTokenTTL),
	}
	refresh := secret()
	access, err := s.minter.IssueFor(code.identity, s.opts.Resource, s.opts.AccessTokenTTL)
	if err != nil {
		writeError(w, &Error{Code: "server_error", Description: "could not make an access token: " + err.Error(), status: http.StatusInternalServerError})
		return
	}
	s.state.addGrant(digest(refresh), g, now)
	s.writeTokens(w, access, refresh, g.Scope)
}

// refresh is the refresh-token grant. The token presented is spent and a
// new one returned; a scope, if asked for, must not widen the grant's.
func (s *Server) refresh(w http.ResponseWriter, c *client, f url.Values) {
	old := f.Get("refresh_token")
	if old == "" {
		writeError(w, oauthError("invalid_request", "refresh_token is missing"))
		return
	}
	next := secret()
	g, e := s.state.rotateRefresh(digest(old), digest(next), c.ID, s.resource, f.Get("scope"), s.now(), s.opts.RefreshTokenTTL)
	if e != nil {
		writeError(w, e)
		return
	}
	access, err := s.minter.IssueFor(g.Identity.identity(), s.opts.Resource, s.opts.AccessTokenTTL)
	if err != nil {
		writeError(w, &Error{Code: "server_error", Description: "could not make an access token: " + err.Error(), status: http.StatusInternalServerError})
		return
	}
	s.writeTokens(w, access, next, g.Scope)
}

func (s *Server) writeTokens(w http.ResponseWriter, access, refresh, scope string) {
	writeJSON(w, http.StatusOK, tokenResponse{
		AccessToken:  access,
		TokenType:    "Bearer",
		ExpiresIn:    int64(s.opts.AccessTokenTTL.Seconds()),
		RefreshToken: refresh,
		Scope:        scope,
	})
}
