package notify_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/baton-run/baton/internal/notify"
)

// docsBlock is the code block of lang that follows the line intro in
// docs/notifications.md.
func docsBlock(t *testing.T, intro, lang string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "notifications.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)" + regexp.QuoteMeta(intro) + "\n\n```" + lang + "\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/notifications.md has no %s block after %q", lang, intro)
	}
	return string(m[1])
}

// The three lines of Python that docs/notifications.md gives a receiver,
// run as written by python3, accept Baton's signature and refuse a
// tampered body, another secret and an old signature.
func TestSignatureCheckOfTheDocsInPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("the docs' signature check is Python; install python3 (apt-get install -y python3): %v", err)
	}
	lines := docsBlock(t, "In Python:", "python")
	if n := strings.Count(strings.TrimSpace(lines), "\n") + 1; n != 3 {
		t.Fatalf("the docs' Python check is %d lines, not three:\n%s", n, lines)
	}
	// One python3 runs every case, each through the docs' lines as written.
	script := "import base64, hashlib, hmac, json, sys, time\n" +
		"class Request: pass\n" +
		"for case in json.load(sys.stdin):\n" +
		"    request, secret, body = Request(), case['secret'].encode(), base64.b64decode(case['body'])\n" +
		"    request.headers = {'Baton-Signature': case['header']}\n" +
		"    " + strings.ReplaceAll(strings.TrimSpace(lines), "\n", "\n    ") + "\n" +
		"    print('ok' if ok else 'refused')\n"
	secret := []byte("whsec_docs")
	body := []byte(`{"id":"ev_1","type":"work.opened"}`)
	now := Sign(secret, time.Now(), body)
	type pcase struct {
		Name   string `json:"-"`
		Header string `json:"header"`
		Secret string `json:"secret"`
		Body   []byte `json:"body"`
		Want   string `json:"-"`
	}
	cases := []pcase{
		{"as sent", now, string(secret), body, "ok"},
		{"tampered body", now, string(secret), []byte(`{"id":"ev_1","type":"run.ended"}`), "refused"},
		{"other secret", now, "whsec_other", body, "refused"},
		{"an hour old", Sign(secret, time.Now().Add(-time.Hour), body), string(secret), body, "refused"},
	}
	in, _ := json.Marshal(cases)
	cmd := exec.Command(python, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	if len(got) != len(cases) {
		t.Fatalf("python3 answered %q for %d cases", out, len(cases))
	}
	for i, tc := range cases {
		if got[i] != tc.Want {
			t.Errorf("%s: the docs' Python says %s, want %s", tc.Name, got[i], tc.Want)
		}
	}
}
