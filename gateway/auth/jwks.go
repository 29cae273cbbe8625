package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// JWKSOptions configure [NewJWKSVerifier].
type JWKSOptions struct {
	// Issuer is the exact value the iss claim must have. Required.
	Issuer string
	// JWKSURL is where the issuer publishes its signing keys. It must be
	// https, or http on a loopback host. Exactly one of JWKSURL and JWKS is
	// required.
	JWKSURL string
	// JWKS is a static JSON Web Key Set ({"keys": [...]}), for when the keys
	// are configured rather than fetched. It is never refreshed.
	JWKS []byte
	// Audience must be the aud claim or one of its values. Required; usually
	// the gateway's resource URL.
	Audience string
	// IDClaim names the claim holding the caller's ID. Default "sub".
	IDClaim string
	// PersonIDClaim names the claim holding a person's ID, which must be
	// their email address. Default: IDClaim. When it is "email", a person's
	// token must also carry email_verified: true (the boolean, or the
	// string "true"), unless TrustUnverifiedEmail: with an issuer where
	// users set their own email, one user could otherwise take another's
	// person identity.
	PersonIDClaim string
	// TrustUnverifiedEmail accepts a person named by the email claim
	// without email_verified, for an issuer that only ever hands out
	// addresses it owns. Default false.
	TrustUnverifiedEmail bool
	// KindClaim names the claim saying agent, person or operator.
	// Default "baton_kind".
	KindClaim string
	// GroupsClaim names the claim listing the caller's groups (an array of
	// strings, or one string). Default "groups".
	GroupsClaim string
	// OrgClaim names the claim naming the caller's organization; a token
	// without it belongs to the deployment's default organization.
	// Default "org" (DefaultOrgClaim).
	OrgClaim string
	// DefaultKind is the kind of a caller whose token has no kind claim.
	// Default "": such tokens are refused.
	DefaultKind Kind
	// Scopes must all be granted by the token: in its scope claim (space
	// separated, RFC 8693 §4.2) or its scp claim (an array or a string).
	// Default none.
	Scopes []string
	// HTTPClient fetches JWKSURL. Default: a client with a 10-second timeout.
	// Whatever client is given, a redirect from https to http is refused.
	HTTPClient *http.Client
	// FetchTimeout bounds each fetch of JWKSURL after the first, which runs
	// apart from the request that needed it: a caller that gives up does not
	// cancel it, and concurrent callers share one fetch. Default 10 seconds.
	FetchTimeout time.Duration
	// RefreshInterval is the least time between two fetches of JWKSURL after
	// the first. A token signed by a key the verifier does not know makes it
	// fetch the set again, at most this often. Default 1 minute.
	RefreshInterval time.Duration
	// MaxKeyAge is how long fetched keys are used before the set is fetched
	// again, so that keys the issuer withdrew stop working. If that fetch
	// fails, the old keys stay in use. Default 1 hour.
	MaxKeyAge time.Duration
}

// maxJWKSBytes bounds the size of a fetched key set.
const maxJWKSBytes = 1 << 20

// NewJWKSVerifier returns a [Verifier] for JWT access tokens signed by the
// issuer described in opts with RS256, PS256 or ES256. A token is accepted
// when its signature verifies with a key of the issuer's JWKS, exp is in the
// future, nbf (if any) has passed, iss is the issuer and aud names the
// audience; the identity comes from the claims opts names. With JWKSURL, the
// key set is fetched before NewJWKSVerifier returns, using ctx.
func NewJWKSVerifier(ctx context.Context, opts *JWKSOptions) (Verifier, error) {
	if opts == nil {
		return nil, errors.New("JWKSOptions are required: set at least Issuer, Audience and JWKSURL or JWKS")
	}
	o := *opts
	if o.Issuer == "" {
		return nil, errors.New("JWKSOptions.Issuer is empty: set it to the iss value of the issuer's tokens")
	}
	if o.Audience == "" {
		return nil, errors.New("JWKSOptions.Audience is empty: set it to the aud value the issuer puts in tokens for this server")
	}
	if (o.JWKSURL == "") == (len(o.JWKS) == 0) {
		return nil, errors.New("JWKSOptions: set exactly one of JWKSURL and JWKS")
	}
	if o.JWKSURL != "" {
		if err := checkJWKSURL(o.JWKSURL); err != nil {
			return nil, err
		}
	}
	if o.IDClaim == "" {
		o.IDClaim = "sub"
	}
	if o.PersonIDClaim == "" {
		o.PersonIDClaim = o.IDClaim
	}
	if o.KindClaim == "" {
		o.KindClaim = "baton_kind"
	}
	if o.GroupsClaim == "" {
		o.GroupsClaim = "groups"
	}
	if o.OrgClaim == "" {
		o.OrgClaim = DefaultOrgClaim
	}
	if o.DefaultKind != "" && !o.DefaultKind.Valid() {
		return nil, fmt.Errorf("JWKSOptions.DefaultKind is %q: use %q, %q, %q or leave it empty", o.DefaultKind, KindAgent, KindPerson, KindOperator)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	o.HTTPClient = noDowngrade(o.HTTPClient)
	if o.FetchTimeout < 0 {
		return nil, fmt.Errorf("JWKSOptions.FetchTimeout is %v: it must not be negative", o.FetchTimeout)
	}
	if o.FetchTimeout == 0 {
		o.FetchTimeout = 10 * time.Second
	}
	if o.RefreshInterval < 0 {
		return nil, fmt.Errorf("JWKSOptions.RefreshInterval is %v: it must not be negative", o.RefreshInterval)
	}
	if o.RefreshInterval == 0 {
		o.RefreshInterval = time.Minute
	}
	if o.MaxKeyAge < 0 {
		return nil, fmt.Errorf("JWKSOptions.MaxKeyAge is %v: it must not be negative", o.MaxKeyAge)
	}
	if o.MaxKeyAge == 0 {
		o.MaxKeyAge = time.Hour
	}

	v := &jwksVerifier{opts: o}
	var set *keySet
	var err error
	if o.JWKSURL != "" {
		set, err = v.fetch(ctx)
	} else {
		set, err = parseJWKS(o.JWKS)
		if err != nil {
			err = fmt.Errorf("JWKSOptions.JWKS: %w", err)
		}
	}
	if err != nil {
		return nil, err
	}
	v.set.Store(set)
	return v.verify, nil
}

func checkJWKSURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("JWKSOptions.JWKSURL %q is not an absolute URL", s)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
	}
	return fmt.Errorf("JWKSOptions.JWKSURL %q must use https (http is allowed only on a loopback host)", s)
}

// noDowngrade returns a copy of c that refuses to follow a redirect from
// https to http, and otherwise follows redirects as c would.
func noDowngrade(c *http.Client) *http.Client {
	cc := *c
	next := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		for _, prev := range via {
			if prev.URL.Scheme == "https" && req.URL.Scheme != "https" {
				return fmt.Errorf("refusing the redirect from %s to %s: the key set must stay on https", prev.URL.Redacted(), req.URL.Redacted())
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cc
}

type jwksVerifier struct {
	opts JWKSOptions
	set  atomic.Pointer[keySet]

	mu        sync.Mutex // guards lastFetch and inflight
	lastFetch time.Time  // when the last refresh was started
	inflight  *refetch   // the refresh under way, or nil
}

// refetch is one refresh of the key set, shared by every caller that needs
// it while it runs.
type refetch struct {
	done chan struct{} // closed when set and err are final
	set  *keySet
	err  error
}

type keySet struct {
	keys    []*jwk
	fetched time.Time
}

func (v *jwksVerifier) verify(ctx context.Context, token string) (*Identity, time.Time, error) {
	j, err := parseJWS(token)
	if err != nil {
		return nil, time.Time{}, err
	}
	switch j.header.Alg {
	case "RS256", "PS256", "ES256":
	default:
		return nil, time.Time{}, fmt.Errorf("%w: algorithm %q is not accepted (RS256, PS256 or ES256)", ErrInvalidToken, j.header.Alg)
	}
	key, err := v.key(ctx, j.header.Kid, j.header.Alg)
	if err != nil {
		return nil, time.Time{}, err
	}
	if err := key.verify(j.header.Alg, j.signingInput, j.signature); err != nil {
		return nil, time.Time{}, fmt.Errorf("%w: signature does not verify with key %q", ErrInvalidToken, key.kid)
	}
	c, err := decodeClaims(j.payload)
	if err != nil {
		return nil, time.Time{}, err
	}
	exp, err := c.checkTimes(time.Now())
	if err != nil {
		return nil, time.Time{}, err
	}
	if err := c.checkIssuer(v.opts.Issuer); err != nil {
		return nil, time.Time{}, err
	}
	if err := c.checkAudience(v.opts.Audience); err != nil {
		return nil, time.Time{}, err
	}
	if err := c.checkScopes(v.opts.Scopes); err != nil {
		return nil, time.Time{}, err
	}
	o := v.opts
	id, err := identityFromClaims(c, claimNames{
		id: o.IDClaim, personID: o.PersonIDClaim, kind: o.KindClaim, groups: o.GroupsClaim, org: o.OrgClaim,
		defaultKind: o.DefaultKind, trustUnverifiedEmail: o.TrustUnverifiedEmail,
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	return id, exp, nil
}

// key finds the key for kid and alg, fetching the key set again when the key
// is unknown or the set is older than MaxKeyAge (at most once per
// RefreshInterval).
func (v *jwksVerifier) key(ctx context.Context, kid, alg string) (*jwk, error) {
	set := v.set.Load()
	k, err := set.find(kid, alg)
	if v.opts.JWKSURL == "" || (err == nil && time.Since(set.fetched) < v.opts.MaxKeyAge) {
		return k, err
	}
	set, fetchErr := v.refresh(ctx, set)
	if k, err = set.find(kid, alg); err != nil && fetchErr != nil {
		err = fmt.Errorf("%w (fetching the key set again failed: %v)", err, fetchErr)
	}
	return k, err
}

// refresh returns the current key set after fetching it again, unless
// another caller replaced seen meanwhile or the last fetch started less than
// RefreshInterval ago. The fetch runs detached from ctx with its own
// FetchTimeout, once for all concurrent callers: a caller whose ctx ends
// stops waiting, but the fetch goes on and its keys serve the next caller.
// A failed fetch keeps the old set.
func (v *jwksVerifier) refresh(ctx context.Context, seen *keySet) (*keySet, error) {
	v.mu.Lock()
	cur := v.set.Load()
	if cur != seen {
		v.mu.Unlock()
		return cur, nil
	}
	f := v.inflight
	if f == nil {
		if time.Since(v.lastFetch) < v.opts.RefreshInterval {
			v.mu.Unlock()
			return cur, nil
		}
		v.lastFetch = time.Now()
		f = &refetch{done: make(chan struct{})}
		v.inflight = f
		go v.refetch(f)
	}
	v.mu.Unlock()
	select {
	case <-f.done:
		if f.err != nil {
			return seen, f.err
		}
		return f.set, nil
	case <-ctx.Done():
		return seen, fmt.Errorf("gave up waiting for the key set: %w", ctx.Err())
	}
}

// refetch runs one refresh and publishes its result.
func (v *jwksVerifier) refetch(f *refetch) {
	ctx, cancel := context.WithTimeout(context.Background(), v.opts.FetchTimeout)
	defer cancel()
	f.set, f.err = v.fetch(ctx)
	v.mu.Lock()
	if f.err == nil {
		v.set.Store(f.set)
	}
	v.inflight = nil
	v.mu.Unlock()
	close(f.done)
}

func (v *jwksVerifier) fetch(ctx context.Context) (*keySet, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.opts.JWKSURL, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS %s: %w", v.opts.JWKSURL, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS %s: %w", v.opts.JWKSURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch JWKS %s: status %s; check JWKSOptions.JWKSURL", v.opts.JWKSURL, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS %s: %w", v.opts.JWKSURL, err)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("fetch JWKS %s: larger than %d bytes", v.opts.JWKSURL, maxJWKSBytes)
	}
	set, err := parseJWKS(body)
	if err != nil {
		return nil, fmt.Errorf("JWKS at %s: %w", v.opts.JWKSURL, err)
	}
	return set, nil
}

// find returns the key named kid that may verify alg. A token without a kid
// is accepted only when exactly one key may verify alg.
func (s *keySet) find(kid, alg string) (*jwk, error) {
	var match []*jwk
	for _, k := range s.keys {
		if kid != "" && k.kid != kid {
			continue
		}
		if k.accepts(alg) {
			match = append(match, k)
		}
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case kid != "" && len(match) == 0:
		return nil, fmt.Errorf("%w: the issuer has no %s key with id %q", ErrInvalidToken, alg, kid)
	case kid != "":
		return nil, fmt.Errorf("%w: the issuer's key set has %d keys with id %q", ErrInvalidToken, len(match), kid)
	default:
		return nil, fmt.Errorf("%w: token names no key id and the issuer has %d %s keys", ErrInvalidToken, len(match), alg)
	}
}

// jwk is one usable public key of a key set.
type jwk struct {
	kid string
	alg string // as the set declares it; "" allows any algorithm of the key type
	rsa *rsa.PublicKey
	ec  *ecdsa.PublicKey
}

func (k *jwk) accepts(alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch alg {
	case "RS256", "PS256":
		return k.rsa != nil
	case "ES256":
		return k.ec != nil
	}
	return false
}

func (k *jwk) verify(alg, input string, sig []byte) error {
	digest := sha256.Sum256([]byte(input))
	switch alg {
	case "RS256":
		return rsa.VerifyPKCS1v15(k.rsa, crypto.SHA256, digest[:], sig)
	case "PS256":
		return rsa.VerifyPSS(k.rsa, crypto.SHA256, digest[:], sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	case "ES256":
		if len(sig) != 64 {
			return errors.New("ES256 signature is not 64 bytes")
		}
		r := new(big.Int).SetBytes(sig[:32])
		s := new(big.Int).SetBytes(sig[32:])
		if !ecdsa.Verify(k.ec, digest[:], r, s) {
			return errors.New("ES256 signature does not verify")
		}
		return nil
	}
	return fmt.Errorf("algorithm %q is not supported", alg)
}

type rawJWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWKS reads a JSON Web Key Set, keeping the RSA (2048 bits or more) and
// P-256 keys meant for signatures and skipping the rest.
func parseJWKS(data []byte) (*keySet, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON Web Key Set: %w", err)
	}
	set := &keySet{fetched: time.Now()}
	for _, raw := range doc.Keys {
		var r rawJWK
		if json.Unmarshal(raw, &r) != nil || (r.Use != "" && r.Use != "sig") {
			continue
		}
		if k := r.key(); k != nil {
			set.keys = append(set.keys, k)
		}
	}
	if len(set.keys) == 0 {
		return nil, fmt.Errorf("none of its %d keys is a usable signing key (RSA of 2048 bits or more for RS256/PS256, or EC P-256 for ES256)", len(doc.Keys))
	}
	return set, nil
}

// key returns the public key r describes, or nil if it is not one we use.
func (r *rawJWK) key() *jwk {
	k := &jwk{kid: r.Kid, alg: r.Alg}
	switch r.Kty {
	case "RSA":
		if r.Alg != "" && r.Alg != "RS256" && r.Alg != "PS256" {
			return nil
		}
		n, err1 := b64.DecodeString(r.N)
		e, err2 := b64.DecodeString(r.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return nil
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < 2048 || pub.E < 3 || pub.E%2 == 0 {
			return nil
		}
		k.rsa = pub
	case "EC":
		if r.Crv != "P-256" || (r.Alg != "" && r.Alg != "ES256") {
			return nil
		}
		x, err1 := b64.DecodeString(r.X)
		y, err2 := b64.DecodeString(r.Y)
		if err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
			return nil
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return nil
		}
		k.ec = pub
	default:
		return nil
	}
	return k
}
