package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
)

// DevKeyFile is the file, inside the data folder of `baton dev`, that holds
// the master secret of a dev deployment.
const DevKeyFile = "dev-token.key"

// DevAudience is the audience of the tokens [DevIssuer.Issue] makes, those
// `baton token` prints: every gateway that trusts the data folder's key
// accepts them. Tokens made by [DevIssuer.IssueFor] name one resource instead.
const DevAudience = "baton"

const devIssuer = "baton-dev"

// DevIssuer issues and verifies the bearer tokens of `baton dev`: HS256 JWTs
// signed with a local key, so a dev deployment needs no identity provider.
type DevIssuer struct {
	key []byte
	now func() time.Time
}

// LoadOrCreateDevKey returns the DevIssuer of the data folder dataDir. Its
// key is derived from the master secret in dataDir/[DevKeyFile], which is
// created (mode 0600) with a random key on first use and reused afterwards,
// so tokens printed by `baton token --data DIR` work with the gateway of DIR.
func LoadOrCreateDevKey(dataDir string) (*DevIssuer, error) {
	if dataDir == "" {
		return nil, fmt.Errorf("dev data folder is empty: pass the folder that `baton dev` uses (--data)")
	}
	master, err := LoadOrCreateKey(filepath.Join(dataDir, DevKeyFile))
	if err != nil {
		return nil, err
	}
	return NewDevIssuer(DeriveKey(master, PurposeDevTokens))
}

// LoadDevKey returns the DevIssuer of the data folder dataDir, like
// [LoadOrCreateDevKey], but never creates the key: a missing one is an error
// wrapping fs.ErrNotExist.
func LoadDevKey(dataDir string) (*DevIssuer, error) {
	if dataDir == "" {
		return nil, fmt.Errorf("dev data folder is empty: pass the folder that `baton dev` uses (--data)")
	}
	path := filepath.Join(dataDir, DevKeyFile)
	master, err := readKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no dev key at %s: %w", path, err)
	}
	if err != nil {
		return nil, err
	}
	return NewDevIssuer(DeriveKey(master, PurposeDevTokens))
}

// NewDevIssuer returns a DevIssuer that signs with key, which must be at
// least [KeySize] bytes.
func NewDevIssuer(key []byte) (*DevIssuer, error) {
	if len(key) < KeySize {
		return nil, fmt.Errorf("dev token key is %d bytes, want at least %d: use LoadOrCreateDevKey or DeriveKey", len(key), KeySize)
	}
	return &DevIssuer{key: append([]byte(nil), key...), now: time.Now}, nil
}

type devClaims struct {
	Sub    string   `json:"sub"`
	Kind   Kind     `json:"kind"`
	Groups []string `json:"groups,omitempty"`
	Org    string   `json:"org,omitempty"`
	Iat    int64    `json:"iat"`
	Exp    int64    `json:"exp"`
	Iss    string   `json:"iss"`
	Aud    string   `json:"aud"`
}

// devHeader is the fixed header of every dev token: {"alg":"HS256","typ":"JWT"}.
var devHeader = b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// Issue returns a token for id valid for ttl, with audience [DevAudience].
// A person's email is lowercased.
func (d *DevIssuer) Issue(id Identity, ttl time.Duration) (string, error) {
	return d.IssueFor(id, DevAudience, ttl)
}

// IssueFor returns a token for id valid for ttl whose audience is audience
// alone, such as a gateway's MCP URL (RFC 8707): only a verifier from
// [DevIssuer.VerifierFor] of that resource accepts it. A person's email is
// lowercased.
func (d *DevIssuer) IssueFor(id Identity, audience string, ttl time.Duration) (string, error) {
	id, err := id.Normalize()
	if err != nil {
		return "", err
	}
	if audience == "" {
		return "", fmt.Errorf("dev token audience is empty: give the resource the token is for, or use Issue")
	}
	if ttl < time.Second {
		return "", fmt.Errorf("dev token lifetime is %v: give at least one second", ttl)
	}
	now := d.now()
	payload, err := json.Marshal(devClaims{
		Sub:    id.ID,
		Kind:   id.Kind,
		Groups: id.Groups,
		Org:    id.Org,
		Iat:    now.Unix(),
		Exp:    now.Add(ttl).Unix(),
		Iss:    devIssuer,
		Aud:    audience,
	})
	if err != nil {
		return "", fmt.Errorf("encode dev token: %w", err)
	}
	input := devHeader + "." + b64.EncodeToString(payload)
	return input + "." + b64.EncodeToString(d.sign(input)), nil
}

func (d *DevIssuer) sign(input string) []byte {
	m := hmac.New(sha256.New, d.key)
	m.Write([]byte(input))
	return m.Sum(nil)
}

// Verify checks a token made by [DevIssuer.Issue] with this issuer's key:
// its signature, expiry (with a small allowance for clock skew), issuer,
// audience ([DevAudience]) and identity. d.Verify is a [Verifier].
func (d *DevIssuer) Verify(_ context.Context, token string) (*Identity, time.Time, error) {
	return d.verify(token, "")
}

// VerifierFor returns the [Verifier] of the gateway whose resource (its MCP
// URL) is resource: it accepts what [DevIssuer.Verify] accepts, and tokens
// that [DevIssuer.IssueFor] made for resource. A token made for any other
// resource is refused.
func (d *DevIssuer) VerifierFor(resource string) Verifier {
	return func(_ context.Context, token string) (*Identity, time.Time, error) {
		return d.verify(token, resource)
	}
}

// verify checks a token whose audience is DevAudience or, when resource is
// not empty, resource.
func (d *DevIssuer) verify(token, resource string) (*Identity, time.Time, error) {
	j, err := parseJWS(token)
	if err != nil {
		return nil, time.Time{}, err
	}
	if j.header.Alg != "HS256" {
		return nil, time.Time{}, fmt.Errorf("%w: dev tokens are HS256, this one says %q", ErrInvalidToken, j.header.Alg)
	}
	if !hmac.Equal(j.signature, d.sign(j.signingInput)) {
		return nil, time.Time{}, fmt.Errorf("%w: signature does not match this dev server's key; get a token with `baton token --data` for this server's data folder", ErrInvalidToken)
	}
	c, err := decodeClaims(j.payload)
	if err != nil {
		return nil, time.Time{}, err
	}
	exp, err := c.checkTimes(d.now())
	if err != nil {
		return nil, time.Time{}, err
	}
	if err := c.checkIssuer(devIssuer); err != nil {
		return nil, time.Time{}, err
	}
	if err := c.checkAudience(DevAudience); err != nil {
		if resource == "" {
			return nil, time.Time{}, err
		}
		if err := c.checkAudience(resource); err != nil {
			return nil, time.Time{}, err
		}
	}
	id, err := identityFromClaims(c, claimNames{id: "sub", personID: "sub", kind: "kind", groups: "groups", org: DefaultOrgClaim})
	if err != nil {
		return nil, time.Time{}, err
	}
	return id, exp, nil
}

// DefaultOrgClaim is the claim naming the caller's organization unless
// configured otherwise.
const DefaultOrgClaim = "org"

// claimNames say which claims of a token name the caller.
type claimNames struct {
	id, personID, kind, groups string
	// org names the caller's organization; a token without it belongs
	// to the default organization (Org "").
	org string
	// defaultKind is the kind of a token without the kind claim; "" refuses it.
	defaultKind Kind
	// trustUnverifiedEmail accepts a person named by the email claim
	// without email_verified: true.
	trustUnverifiedEmail bool
}

// identityFromClaims builds an identity from the named claims. The kind claim
// is required unless n.defaultKind is set. A person's ID comes from
// n.personID; when that is the email claim, email_verified must be true
// unless n.trustUnverifiedEmail.
func identityFromClaims(c claims, n claimNames) (*Identity, error) {
	kind, ok, err := c.str(n.kind)
	if err != nil {
		return nil, err
	}
	if !ok {
		if n.defaultKind == "" {
			return nil, fmt.Errorf("%w: token has no %q claim saying whether the caller is an agent, person or operator", ErrInvalidToken, n.kind)
		}
		kind = string(n.defaultKind)
	}
	idClaim := n.id
	if Kind(kind) == KindPerson {
		idClaim = n.personID
		if idClaim == "email" && !n.trustUnverifiedEmail && !emailVerified(c["email_verified"]) {
			return nil, fmt.Errorf("%w: a person named by the email claim needs email_verified: true, and this token has email_verified: %v; the issuer must verify the address (or start the gateway with --trust-unverified-email if it only hands out addresses it owns)", ErrInvalidToken, c["email_verified"])
		}
	}
	sub, ok, err := c.str(idClaim)
	if err != nil {
		return nil, err
	}
	if !ok || sub == "" {
		return nil, fmt.Errorf("%w: token has no %q claim naming the caller", ErrInvalidToken, idClaim)
	}
	groups, err := c.stringList(n.groups)
	if err != nil {
		return nil, err
	}
	org, _, err := c.str(n.org)
	if err != nil {
		return nil, err
	}
	id, err := Identity{ID: sub, Kind: Kind(kind), Groups: groups, Org: org}.Normalize()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	return &id, nil
}

// emailVerified reports whether an email_verified claim says yes: the
// boolean true, or the string "true" that some issuers send.
func emailVerified(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v == "true"
	}
	return false
}
