package oauth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-run/baton/gateway/auth"
)

func postedForm(form url.Values) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/signin", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r
}

func TestReadSignIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		form url.Values
		want auth.Identity
	}{
		{"agent", url.Values{"kind": {"agent"}, "id": {" a_screener "}}, auth.Identity{ID: "a_screener", Kind: auth.KindAgent}},
		{"agent groups are ignored", url.Values{"kind": {"agent"}, "id": {"a_x"}, "groups": {"ops"}}, auth.Identity{ID: "a_x", Kind: auth.KindAgent}},
		{
			"person: email lowercased, ticked then typed groups, no repeats",
			url.Values{"kind": {"person"}, "id": {"Mira@Example.com"}, "group": {"finance", "legal"}, "groups": {"g_a, legal  g_b,,"}},
			auth.Identity{ID: "mira@example.com", Kind: auth.KindPerson, Groups: []string{"finance", "legal", "g_a", "g_b"}},
		},
		{"operator gets the operators group", url.Values{"kind": {"operator"}, "id": {"u_ops"}, "groups": {"legal"}}, auth.Identity{ID: "u_ops", Kind: auth.KindOperator, Groups: []string{"ops-team", "legal"}}},
		{"operator already in it", url.Values{"kind": {"operator"}, "id": {"u_ops"}, "groups": {"legal ops-team"}}, auth.Identity{ID: "u_ops", Kind: auth.KindOperator, Groups: []string{"legal", "ops-team"}}},
		{"person of another organization", url.Values{"kind": {"person"}, "id": {"ana@example.com"}, "org": {" o_acme "}}, auth.Identity{ID: "ana@example.com", Kind: auth.KindPerson, Org: "o_acme"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadSignIn(postedForm(tt.form), "ops-team")
			if err != nil {
				t.Fatalf("ReadSignIn: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadSignInRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		form url.Values
	}{
		{"no kind", url.Values{"id": {"a_x"}}},
		{"organization not an id", url.Values{"kind": {"agent"}, "id": {"a_x"}, "org": {"o/acme"}}},
		{"unknown kind", url.Values{"kind": {"admin"}, "id": {"a_x"}}},
		{"agent without id", url.Values{"kind": {"agent"}, "id": {"  "}}},
		{"person without email", url.Values{"kind": {"person"}}},
		{"person not an email", url.Values{"kind": {"person"}, "id": {"mira"}, "groups": {"finance"}}},
		{"operator without id", url.Values{"kind": {"operator"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadSignIn(postedForm(tt.form), "")
			var bad *SignInError
			if !errors.As(err, &bad) || bad.Msg == "" {
				t.Fatalf("err = %v, want a *SignInError with a message", err)
			}
			if bad.Value.ID != strings.TrimSpace(tt.form.Get("id")) || string(bad.Value.Kind) != tt.form.Get("kind") {
				t.Errorf("Value %+v does not keep what was posted", bad.Value)
			}
		})
	}
	// The identity comes from the body alone, never the URL.
	r := httptest.NewRequest(http.MethodPost, "/signin?kind=operator&id=u_ops", strings.NewReader(""))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if id, err := ReadSignIn(r, ""); err == nil {
		t.Fatalf("signed in as %+v from the query string", id)
	}
}

func TestSignInPageRender(t *testing.T) {
	t.Parallel()
	page := &SignInPage{
		Title:  "Baton inbox",
		Intro:  `<script>alert("x")</script>`,
		Action: "/inbox/signin",
		Hidden: map[string]string{"csrf": `a"b`, "next": "/inbox/items/1"},
		Groups: []string{"finance", "legal"},
		Value:  auth.Identity{ID: "mira@example.com", Kind: auth.KindPerson, Groups: []string{"legal", "g_extra"}},
		Error:  "Pick again.",
	}
	w := httptest.NewRecorder()
	if err := page.Render(w, http.StatusBadRequest); err != nil {
		t.Fatal(err)
	}
	body := w.Body.String()
	if w.Code != http.StatusBadRequest || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("status %d, type %q", w.Code, w.Header().Get("Content-Type"))
	}
	for _, want := range []string{
		"<title>Baton inbox</title>",
		"&lt;script&gt;",
		`action="/inbox/signin"`,
		`name="csrf" value="a&#34;b"`,
		`name="next" value="/inbox/items/1"`,
		`value="mira@example.com"`,
		`value="legal" checked`,
		`value="g_extra"`,
		"Pick again.",
		"<b>operators</b>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(body, `value="finance" checked`) {
		t.Error("finance is ticked, but the person posted only legal")
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, "Cancel") {
		t.Error("page has unescaped script, or a Cancel it was not asked for")
	}
	if page.Title != "Baton inbox" || page.Operators != "" {
		t.Errorf("Render changed the page: %+v", page)
	}
	// Each of the three forms carries the hidden fields.
	if n := strings.Count(body, `name="csrf"`); n != 3 {
		t.Errorf("%d forms carry the hidden fields, want 3", n)
	}
}
