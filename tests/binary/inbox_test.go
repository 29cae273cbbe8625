package binary

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/baton-run/baton/internal/drive"
)

// browser is a person's browser on the dev server's inbox: a cookie jar.
type browser struct {
	t *testing.T
	c *http.Client
}

// page is a page the browser got: status, where it landed, and its HTML.
type page struct {
	status int
	url    string
	body   string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, c: &http.Client{Jar: jar}}
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return page{status: resp.StatusCode, url: resp.Request.URL.RequestURI(), body: string(body)}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, dev.base+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, dev.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// signIn signs in on the dev sign-in page as w of org.
func (b *browser) signIn(org string, w drive.Who) {
	b.t.Helper()
	p := b.get("/inbox/signin")
	if p.status != http.StatusOK {
		b.t.Fatalf("sign-in page: %d\n%s", p.status, p.body)
	}
	form := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(p.body, -1) {
		form.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	form.Set("kind", string(w.Kind))
	form.Set("id", w.ID)
	form.Set("groups", strings.Join(w.Groups, ","))
	if org != orgA {
		form.Set("org", org)
	}
	got := b.post("/inbox/signin", form)
	if got.status != http.StatusOK || strings.HasPrefix(got.url, "/inbox/signin") {
		b.t.Fatalf("sign in as %s of %s: %d at %s\n%s", w.ID, org, got.status, got.url, got.body)
	}
}
