package inbox

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
)

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// DNS rebinding: a page of another site whose name now points at
// 127.0.0.1 reaches the dev inbox under that name. It gets 421 on every
// page, sign-in included, and no cookie: it can neither sign in as an
// operator nor read a signed-in person's work.
func TestDevInboxRefusesAnotherHost(t *testing.T) {
	t.Parallel()
	in, err := New(canned{"get_work": `{"items":[],"nextCursor":null}`}, &Options{DevSignIn: true, BaseURL: "http://127.0.0.1:8080"})
	if err != nil {
		t.Fatal(err)
	}
	h := in.Handler()
	serve := func(r *http.Request, host string) *httptest.ResponseRecorder {
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	const rebound = "rebound.example:8080"

	if w := serve(httptest.NewRequest(http.MethodGet, "/inbox/signin", nil), rebound); w.Code != http.StatusMisdirectedRequest || len(w.Result().Cookies()) != 0 {
		t.Fatalf("sign-in page as %s: status %d, cookies %v; want 421 and none", rebound, w.Code, w.Result().Cookies())
	}

	// A sign-in form fetched at the real address, posted under the other name.
	w := serve(httptest.NewRequest(http.MethodGet, "/inbox/signin", nil), "localhost:8080")
	m := csrfField.FindStringSubmatch(w.Body.String())
	if w.Code != http.StatusOK || m == nil {
		t.Fatalf("sign-in page as localhost: status %d, want 200 with a form:\n%s", w.Code, w.Body.String())
	}
	form := url.Values{"csrf": {m[1]}, "next": {"/inbox/"}, "kind": {"operator"}, "id": {"u_ops"}}
	post := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/inbox/signin", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for _, c := range w.Result().Cookies() {
			r.AddCookie(c)
		}
		return r
	}
	if got := serve(post(), rebound); got.Code != http.StatusMisdirectedRequest || len(got.Result().Cookies()) != 0 {
		t.Fatalf("sign-in post as %s: status %d, cookies %v; want 421 and no session", rebound, got.Code, got.Result().Cookies())
	}
	if got := serve(post(), "127.0.0.1:8080"); got.Code != http.StatusSeeOther {
		t.Fatalf("the same sign-in at the real address: status %d, want 303:\n%s", got.Code, got.Body.String())
	}

	// A signed-in person's cookie does not open their work under another name.
	rec := httptest.NewRecorder()
	if err := in.sign.startSession(rec, auth.Identity{ID: "mira@example.com", Kind: auth.KindPerson}, time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	work := func() *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/inbox/", nil)
		for _, c := range rec.Result().Cookies() {
			r.AddCookie(c)
		}
		return r
	}
	if got := serve(work(), rebound); got.Code != http.StatusMisdirectedRequest {
		t.Fatalf("work page as %s: status %d, want 421", rebound, got.Code)
	}
	if got := serve(work(), "[::1]:8080"); got.Code != http.StatusOK {
		t.Fatalf("work page as [::1]: status %d, want 200:\n%s", got.Code, got.Body.String())
	}
}

// admitting is canned tools that admit at most one request at a time.
type admitting struct {
	canned
	busy bool
}

func (a *admitting) Admit(auth.Identity) (func(), bool) {
	if a.busy {
		return nil, false
	}
	a.busy = true
	return func() { a.busy = false }, true
}

// A session whose identity is at its limit of requests in flight gets 429
// at once, its form unread; once the other request is answered it is
// served again.
func TestInboxAdmitsPerIdentity(t *testing.T) {
	t.Parallel()
	tools := &admitting{canned: canned{"get_work": `{"items":[],"nextCursor":null}`}}
	in, err := New(tools, &Options{DevSignIn: true})
	if err != nil {
		t.Fatal(err)
	}
	id := auth.Identity{ID: "mira@example.com", Kind: auth.KindPerson}
	tools.busy = true
	if w := get(t, in, id, "/inbox/"); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || w.Header().Get("Connection") != "close" {
		t.Fatalf("at the limit: status %d, headers %v; want 429 with Retry-After, closing", w.Code, w.Header())
	}
	tools.busy = false
	if w := get(t, in, id, "/inbox/"); w.Code != http.StatusOK || tools.busy {
		t.Fatalf("below the limit: status %d, slot still taken %v; want 200 and the slot given back", w.Code, tools.busy)
	}
}
