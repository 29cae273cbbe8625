package tests

import (
	"bytes"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/gateway/inbox"
)

// startInbox starts a Baton with the web inbox mounted at /inbox/, with
// the dev sign-in, as baton dev serves it.
func startInbox(t *testing.T, o options) *baton {
	t.Helper()
	b := start(t, o)
	in, err := inbox.New(b.gateway, &inbox.Options{BaseURL: b.url, Secret: b.opts.Secret, DevSignIn: true})
	if err != nil {
		t.Fatal(err)
	}
	b.gateway.Mount(inbox.Path, in.Handler())
	b.srv.Config.Handler = b.gateway.Handler()
	return b
}

// web is one browser: a cookie jar that follows redirects.
type web struct {
	t *testing.T
	b *baton
	c *http.Client
}

func (b *baton) browser(t *testing.T) *web {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &web{t: t, b: b, c: &http.Client{Jar: jar}}
}

// page is an answer as the browser ends up with it.
type page struct {
	status int
	url    string // the final URL, after redirects
	body   string
}

func (p page) has(s string) bool { return strings.Contains(p.body, html.EscapeString(s)) }

func (w *web) do(req *http.Request) page {
	w.t.Helper()
	resp, err := w.c.Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		w.t.Fatal(err)
	}
	return page{status: resp.StatusCode, url: resp.Request.URL.RequestURI(), body: string(body)}
}

func (w *web) get(path string) page {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodGet, w.b.url+path, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return w.do(req)
}

func (w *web) post(path string, form url.Values) page {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.b.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return w.do(req)
}

// upFile is a file a form posts.
type upFile struct{ field, name, content string }

func (w *web) postMultipart(path string, form url.Values, files ...upFile) page {
	w.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, vs := range form {
		for _, v := range vs {
			_ = mw.WriteField(k, v)
		}
	}
	for _, f := range files {
		fw, err := mw.CreateFormFile(f.field, f.name)
		if err != nil {
			w.t.Fatal(err)
		}
		_, _ = fw.Write([]byte(f.content))
	}
	_ = mw.Close()
	req, err := http.NewRequest(http.MethodPost, w.b.url+path, &buf)
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return w.do(req)
}

// signIn signs the browser in on the dev sign-in page and returns the page
// it lands on.
func (w *web) signIn(id auth.Identity) page {
	w.t.Helper()
	p := w.get("/inbox/signin")
	if p.status != http.StatusOK {
		w.t.Fatalf("sign-in page: %d\n%s", p.status, p.body)
	}
	form := hiddenFields(p.body)
	form.Set("kind", string(id.Kind))
	form.Set("id", id.ID)
	form.Set("groups", strings.Join(id.Groups, ","))
	form.Set("org", id.Org)
	got := w.post("/inbox/signin", form)
	if got.status != http.StatusOK || !strings.HasPrefix(got.url, "/inbox/") || strings.HasPrefix(got.url, "/inbox/signin") {
		w.t.Fatalf("sign in as %s: %d at %s\n%s", id.ID, got.status, got.url, got.body)
	}
	return got
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// hiddenFields returns the hidden inputs of an HTML fragment, the first
// value of each name.
func hiddenFields(body string) url.Values {
	form := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(body, -1) {
		name, value := html.UnescapeString(m[1]), html.UnescapeString(m[2])
		if !form.Has(name) {
			form.Set(name, value)
		}
	}
	return form
}

// formByID returns the HTML of the form with the given id, or fails.
func formByID(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no form %q on the page:\n%s", id, body)
	}
	start := strings.LastIndex(body[:i], "<form")
	end := strings.Index(body[i:], "</form>")
	return body[start : i+end]
}

// fieldBlock returns the HTML of one output field's block on a form.
func fieldBlock(t *testing.T, form, name string) string {
	t.Helper()
	i := strings.Index(form, `for="o-`+name+`"`)
	if i < 0 {
		t.Fatalf("no field %q on the form:\n%s", name, form)
	}
	start := strings.LastIndex(form[:i], "<div")
	end := strings.Index(form[i+1:], `<label class="field"`)
	if end < 0 {
		return form[start:]
	}
	return form[start : i+1+end]
}
