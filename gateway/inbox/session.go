package inbox

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/baton-run/baton/gateway/auth"
)

// Sessions are signed cookies, not stored: the cookie holds who signed in
// (id, kind, groups, organization), the deployment's base URL, a random
// session id and an expiry, with an HMAC-SHA256 under a key derived from
// the gateway's secret. Any gateway of a deployment that shares the secret
// and the base URL accepts it, and nothing is kept on the server; a
// deployment at another base URL refuses it even when it shares the
// secret (a --secret-file of the default name, copied), and every call
// the session makes is its organization's. The price is that signing out clears the cookie in that
// browser but cannot revoke a copy of it: a session ends at its expiry
// (Options.SessionTTL) at the latest.

// The cookies the inbox sets, all HttpOnly, SameSite=Lax and limited to
// the inbox's path.
const (
	sessionCookie = "baton_inbox"
	// preCookie carries the nonce the sign-in form's CSRF token is made
	// from, before there is a session.
	preCookie = "baton_inbox_pre"
	// flowCookie carries an OpenID Connect sign-in in progress: its
	// state, nonce, PKCE verifier and where to go afterwards.
	flowCookie = "baton_inbox_flow"
)

// Purposes of the keys derived from the gateway's secret.
const (
	purposeSessions = "inbox-sessions"
	purposeCSRF     = "inbox-csrf"
)

// session is a signed-in person or operator.
type session struct {
	ID     string    `json:"id"`
	Kind   auth.Kind `json:"kind"`
	Groups []string  `json:"groups,omitempty"`
	// Org is the organization signed in to, never empty; Base is the
	// base URL of the deployment that signed the session in.
	Org  string `json:"org"`
	Base string `json:"base"`
	SID  string `json:"sid"`
	Exp  int64  `json:"exp"`
}

func (s *session) identity() auth.Identity {
	return auth.Identity{ID: s.ID, Kind: s.Kind, Groups: s.Groups, Org: s.Org}
}

// operator reports whether the session is an operator's.
func (s *session) operator() bool { return s.Kind == auth.KindOperator }

// signer signs and checks the inbox's cookies and CSRF tokens.
type signer struct {
	sessionKey, csrfKey []byte
	secure              bool
	path                string
	// base is the inbox's BaseURL and org its default organization.
	base, org string
}

func newSigner(secret []byte, secure bool, base, org string) *signer {
	return &signer{
		sessionKey: auth.DeriveKey(secret, purposeSessions),
		csrfKey:    auth.DeriveKey(secret, purposeCSRF),
		secure:     secure, path: Path, base: base, org: org,
	}
}

var b64 = base64.RawURLEncoding

var errBadCookie = errors.New("cookie does not verify")

// seal returns v as JSON with its MAC, for a cookie named name: a value
// sealed for one cookie never opens as another.
func (s *signer) seal(name string, v any) (string, error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	p := b64.EncodeToString(payload)
	return p + "." + b64.EncodeToString(s.mac(name, p)), nil
}

// open checks a sealed value and decodes it into v.
func (s *signer) open(name, value string, v any) error {
	p, sig, ok := strings.Cut(value, ".")
	if !ok {
		return errBadCookie
	}
	got, err := b64.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(name, p)) {
		return errBadCookie
	}
	payload, err := b64.DecodeString(p)
	if err != nil {
		return errBadCookie
	}
	if err := json.Unmarshal(payload, v); err != nil {
		return errBadCookie
	}
	return nil
}

func (s *signer) mac(name, payload string) []byte {
	m := hmac.New(sha256.New, s.sessionKey)
	m.Write([]byte(name))
	m.Write([]byte{0})
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// cookie returns a cookie of the inbox: HttpOnly, SameSite=Lax, Secure
// unless the inbox is served on loopback. A negative maxAge deletes it.
func (s *signer) cookie(name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: name, Value: value, Path: s.path, MaxAge: maxAge,
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode,
	}
}

// startSession sets the session cookie for id, bound to its organization
// (the default one when id names none) and to this inbox's base URL.
func (s *signer) startSession(w http.ResponseWriter, id auth.Identity, ttl time.Duration, now time.Time) error {
	v := session{ID: id.ID, Kind: id.Kind, Groups: id.Groups, Org: id.OrgOr(s.org), Base: s.base, SID: randomHex(16), Exp: now.Add(ttl).Unix()}
	sealed, err := s.seal(sessionCookie, v)
	if err != nil {
		return err
	}
	http.SetCookie(w, s.cookie(sessionCookie, sealed, int(ttl.Seconds())))
	return nil
}

// session returns the request's live session, or nil: a session of
// another base URL, or without an organization (made before sessions were
// bound to one), is no session here.
func (s *signer) session(r *http.Request, now time.Time) *session {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil
	}
	var v session
	if err := s.open(sessionCookie, c.Value, &v); err != nil || now.Unix() >= v.Exp || v.SID == "" {
		return nil
	}
	if v.Base != s.base || auth.CheckOrg(v.Org) != nil {
		return nil
	}
	id, err := v.identity().Normalize()
	if err != nil || (id.Kind != auth.KindPerson && id.Kind != auth.KindOperator) {
		return nil
	}
	return &v
}

// csrf is the CSRF token of forms shown in a session: an HMAC of its
// session id, so it changes with every sign-in and cannot be made without
// the key.
func (s *signer) csrf(sid string) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte("session\x00"))
	m.Write([]byte(sid))
	return b64.EncodeToString(m.Sum(nil))
}

// preCSRF is the CSRF token of the sign-in form, made from the nonce of
// the pre-session cookie.
func (s *signer) preCSRF(nonce string) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte("signin\x00"))
	m.Write([]byte(nonce))
	return b64.EncodeToString(m.Sum(nil))
}

// checkToken compares a posted token with the expected one in constant time.
func checkToken(posted, want string) bool {
	return posted != "" && hmac.Equal([]byte(posted), []byte(want))
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b)
}

// newRequestID is the requestId a form carries, made when the page is
// rendered: submitting the same form twice makes the same call twice, which
// the tools answer once.
func newRequestID() string { return "inbox-" + randomHex(16) }
