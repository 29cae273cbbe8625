package oauth

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
)

func TestMetadata(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	resp, err := http.Get(f.url + MetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("metadata: status %d, CORS %q; want 200 readable from any origin", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}

	// The MCP SDK's client finds and accepts it: issuer as asked, PKCE
	// offered, endpoints on loopback.
	m, err := sdkauth.GetAuthServerMetadata(context.Background(), f.url, http.DefaultClient)
	if err != nil || m == nil {
		t.Fatalf("GetAuthServerMetadata = %v, %v", m, err)
	}
	if m.Issuer != f.url || m.AuthorizationEndpoint != f.url+AuthorizePath || m.TokenEndpoint != f.url+TokenPath || m.RegistrationEndpoint != f.url+RegisterPath {
		t.Errorf("endpoints %+v, want them under %s", m, f.url)
	}
	if !slices.Equal(m.CodeChallengeMethodsSupported, []string{"S256"}) {
		t.Errorf("code_challenge_methods_supported = %q, want [S256] only", m.CodeChallengeMethodsSupported)
	}
	if !slices.Equal(m.GrantTypesSupported, []string{"authorization_code", "refresh_token"}) || !slices.Equal(m.ResponseTypesSupported, []string{"code"}) {
		t.Errorf("grants %q, response types %q", m.GrantTypesSupported, m.ResponseTypesSupported)
	}
	if !m.AuthorizationResponseIssParameterSupported {
		t.Error("authorization_response_iss_parameter_supported is false; the server sends iss")
	}
	if m.JWKSURI != "" {
		t.Errorf("jwks_uri = %q; the tokens are not verified with public keys", m.JWKSURI)
	}
}

func TestMethodsAndPreflight(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	req, _ := http.NewRequest(http.MethodOptions, f.url+TokenPath, nil)
	req.Header.Set("Origin", "http://localhost:6274")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := f.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Access-Control-Allow-Methods") == "" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	for _, path := range []string{TokenPath, RegisterPath} {
		resp, err := http.Get(f.url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: status %d, want 405", path, resp.StatusCode)
		}
	}
}

func TestIndexSaysWhatItIs(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	resp, page := f.get("/", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, testResource) {
		t.Fatalf("index: %d\n%s", resp.StatusCode, page)
	}
	if resp, _ := f.get("/nothing", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("/nothing: status %d, want 404", resp.StatusCode)
	}
}
