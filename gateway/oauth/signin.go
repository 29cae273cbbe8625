package oauth

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// The fields of the sign-in form, as [ReadSignIn] reads them.
const (
	// FieldKind is "agent", "person" or "operator".
	FieldKind = "kind"
	// FieldID is the agent id, the person's email or the operator id.
	FieldID = "id"
	// FieldGroup is one group, ticked; repeatable.
	FieldGroup = "group"
	// FieldGroups is more groups, separated by commas or spaces.
	FieldGroups = "groups"
	// FieldCancel, when not empty, says the person cancelled.
	FieldCancel = "cancel"
	// FieldOrg is the organization; empty for the deployment's default.
	FieldOrg = "org"
)

// The identities the sign-in page offers until someone types another: the
// ones `baton dev` prints tokens for.
const (
	defaultAgent    = "a_dev"
	defaultPerson   = "dev@example.com"
	defaultOperator = "u_ops"
)

// SignInPage is the dev sign-in: a plain HTML page of three forms, to sign in
// as an agent (by id), a person (by email, with groups) or an operator. There
// is no password; it is for `baton dev` only.
//
// The authorization server shows it for every authorization request. Another
// handler reuses it to learn who is at the browser: on GET it renders the
// page with the hidden fields it needs back (a CSRF token, where to go
// next), and on POST it calls [ReadSignIn], rendering the page again with the
// error when that fails:
//
//	page := &oauth.SignInPage{Title: "Baton inbox", Hidden: map[string]string{"csrf": token}}
//	if r.Method == http.MethodGet {
//		page.Render(w, http.StatusOK)
//		return
//	}
//	id, err := oauth.ReadSignIn(r, "operators")
//	var bad *oauth.SignInError
//	if errors.As(err, &bad) {
//		page.Error, page.Value = bad.Error(), bad.Value
//		page.Render(w, http.StatusBadRequest)
//		return
//	}
//	// id is an auth.Identity: start a session for it.
type SignInPage struct {
	// Title heads the page. Default "Sign in to Baton".
	Title string
	// Intro is a line under the title, such as who asks. Default none.
	Intro string
	// Action is where the forms post. Default "": the page's own URL.
	Action string
	// Hidden are fields every form posts back unchanged. Default none.
	Hidden map[string]string
	// Groups are offered to a person as tick boxes, all ticked unless Value
	// is a person. Default none; a person can still type groups.
	Groups []string
	// Operators is the group every operator is in, as ReadSignIn is told.
	// Default interpreter.DefaultOperators.
	Operators string
	// Value fills the forms in, as after an error. Default: the identities
	// `baton dev` prints tokens for.
	Value auth.Identity
	// DefaultOrg is the organization of a sign-in that names none, shown
	// beside the organization field. Default auth.DefaultOrg.
	DefaultOrg string
	// Error is shown above the forms. Default none.
	Error string
	// Cancel adds a Cancel button that posts [FieldCancel] with Hidden.
	// Default false.
	Cancel bool
}

// SignInError is what [ReadSignIn] returns for a form that names no valid
// identity: a message for the person, and what they had typed.
type SignInError struct {
	Msg   string
	Value auth.Identity
}

func (e *SignInError) Error() string { return e.Msg }

// ReadSignIn returns the identity a [SignInPage] form posted, read from the
// request body only (never the URL): [FieldKind], [FieldID], and for a
// person or operator the groups of [FieldGroup] and [FieldGroups], and
// [FieldOrg] (empty: the default organization, Identity.Org ""). An
// operator is always in the operators group. A person's email is lowercased.
// A form that names no valid identity gives a *[SignInError] to show on the
// page again; any other error means the body could not be read.
func ReadSignIn(r *http.Request, operators string) (auth.Identity, error) {
	if err := r.ParseForm(); err != nil {
		return auth.Identity{}, fmt.Errorf("read the sign-in form: %w", err)
	}
	if operators == "" {
		operators = interpreter.DefaultOperators
	}
	f := r.PostForm
	v := auth.Identity{Kind: auth.Kind(f.Get(FieldKind)), ID: strings.TrimSpace(f.Get(FieldID)), Org: strings.TrimSpace(f.Get(FieldOrg))}
	if v.Kind == auth.KindPerson || v.Kind == auth.KindOperator {
		v.Groups = readGroups(f[FieldGroup], f.Get(FieldGroups))
	}
	bad := func(msg string) (auth.Identity, error) { return auth.Identity{}, &SignInError{Msg: msg, Value: v} }
	switch v.Kind {
	case auth.KindAgent:
		if v.ID == "" {
			return bad("Give the agent's id, such as a_screener.")
		}
	case auth.KindPerson:
		if v.ID == "" {
			return bad("Give the person's email address, such as mira@example.com.")
		}
	case auth.KindOperator:
		if v.ID == "" {
			return bad("Give the operator's id, such as u_ops.")
		}
		if !slices.Contains(v.Groups, operators) {
			v.Groups = append([]string{operators}, v.Groups...)
		}
	default:
		return bad("Choose whether you sign in as an agent, a person or an operator.")
	}
	id, err := v.Normalize()
	if err != nil {
		return bad(err.Error())
	}
	return id, nil
}

// readGroups returns the ticked groups, then the typed ones, without
// repeats.
func readGroups(ticked []string, typed string) []string {
	var out []string
	add := func(g string) {
		if g = strings.TrimSpace(g); g != "" && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	for _, g := range ticked {
		add(g)
	}
	for _, g := range strings.FieldsFunc(typed, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		add(g)
	}
	return out
}

//go:embed signin.html
var signInHTML string

var pages = template.Must(template.New("pages").Parse(signInHTML))

// signInView is what the template shows.
type signInView struct {
	*SignInPage
	Agent, Person, Operator string
	Org                     string
	Offered                 []offeredGroup
	PersonMore              string
	OperatorMore            string
}

type offeredGroup struct {
	Name    string
	Checked bool
}

// Render writes the page with status.
func (p *SignInPage) Render(w http.ResponseWriter, status int) error {
	page := *p
	if page.Title == "" {
		page.Title = "Sign in to Baton"
	}
	if page.Operators == "" {
		page.Operators = interpreter.DefaultOperators
	}
	if page.DefaultOrg == "" {
		page.DefaultOrg = auth.DefaultOrg
	}
	ops := page.Operators
	v := signInView{SignInPage: &page, Agent: defaultAgent, Person: defaultPerson, Operator: defaultOperator, Org: p.Value.Org}
	var personMore []string
	switch p.Value.Kind {
	case auth.KindAgent:
		v.Agent = p.Value.ID
	case auth.KindPerson:
		v.Person = p.Value.ID
		for _, g := range p.Value.Groups {
			if !slices.Contains(p.Groups, g) {
				personMore = append(personMore, g)
			}
		}
	case auth.KindOperator:
		v.Operator = p.Value.ID
		var more []string
		for _, g := range p.Value.Groups {
			if g != ops {
				more = append(more, g)
			}
		}
		v.OperatorMore = strings.Join(more, ", ")
	}
	for _, g := range p.Groups {
		checked := p.Value.Kind != auth.KindPerson || slices.Contains(p.Value.Groups, g)
		v.Offered = append(v.Offered, offeredGroup{Name: g, Checked: checked})
	}
	v.PersonMore = strings.Join(personMore, ", ")
	return renderPage(w, status, "signin", v)
}

// renderError writes a page that says what went wrong.
func renderError(w http.ResponseWriter, status int, title, msg string) error {
	return renderPage(w, status, "error", struct{ Title, Message string }{title, msg})
}

// renderPage executes a template into memory first, so a failure is a 500
// and not half a page. Pages may not be framed or cached.
func renderPage(w http.ResponseWriter, status int, name string, data any) error {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "render page: "+err.Error(), http.StatusInternalServerError)
		return errors.Join(errors.New("render "+name), err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}
