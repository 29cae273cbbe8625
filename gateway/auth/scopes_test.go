package auth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

// Scopes the gateway requires: the metadata lists them, a refusal's
// challenge names them, and the JWKS verifier refuses a token that does
// not grant every one, whether it says so in scope or scp.
func TestRequiredScopes(t *testing.T) {
	t.Parallel()
	scopes := []string{"baton:work", "baton:decide"}

	w := httptest.NewRecorder()
	MetadataHandler(testAudience, []string{testIssuer}, scopes).ServeHTTP(w, httptest.NewRequest(http.MethodGet, MetadataPath+"/mcp", nil))
	var meta struct {
		Scopes []string `json:"scopes_supported"`
	}
	if err := json.NewDecoder(w.Body).Decode(&meta); err != nil || !reflect.DeepEqual(meta.Scopes, scopes) {
		t.Errorf("scopes_supported = %v (%v), want %v", meta.Scopes, err, scopes)
	}
	w = httptest.NewRecorder()
	MetadataHandler(testAudience, []string{testIssuer}, nil).ServeHTTP(w, httptest.NewRequest(http.MethodGet, MetadataPath+"/mcp", nil))
	var none map[string]any
	if err := json.NewDecoder(w.Body).Decode(&none); err != nil || none["scopes_supported"] != nil {
		t.Errorf("metadata without scopes = %v", none)
	}

	rs := newRSAKey(t, "rs", "RS256")
	srv := newJWKSServer(t, rs.jwk(t, true))
	v, err := NewJWKSVerifier(context.Background(), &JWKSOptions{Issuer: testIssuer, JWKSURL: srv.URL, Audience: testAudience, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	h := Middleware(v, testMetadataURL, scopes, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, tt := range []struct {
		name  string
		scope func(map[string]any)
		want  int
	}{
		{"scope claim", func(c map[string]any) { c["scope"] = "openid baton:decide baton:work" }, http.StatusOK},
		{"scp array", func(c map[string]any) { c["scp"] = []string{"baton:work", "baton:decide"} }, http.StatusOK},
		{"one missing", func(c map[string]any) { c["scope"] = "baton:work" }, http.StatusUnauthorized},
		{"none", nil, http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			req.Header.Set("Authorization", "Bearer "+rs.sign(t, goodClaims(tt.scope)))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d", w.Code, tt.want)
			}
			challenge := `Bearer resource_metadata="` + testMetadataURL + `", scope="baton:work baton:decide"`
			if tt.want != http.StatusOK && w.Header().Get("WWW-Authenticate") != challenge {
				t.Errorf("challenge %q, want %q", w.Header().Get("WWW-Authenticate"), challenge)
			}
		})
	}
}
