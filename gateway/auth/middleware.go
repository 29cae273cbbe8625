package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// MetadataPath is where RFC 9728 puts protected-resource metadata, in front
// of the resource's own path.
const MetadataPath = "/.well-known/oauth-protected-resource"

// identityKey is the key of the caller's *Identity in [sdkauth.TokenInfo.Extra].
const identityKey = "identity"

// Middleware requires a bearer token that v accepts on every request, using
// the MCP SDK's [sdkauth.RequireBearerToken]. A request without one, or with
// one v refuses, gets 401 with
// `WWW-Authenticate: Bearer resource_metadata="<resourceMetadataURL>"`.
// Otherwise the request's context carries an [sdkauth.TokenInfo] whose UserID
// is the identity's ID; MCP tool handlers find it in req.Extra.TokenInfo and
// read the caller with [FromTokenInfo].
func Middleware(v Verifier, resourceMetadataURL string) func(http.Handler) http.Handler {
	verify := func(ctx context.Context, token string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		id, exp, err := v(ctx, token)
		if err != nil {
			return nil, err
		}
		return &sdkauth.TokenInfo{
			UserID:     id.ID,
			Expiration: exp,
			Extra:      map[string]any{identityKey: id},
		}, nil
	}
	return sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{
		ResourceMetadataURL: resourceMetadataURL,
		ClockSkew:           clockSkew,
	})
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
// issue tokens for it. Mount it at [MetadataURL] of resource.
func MetadataHandler(resource string, authServers []string) http.Handler {
	return sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		AuthorizationServers:   authServers,
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
