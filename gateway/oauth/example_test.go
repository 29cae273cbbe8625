package oauth_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/gateway/oauth"
)

// `baton dev` runs the server beside its gateway: tokens minted with the
// data folder's dev key, for the gateway's MCP URL alone.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "baton-dev")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	issuer, err := auth.LoadOrCreateDevKey(dir)
	if err != nil {
		log.Fatal(err)
	}
	as, err := oauth.New(issuer, &oauth.Options{
		Issuer:   "http://127.0.0.1:8090",
		Resource: "http://127.0.0.1:8080/mcp",
	})
	if err != nil {
		log.Fatal(err)
	}
	// The gateway names the server in its protected-resource metadata and
	// accepts the tokens it issues.
	_ = issuer.VerifierFor("http://127.0.0.1:8080/mcp")
	fmt.Println(as.Issuer())

	w := httptest.NewRecorder()
	as.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8090"+oauth.MetadataPath, nil))
	var m oauth.Metadata
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.RegistrationEndpoint, m.CodeChallengeMethodsSupported)
	// Output:
	// http://127.0.0.1:8090
	// http://127.0.0.1:8090/register [S256]
}

// Another handler reuses the dev sign-in: it shows the page with its own
// hidden fields and reads the identity from the post.
func ExampleReadSignIn() {
	signIn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := &oauth.SignInPage{Title: "Baton inbox", Hidden: map[string]string{"csrf": "t0k3n"}}
		if r.Method == http.MethodGet {
			_ = page.Render(w, http.StatusOK)
			return
		}
		// (Check the CSRF token here.)
		id, err := oauth.ReadSignIn(r, "operators")
		var bad *oauth.SignInError
		if errors.As(err, &bad) {
			page.Error, page.Value = bad.Error(), bad.Value
			_ = page.Render(w, http.StatusBadRequest)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "signed in: %s %s %v", id.Kind, id.ID, id.Groups)
	})

	form := url.Values{"csrf": {"t0k3n"}, "kind": {"person"}, "id": {"Mira@Example.com"}, "groups": {"finance"}}
	r := httptest.NewRequest(http.MethodPost, "/inbox/signin", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	signIn.ServeHTTP(w, r)
	fmt.Println(w.Body.String())
	// Output: signed in: person mira@example.com [finance]
}
