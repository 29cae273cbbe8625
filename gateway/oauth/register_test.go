package oauth

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRegister(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)

	pub := f.register(publicClient)
	if id, _ := pub["client_id"].(string); !strings.HasPrefix(id, "c_") {
		t.Errorf("client_id = %v", pub["client_id"])
	}
	if _, ok := pub["client_secret"]; ok || pub["token_endpoint_auth_method"] != "none" {
		t.Errorf("a public client got %v", pub)
	}
	if pub["client_name"] != "Test client" || pub["client_id_issued_at"] == nil {
		t.Errorf("registration does not echo the metadata: %v", pub)
	}

	// Without token_endpoint_auth_method the client is confidential
	// (client_secret_basic, RFC 7591 §2) and gets a secret that never expires.
	conf := f.register(map[string]any{"redirect_uris": []string{"https://claude.ai/api/mcp/auth_callback"}})
	if conf["token_endpoint_auth_method"] != "client_secret_basic" || conf["client_secret"] == "" || conf["client_secret_expires_at"] != float64(0) {
		t.Errorf("confidential registration: %v", conf)
	}
	// Every client may refresh, whatever it asked for.
	if g, _ := conf["grant_types"].([]any); len(g) != 2 || g[0] != "authorization_code" || g[1] != "refresh_token" {
		t.Errorf("grant_types = %v", conf["grant_types"])
	}
}

func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	tests := []struct {
		name string
		meta map[string]any
		code string
	}{
		{"no redirect URI", map[string]any{"client_name": "x"}, "invalid_redirect_uri"},
		{"http off loopback", map[string]any{"redirect_uris": []string{"http://example.com/cb"}}, "invalid_redirect_uri"},
		{"fragment", map[string]any{"redirect_uris": []string{"https://example.com/cb#x"}}, "invalid_redirect_uri"},
		{"relative", map[string]any{"redirect_uris": []string{"/cb"}}, "invalid_redirect_uri"},
		{"javascript", map[string]any{"redirect_uris": []string{"javascript:alert(1)"}}, "invalid_redirect_uri"},
		{"private_key_jwt", map[string]any{"redirect_uris": []string{"https://example.com/cb"}, "token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"},
		{"client_credentials", map[string]any{"redirect_uris": []string{"https://example.com/cb"}, "grant_types": []string{"client_credentials"}}, "invalid_client_metadata"},
		{"implicit", map[string]any{"redirect_uris": []string{"https://example.com/cb"}, "response_types": []string{"token"}}, "invalid_client_metadata"},
		{"redirect_uris not a list", map[string]any{"redirect_uris": "https://example.com/cb"}, "invalid_client_metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.postJSON(RegisterPath, tt.meta)
			wantOAuthError(t, status, body, http.StatusBadRequest, tt.code)
		})
	}
	t.Run("not JSON", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, f.url+RegisterPath, strings.NewReader("redirect_uris=x"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		status, body := f.doJSON(req)
		wantOAuthError(t, status, body, http.StatusBadRequest, "invalid_client_metadata")
	})
	if n := len(f.as.state.saved.Clients); n != 0 {
		t.Errorf("refused registrations left %d clients", n)
	}
}

func TestRedirectMatches(t *testing.T) {
	t.Parallel()
	c := &client{RedirectURIs: []string{"http://127.0.0.1:33418/callback", "https://vscode.dev/redirect", "cursor://anysphere.cursor-retrieval/oauth/callback"}}
	tests := []struct {
		uri  string
		want bool
	}{
		{"http://127.0.0.1:33418/callback", true},
		{"http://127.0.0.1:50123/callback", true}, // any port on loopback, RFC 8252 §7.3
		{"http://127.0.0.1:50123/other", false},
		{"http://localhost:33418/callback", false},
		{"http://127.0.0.1:33418/callback?x=1", false},
		{"https://vscode.dev/redirect", true},
		{"https://vscode.dev:8443/redirect", false},
		{"https://vscode.dev/redirect/", false},
		{"cursor://anysphere.cursor-retrieval/oauth/callback", true},
		{"cursor://evil/oauth/callback", false},
	}
	for _, tt := range tests {
		if got := redirectMatches(c, tt.uri); got != tt.want {
			t.Errorf("redirectMatches(%q) = %v, want %v", tt.uri, got, tt.want)
		}
	}
}

// A registration survives a restart when the server has a state file, which
// keeps no secret in the clear.
func TestRegistrationSurvivesRestart(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "oauth-state.json")
	f := setup(t, func(o *Options) { o.StateFile = file })
	conf := f.register(map[string]any{"redirect_uris": []string{"https://example.com/cb"}, "token_endpoint_auth_method": "client_secret_post"})
	secret := conf["client_secret"].(string)

	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600", st.Mode().Perm())
	}
	b, _ := os.ReadFile(file)
	if strings.Contains(string(b), secret) {
		t.Error("state file holds the client secret in the clear")
	}

	again := setupWith(t, f.issuer, func(o *Options) { o.StateFile = file })
	if c := again.as.state.client(conf["client_id"].(string)); c == nil || c.SecretHash != digest(secret) {
		t.Fatalf("after a restart the client is %+v", c)
	}
}
