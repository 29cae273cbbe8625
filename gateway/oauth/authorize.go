package oauth

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/baton-run/baton/gateway/auth"
)

// How long a sign-in page stays good, and how long its code then does.
const (
	pendingTTL = 15 * time.Minute
	codeTTL    = 5 * time.Minute
)

// maxSignInBytes bounds a posted sign-in form.
const maxSignInBytes = 64 << 10

// authRequest is a checked authorization request.
type authRequest struct {
	clientID    string
	clientName  string
	redirectURI string
	redirectSet bool
	state       string
	challenge   string
	scope       string
}

// serveAuthorize is the authorization endpoint: it checks the request and
// shows the sign-in page. Until the client and its redirect URI are known
// good, errors are shown on a page; after that they go back to the client
// (RFC 6749 §4.1.2.1).
func (s *Server) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for _, p := range []string{"client_id", "redirect_uri"} {
		if len(q[p]) > 1 {
			s.errorPage(w, http.StatusBadRequest, p+" is given more than once; an authorization request names it once.")
			return
		}
	}
	c, e := s.lookupClient(r.Context(), q.Get("client_id"))
	if e != nil {
		s.errorPage(w, http.StatusBadRequest, e.Description+".")
		return
	}
	if c == nil {
		s.errorPage(w, http.StatusBadRequest, fmt.Sprintf("No client %q is registered here. Remove Baton from your MCP client and add it again, so that the client registers anew.", q.Get("client_id")))
		return
	}
	req := &authRequest{clientID: c.ID, clientName: c.Name, redirectURI: q.Get("redirect_uri"), state: q.Get("state"), scope: q.Get("scope")}
	switch {
	case req.redirectURI != "":
		if !redirectMatches(c, req.redirectURI) {
			s.errorPage(w, http.StatusBadRequest, fmt.Sprintf("The redirect URI %q is not one client %s registered, so this server will not send a code there.", req.redirectURI, c.ID))
			return
		}
		req.redirectSet = true
	case len(c.RedirectURIs) == 1:
		req.redirectURI = c.RedirectURIs[0]
	default:
		s.errorPage(w, http.StatusBadRequest, fmt.Sprintf("The request has no redirect_uri and client %s registered several: name one.", c.ID))
		return
	}
	for _, p := range []string{"response_type", "state", "scope", "code_challenge", "code_challenge_method"} {
		if len(q[p]) > 1 {
			s.redirectError(w, r, req, oauthError("invalid_request", p+" is given more than once"))
			return
		}
	}
	if rt := q.Get("response_type"); rt != "code" {
		s.redirectError(w, r, req, oauthError("unsupported_response_type", fmt.Sprintf("response_type %q is not supported: use code", rt)))
		return
	}
	if e := checkChallenge(q.Get("code_challenge"), q.Get("code_challenge_method")); e != nil {
		s.redirectError(w, r, req, e)
		return
	}
	req.challenge = q.Get("code_challenge")
	if e := s.checkResource(q["resource"]); e != nil {
		s.redirectError(w, r, req, e)
		return
	}
	key, err := s.state.addPending(req, s.now(), pendingTTL)
	if err != nil {
		s.errorPage(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	s.signInPage(w, http.StatusOK, req, key, "", nil)
}

// checkResource checks the resource parameters of a request (RFC 8707):
// none, which means the one resource this server serves, or exactly that one.
func (s *Server) checkResource(values []string) *Error {
	switch len(values) {
	case 0:
		return nil
	case 1:
	default:
		return oauthError("invalid_target", "more than one resource was asked for: this server issues tokens for "+s.opts.Resource+" alone")
	}
	got, err := canonicalResource(values[0])
	if err != nil {
		return oauthError("invalid_target", err.Error())
	}
	if got != s.resource {
		return oauthError("invalid_target", fmt.Sprintf("resource %q is not served here: this server issues tokens for %s alone", values[0], s.opts.Resource))
	}
	return nil
}

// serveSignIn takes the posted sign-in form: it sends the client a code for
// the identity picked, or access_denied when the person cancelled.
func (s *Server) serveSignIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSignInBytes)
	if err := r.ParseForm(); err != nil {
		s.errorPage(w, http.StatusBadRequest, "The sign-in form could not be read. Start again from your MCP client.")
		return
	}
	key := r.PostForm.Get("request")
	req := s.state.pendingRequest(key, s.now())
	if req == nil {
		s.errorPage(w, http.StatusBadRequest, "This sign-in expired or was already used. Start again from your MCP client.")
		return
	}
	if r.PostForm.Get("cancel") != "" {
		s.state.dropPending(key)
		s.redirectError(w, r, req, oauthError("access_denied", "the sign-in was cancelled"))
		return
	}
	id, err := ReadSignIn(r, s.opts.Operators)
	if err != nil {
		var in *SignInError
		if errors.As(err, &in) {
			s.signInPage(w, http.StatusBadRequest, req, key, err.Error(), &in.Value)
			return
		}
		s.errorPage(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.state.dropPending(key) {
		s.errorPage(w, http.StatusBadRequest, "This sign-in was already used. Start again from your MCP client.")
		return
	}
	value := secret()
	now := s.now()
	err = s.state.addCode(digest(value), &code{
		family:      rand.Text(),
		clientID:    req.clientID,
		redirectURI: req.redirectURI,
		redirectSet: req.redirectSet,
		challenge:   req.challenge,
		scope:       req.scope,
		identity:    id,
		expires:     now.Add(codeTTL),
	}, now)
	if err != nil {
		s.errorPage(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	s.redirect(w, r, req, url.Values{"code": {value}})
}

// redirectError sends an error back to the client's redirect URI.
func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, req *authRequest, e *Error) {
	s.redirect(w, r, req, url.Values{"error": {e.Code}, "error_description": {e.Description}})
}

// redirect sends the browser to the request's redirect URI with params,
// the request's state and this server's issuer (RFC 9207) added.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, req *authRequest, params url.Values) {
	u, err := url.Parse(req.redirectURI)
	if err != nil { // registered URIs were checked; this cannot happen
		s.errorPage(w, http.StatusInternalServerError, "The client's redirect URI cannot be parsed.")
		return
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if req.state != "" {
		q.Set("state", req.state)
	}
	q.Set("iss", s.opts.Issuer)
	u.RawQuery = q.Encode()
	status := http.StatusFound
	if r.Method == http.MethodPost {
		status = http.StatusSeeOther
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.String(), status)
}

// signInPage shows the sign-in form for a waiting request.
func (s *Server) signInPage(w http.ResponseWriter, status int, req *authRequest, key, problem string, value *auth.Identity) {
	who := req.clientName
	if who == "" {
		who = "An MCP client"
	}
	page := &SignInPage{
		Title:      "Sign in to Baton",
		Intro:      fmt.Sprintf("%s (client %s) asks to use Baton as you. After you sign in it receives a token for %s and you go back to %s.", who, req.clientID, s.opts.Resource, req.redirectURI),
		Action:     s.path + AuthorizePath,
		Hidden:     map[string]string{"request": key},
		Groups:     s.opts.Groups,
		Operators:  s.opts.Operators,
		DefaultOrg: s.opts.DefaultOrg,
		Error:      problem,
		Cancel:     true,
	}
	if value != nil {
		page.Value = *value
	}
	_ = page.Render(w, status)
}

// errorPage shows a problem the client cannot be told about.
func (s *Server) errorPage(w http.ResponseWriter, status int, msg string) {
	_ = renderError(w, status, "Baton sign-in", msg)
}
