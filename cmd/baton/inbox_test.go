package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// baton dev prints the inbox URL beside the MCP URL, and a person signs in
// there with the dev sign-in.
func TestDevInbox(t *testing.T) {
	d := startDev(t)
	if want := strings.TrimSuffix(d.mcpURL, "/mcp") + "/inbox/"; d.inboxURL != want {
		t.Fatalf("inbox URL %q, want %q", d.inboxURL, want)
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	read := func(resp *http.Response, err error) (string, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d\n%s", resp.Request.URL, resp.StatusCode, b)
		}
		return resp.Request.URL.Path, string(b)
	}
	path, page := read(hc.Get(d.inboxURL))
	if path != "/inbox/signin" {
		t.Fatalf("without a session the inbox is at %s", path)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatalf("no CSRF token on the sign-in page:\n%s", page)
	}
	path, page = read(hc.PostForm(strings.TrimSuffix(d.inboxURL, "/inbox/")+"/inbox/signin", url.Values{
		"csrf": {csrf[1]}, "next": {"/inbox/"}, "kind": {"person"}, "id": {"fin@example.com"}, "groups": {"approver"},
	}))
	if path != "/inbox/" || !strings.Contains(page, "fin@example.com") || !strings.Contains(page, "My work") {
		t.Fatalf("signed in at %s:\n%s", path, page)
	}
}

// serve and gateway turn the inbox on with a client of the issuer.
func TestServeInboxFlags(t *testing.T) {
	cfg := serveConfig{runtimeConfig: runtimeConfig{listen: "127.0.0.1:8080"}, inboxClientID: "inbox"}
	if in, err := cfg.inbox(nil, nil, nil); err == nil || in != nil {
		t.Fatal("an inbox without --issuer and a secret file")
	}
	secret := filepath.Join(t.TempDir(), "inbox-secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.issuer, cfg.inboxSecretFile = "https://login.example.com", secret
	cfg.baseURL = "https://baton.example.com"
	// (No gateway here: the inbox calls its tools only when serving.)
	in, err := cfg.inbox(nil, []byte("k"), nil)
	if err != nil || in.URL() != "https://baton.example.com/inbox/" {
		t.Fatalf("with an issuer and a secret: %v", err)
	}
	cfg.inboxClientID = ""
	if in, err := cfg.inbox(nil, nil, nil); err != nil || in != nil {
		t.Fatalf("without --inbox-client-id the inbox is off: %v", err)
	}
}
