package oauth

import (
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// documents serves client ID metadata documents over TLS with a test
// certificate: each path answers what docs says, and fetches counts them.
type documents struct {
	srv     *httptest.Server
	fetches atomic.Int64
	roots   *x509.CertPool
}

func serveDocuments(t *testing.T, docs func(base string) map[string]any) *documents {
	t.Helper()
	d := &documents{}
	d.srv = httptest.NewUnstartedServer(nil)
	d.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.fetches.Add(1)
		switch body := docs(d.srv.URL)[r.URL.Path].(type) {
		case nil:
			http.NotFound(w, r)
		case string: // a redirect target
			http.Redirect(w, r, body, http.StatusFound)
		case []byte:
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write(body)
		default:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(body)
		}
	})
	d.srv.StartTLS()
	t.Cleanup(d.srv.Close)
	d.roots = x509.NewCertPool()
	d.roots.AddCert(d.srv.Certificate())
	return d
}

// A client known by its metadata document's https URL: the server fetches
// it (once, then from its cache), holds its redirect URIs like a registered
// client's, and refuses documents that do not describe that URL or break
// the limits.
func TestClientMetadataDocuments(t *testing.T) {
	t.Parallel()
	other := serveDocuments(t, func(base string) map[string]any {
		return map[string]any{"/c.json": map[string]any{"client_id": base + "/c.json", "redirect_uris": []string{testRedirect}}}
	})
	d := serveDocuments(t, func(base string) map[string]any {
		doc := func(path string, change func(m map[string]any)) map[string]any {
			m := map[string]any{"client_id": base + path, "client_name": "Document client", "redirect_uris": []string{testRedirect},
				"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none"}
			if change != nil {
				change(m)
			}
			return m
		}
		return map[string]any{
			"/good.json":     doc("/good.json", nil),
			"/same-host":     base + "/good.json",
			"/other-host":    other.srv.URL + "/c.json",
			"/mismatch.json": doc("/mismatch.json", func(m map[string]any) { m["client_id"] = base + "/good.json" }),
			"/secret.json":   doc("/secret.json", func(m map[string]any) { m["token_endpoint_auth_method"] = "client_secret_basic" }),
			"/bad-redirect.json": doc("/bad-redirect.json", func(m map[string]any) {
				m["redirect_uris"] = []string{"http://evil.example/cb"}
			}),
			"/big.json": doc("/big.json", func(m map[string]any) {
				m["client_uri"] = "https://app.example/" + strings.Repeat("x", maxMetadataDocumentBytes)
			}),
			"/page": []byte("<html></html>"),
		}
	})
	f := setup(t, func(o *Options) { o.LoopbackClientMetadata, o.ClientMetadataRoots = true, d.roots })
	_, challenge := pkce()
	good := d.srv.URL + "/good.json"

	if !f.as.Metadata().ClientIDMetadataDocumentSupported {
		t.Fatal("the metadata does not advertise client_id_metadata_document_supported")
	}
	for i := 0; i < 2; i++ {
		resp, page := f.get(AuthorizePath, authorizeParams(good, testRedirect, challenge))
		if resp.StatusCode != http.StatusOK || !strings.Contains(page, "Document client") || !strings.Contains(page, good) {
			t.Fatalf("authorize as %s: %d\n%s", good, resp.StatusCode, page)
		}
	}
	if n := d.fetches.Load(); n != 1 {
		t.Errorf("the document was fetched %d times for two requests, want once (cached)", n)
	}

	refused := []struct{ name, clientID, redirect, want string }{
		{"a redirect URI the document does not list", good, "http://127.0.0.1:33418/other", "is not one client"},
		{"client_id is not the URL", d.srv.URL + "/mismatch.json", testRedirect, "names client_id"},
		{"a secret", d.srv.URL + "/secret.json", testRedirect, "use none"},
		{"a redirect URI registration refuses", d.srv.URL + "/bad-redirect.json", "http://evil.example/cb", "other than loopback"},
		{"over the size limit", d.srv.URL + "/big.json", testRedirect, "over 16384 bytes"},
		{"not JSON", d.srv.URL + "/page", testRedirect, "Content-Type"},
		{"not found", d.srv.URL + "/none.json", testRedirect, "404"},
		{"a redirect to another host", d.srv.URL + "/other-host", testRedirect, "leaves the client_id"},
		{"no path", d.srv.URL, testRedirect, "has no path"},
		{"a fragment", good + "#x", testRedirect, "fragment"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			resp, page := f.get(AuthorizePath, authorizeParams(tt.clientID, tt.redirect, challenge))
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, tt.want) {
				t.Errorf("status %d, want 400 saying %q:\n%s", resp.StatusCode, tt.want, page)
			}
		})
	}
	// A redirect on the same host is followed.
	if resp, page := f.get(AuthorizePath, authorizeParams(d.srv.URL+"/same-host", testRedirect, challenge)); resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "names client_id") {
		t.Errorf("same-host redirect: %d\n%s", resp.StatusCode, page)
	}

	// Without loopback allowed, a document on this machine is not fetched.
	strict := setup(t, func(o *Options) { o.ClientMetadataRoots = d.roots })
	resp, page := strict.get(AuthorizePath, authorizeParams(good, testRedirect, challenge))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "not a public address") {
		t.Errorf("loopback document without LoopbackClientMetadata: %d\n%s", resp.StatusCode, page)
	}
}
