package inbox

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/baton-run/baton/gateway/auth"
)

// OIDCOptions sign people in with the OpenID Connect authorization-code
// flow (with PKCE and a nonce) against the issuer whose access tokens the
// gateway accepts. The person is who the ID token says, read from the same
// claims as bearer tokens: set the claim options as the gateway's token
// verifier has them.
type OIDCOptions struct {
	// Issuer is the provider's issuer URL; its discovery document is at
	// Issuer/.well-known/openid-configuration. Required.
	Issuer string
	// ClientID and ClientSecret are the inbox's client at the provider,
	// registered with the redirect URI BaseURL/inbox/callback. Required.
	ClientID, ClientSecret string
	// JWKSURL is where the provider's signing keys are. Default: the
	// discovery document's jwks_uri.
	JWKSURL string
	// Scopes are requested. Default openid, email, profile.
	Scopes []string
	// IDClaim, PersonIDClaim, KindClaim, GroupsClaim and OrgClaim name
	// the claims as in auth.JWKSOptions, with the same defaults: sub,
	// IDClaim, baton_kind, groups, org. An ID token without the kind claim
	// signs in a person; one without the organization claim, to the
	// default organization.
	IDClaim, PersonIDClaim, KindClaim, GroupsClaim, OrgClaim string
	// TrustUnverifiedEmail is auth.JWKSOptions.TrustUnverifiedEmail: with
	// PersonIDClaim "email", accept an ID token without email_verified:
	// true. Default false.
	TrustUnverifiedEmail bool
	// HTTPClient talks to the provider. Default: a client with a
	// 10-second timeout.
	HTTPClient *http.Client
}

// oidcClient is the inbox's side of the authorization-code flow.
type oidcClient struct {
	opts        OIDCOptions
	redirectURI string

	mu       sync.Mutex
	provider *provider // nil until discovery succeeded
}

// provider is what discovery found, and the ID token verifier built on it.
type provider struct {
	authEndpoint, tokenEndpoint string
	verify                      auth.Verifier
}

func newOIDCClient(o OIDCOptions, redirectURI string) (*oidcClient, error) {
	if o.Issuer == "" || o.ClientID == "" || o.ClientSecret == "" {
		return nil, errors.New("inbox: OIDC needs Issuer, ClientID and ClientSecret (the client registered at the provider)")
	}
	if len(o.Scopes) == 0 {
		o.Scopes = []string{"openid", "email", "profile"}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	return &oidcClient{opts: o, redirectURI: redirectURI}, nil
}

// discover reads the provider's discovery document on first use, so the
// gateway starts while the provider is down.
func (c *oidcClient) discover(ctx context.Context) (*provider, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.provider != nil {
		return c.provider, nil
	}
	u := strings.TrimRight(c.opts.Issuer, "/") + "/.well-known/openid-configuration"
	var doc struct {
		Issuer        string `json:"issuer"`
		AuthEndpoint  string `json:"authorization_endpoint"`
		TokenEndpoint string `json:"token_endpoint"`
		JWKSURI       string `json:"jwks_uri"`
	}
	if err := c.getJSON(ctx, u, &doc); err != nil {
		return nil, err
	}
	if doc.Issuer != c.opts.Issuer {
		return nil, fmt.Errorf("discovery at %s names issuer %q, not %q", u, doc.Issuer, c.opts.Issuer)
	}
	if doc.AuthEndpoint == "" || doc.TokenEndpoint == "" {
		return nil, fmt.Errorf("discovery at %s names no authorization or token endpoint", u)
	}
	jwks := c.opts.JWKSURL
	if jwks == "" {
		jwks = doc.JWKSURI
	}
	verify, err := auth.NewJWKSVerifier(ctx, &auth.JWKSOptions{
		Issuer: c.opts.Issuer, JWKSURL: jwks, Audience: c.opts.ClientID,
		IDClaim: c.opts.IDClaim, PersonIDClaim: c.opts.PersonIDClaim, TrustUnverifiedEmail: c.opts.TrustUnverifiedEmail,
		KindClaim:   c.opts.KindClaim,
		GroupsClaim: c.opts.GroupsClaim, OrgClaim: c.opts.OrgClaim, DefaultKind: auth.KindPerson, HTTPClient: c.opts.HTTPClient,
	})
	if err != nil {
		return nil, err
	}
	c.provider = &provider{authEndpoint: doc.AuthEndpoint, tokenEndpoint: doc.TokenEndpoint, verify: verify}
	return c.provider, nil
}

func (c *oidcClient) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch %s: %s", u, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}

// authURL is where the browser goes to sign in.
func (c *oidcClient) authURL(ctx context.Context, f flow) (string, error) {
	p, err := c.discover(ctx)
	if err != nil {
		return "", err
	}
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {c.opts.ClientID},
		"redirect_uri":          {c.redirectURI},
		"scope":                 {strings.Join(c.opts.Scopes, " ")},
		"state":                 {f.State},
		"nonce":                 {f.Nonce},
		"code_challenge":        {pkceChallenge(f.Verifier)},
		"code_challenge_method": {"S256"},
	}
	sep := "?"
	if strings.Contains(p.authEndpoint, "?") {
		sep = "&"
	}
	return p.authEndpoint + sep + q.Encode(), nil
}

func pkceChallenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return b64.EncodeToString(sum[:])
}

// exchange trades the code for tokens and returns who the ID token names.
func (c *oidcClient) exchange(ctx context.Context, code string, f flow) (*auth.Identity, error) {
	if code == "" {
		return nil, errors.New("the provider sent no code")
	}
	p, err := c.discover(ctx)
	if err != nil {
		return nil, err
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {c.redirectURI},
		"code_verifier": {f.Verifier},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.tokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(c.opts.ClientID), url.QueryEscape(c.opts.ClientSecret))
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("token request: %w", err)
	}
	defer resp.Body.Close()
	var tok struct {
		IDToken string `json:"id_token"`
		Error   string `json:"error"`
		Desc    string `json:"error_description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&tok); err != nil {
		return nil, fmt.Errorf("token response (%s): %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK || tok.IDToken == "" {
		return nil, fmt.Errorf("the provider gave no ID token (%s %s %s)", resp.Status, tok.Error, tok.Desc)
	}
	id, _, err := p.verify(ctx, tok.IDToken)
	if err != nil {
		return nil, fmt.Errorf("ID token: %w", err)
	}
	// The signature verified, so the payload can be read for the nonce.
	if n, err := tokenNonce(tok.IDToken); err != nil || !checkToken(n, f.Nonce) {
		return nil, errors.New("ID token: its nonce is not this sign-in's")
	}
	return id, nil
}

func tokenNonce(token string) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", errors.New("not a JWT")
	}
	payload, err := b64.DecodeString(parts[1])
	if err != nil {
		return "", err
	}
	var c struct {
		Nonce string `json:"nonce"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return "", err
	}
	return c.Nonce, nil
}
