// Package auth decides who is calling the gateway and mints the gateway's own
// unforgeable values.
//
// Callers present OAuth 2.1 bearer tokens. A [Verifier] turns a token into an
// [Identity]: [NewJWKSVerifier] checks JWT access tokens against an issuer's
// JWKS, and a [DevIssuer] issues and checks the tokens `baton dev` hands out.
// [Middleware] puts either in front of the MCP handler with the MCP SDK's
// bearer-token middleware, and tool handlers read the caller back with
// [FromTokenInfo]. [MetadataHandler] serves the RFC 9728 document that a 401
// points to.
//
// The gateway also signs values it gives out and must recognise later:
// [ClaimTokens] for the tokens that `claim` and `renew` return, and
// [FileURLs] for the short-lived links to uploaded files. [DeriveKey] turns
// one master secret into a separate key for each purpose.
package auth

import (
	"context"
	"fmt"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/baton-run/baton/interpreter"
)

// ErrInvalidToken is wrapped by every error a [Verifier] returns for a token it
// refuses. It is the MCP SDK's own sentinel, so the SDK's bearer-token
// middleware answers such a request with 401.
var ErrInvalidToken = sdkauth.ErrInvalidToken

// clockSkew is how far an issuer's clock may be ahead of or behind ours.
// Expiry and not-before checks allow this much, and so does [Middleware].
const clockSkew = 30 * time.Second

// Kind says what sort of caller an identity is.
type Kind string

// The kinds of identity the gateway knows (spec §4: agents work steps,
// persons decide, operators cancel).
const (
	KindAgent    Kind = "agent"
	KindPerson   Kind = "person"
	KindOperator Kind = "operator"
)

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindAgent, KindPerson, KindOperator:
		return true
	}
	return false
}

// String returns the kind as it appears in tokens.
func (k Kind) String() string { return string(k) }

// Identity is an authenticated caller.
type Identity struct {
	// ID names the caller. For a person it is their email address, lowercased.
	ID string
	// Kind is agent, person or operator.
	Kind Kind
	// Groups are the groups the caller belongs to; roles are bound to groups.
	Groups []string
	// Org is the organization the caller belongs to, from the token's org
	// claim. Empty means the deployment's default organization: a token
	// without the claim belongs to it.
	Org string
}

// MaxOrgLen bounds an organization id.
const MaxOrgLen = 64

// CheckOrg reports what is wrong with an organization id, or nil: it is 1
// to MaxOrgLen letters, digits, '_', '-' or '.', starting with a letter
// or digit.
func CheckOrg(org string) error {
	if org == "" || len(org) > MaxOrgLen {
		return fmt.Errorf("organization %q: want 1 to %d characters", org, MaxOrgLen)
	}
	for i, r := range org {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || (i > 0 && (r == '_' || r == '-' || r == '.'))
		if !ok {
			return fmt.Errorf("organization %q: use letters, digits, '_', '-' and '.', starting with a letter or digit", org)
		}
	}
	return nil
}

// DefaultOrg is the default organization unless a deployment names
// another: the one of identities that name none.
const DefaultOrg = "o_default"

// OrgOr returns the identity's organization, or def when it names none.
func (id Identity) OrgOr(def string) string {
	if id.Org == "" {
		return def
	}
	return id.Org
}

// Verifier checks a bearer token and returns who presented it and when the
// token expires. Every refusal wraps [ErrInvalidToken]; any other error means
// the verifier itself could not work (a 500, not a 401).
type Verifier func(ctx context.Context, token string) (*Identity, time.Time, error)

// Normalize returns a copy of id with a person's email lowercased, or an error
// naming what is wrong with it: an empty ID, an unknown kind, a person whose
// ID is not a plain email address, an empty group name, or an organization
// that [CheckOrg] refuses.
func (id Identity) Normalize() (Identity, error) {
	out := Identity{ID: id.ID, Kind: id.Kind, Org: id.Org}
	if out.Org != "" {
		if err := CheckOrg(out.Org); err != nil {
			return Identity{}, fmt.Errorf("identity %q: %w", id.ID, err)
		}
	}
	if out.ID == "" {
		return Identity{}, fmt.Errorf("identity has an empty ID: give the agent, person or operator an ID")
	}
	if !out.Kind.Valid() {
		return Identity{}, fmt.Errorf("identity %q has kind %q: use %q, %q or %q", out.ID, out.Kind, KindAgent, KindPerson, KindOperator)
	}
	if out.Kind == KindPerson {
		// One rule for what a person is, the interpreter's (docs/design.md).
		out.ID = strings.ToLower(out.ID)
		if !interpreter.IsPerson(out.ID) {
			return Identity{}, fmt.Errorf("person identity %q is not an email address: persons are identified by email, like mira@example.com", id.ID)
		}
	}
	if len(id.Groups) > 0 {
		out.Groups = make([]string, 0, len(id.Groups))
		for _, g := range id.Groups {
			if g == "" {
				return Identity{}, fmt.Errorf("identity %q has an empty group name: drop it or name the group", out.ID)
			}
			out.Groups = append(out.Groups, g)
		}
	}
	return out, nil
}
