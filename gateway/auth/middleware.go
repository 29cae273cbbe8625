package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// MetadataPath is where RFC 9728 puts protected-resource metadata, in front
// of the resource's own path.
const MetadataPath = "/.well-known/oauth-protected-resource"

// refusedBodyWait is how long the rest of a refused request's body may
// take to arrive before its connection is closed.
const refusedBodyWait = time.Second

// identityKey is the key of the caller's *Identity in [sdkauth.TokenInfo.Extra].
const identityKey = "identity"

// The bodies of a refused request. They are the same whatever the reason:
// why a token was refused (its expiry, the issuer's key ids, a JWKS URL that
// did not answer) is for the server's log, not for whoever presented it.
var (
	errRefusedToken   = fmt.Errorf("%w: the bearer token was refused (expired, not meant for this server, or not signed by a trusted issuer); get a new one", ErrInvalidToken)
	errVerifierFailed = errors.New("the server could not check the bearer token; try again later")

	refusedTokenMessage   = errRefusedToken.Error()
	verifierFailedMessage = errVerifierFailed.Error()
)

// Middleware requires a bearer token that v accepts on every request, using
// the MCP SDK's [sdkauth.RequireBearerToken]. A request without one, or with
// one v refuses, gets 401 with
// `WWW-Authenticate: Bearer resource_metadata="<resourceMetadataURL>"` and a
// fixed body; the reason v gave is logged to log (nil means slog.Default())
// and never sent. Otherwise the request's context carries an
// [sdkauth.TokenInfo] whose UserID is the identity's ID; MCP tool handlers
// find it in req.Extra.TokenInfo and read the caller with [FromTokenInfo].
// A refusal closes the connection (Connection: close) and is sent without
// waiting for the request's body.
//
// scopes, when given, are the scopes the gateway requires: a refusal names
// them in the challenge (scope="…"), so clients ask the authorization
// server for them. Tokens are checked for them by v (see
// [JWKSOptions.Scopes]); an accepted token's TokenInfo lists them.
func Middleware(v Verifier, resourceMetadataURL string, scopes []string, log *slog.Logger) func(http.Handler) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	verify := func(ctx context.Context, token string, r *http.Request) (*sdkauth.TokenInfo, error) {
		id, exp, err := v(ctx, token)
		if errors.Is(err, ErrInvalidToken) {
			log.InfoContext(r.Context(), "bearer token refused", "remote", r.RemoteAddr, "reason", err)
			return nil, errRefusedToken
		}
		if err != nil {
			log.ErrorContext(r.Context(), "bearer token could not be checked", "remote", r.RemoteAddr, "error", err)
			return nil, errVerifierFailed
		}
		return &sdkauth.TokenInfo{
			UserID:     id.ID,
			Scopes:     scopes,
			Expiration: exp,
			Extra:      map[string]any{identityKey: id},
		}, nil
	}
	require := sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{
		ResourceMetadataURL: resourceMetadataURL,
		Scopes:              scopes,
		ClockSkew:           clockSkew,
	})
	return func(next http.Handler) http.Handler {
		accepted := require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Del("Connection")
			next.ServeHTTP(w, r)
		}))
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Until the token is accepted the answer closes the
			// connection: a refusal is sent at once, without first
			// reading (up to 256 KiB of) a body nobody will use, which
			// a caller without a token could otherwise stall for the
			// server's whole read timeout.
			w.Header().Set("Connection", "close")
			accepted.ServeHTTP(w, r)
			if w.Header().Get("Connection") == "close" {
				// Refused: after the answer is sent the server reads
				// what is left of the body before closing; give that a
				// second, enough for a body already on its way, and not
				// the server's read timeout.
				_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(refusedBodyWait))
			}
		})
	}
}

// FromTokenInfo returns the identity [Middleware] stored in ti, and false if
// ti is nil or did not come from Middleware.
func FromTokenInfo(ti *sdkauth.TokenInfo) (*Identity, bool) {
	if ti == nil {
		return nil, false
	}
	id, ok := ti.Extra[identityKey].(*Identity)
	return id, ok && id != nil
}

// MetadataHandler serves the RFC 9728 protected-resource metadata of
// resource (the gateway's MCP URL), naming the authorization servers that
// issue tokens for it and the scopes it requires (scopes_supported, none
// when empty). Mount it at [MetadataURL] of resource.
func MetadataHandler(resource string, authServers, scopes []string) http.Handler {
	return sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		AuthorizationServers:   authServers,
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Baton",
	})
}

// MetadataURL returns where RFC 9728 §3.1 puts the metadata of resource:
// https://host/mcp has its metadata at
// https://host/.well-known/oauth-protected-resource/mcp.
func MetadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("resource %q is not an absolute http(s) URL: give the gateway's public MCP URL", resource)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("resource %q has a query or fragment: give the gateway's MCP URL without them", resource)
	}
	m := url.URL{Scheme: u.Scheme, Host: u.Host, Path: MetadataPath + strings.TrimSuffix(u.Path, "/")}
	return m.String(), nil
}
