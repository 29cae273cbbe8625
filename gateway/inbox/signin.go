package inbox

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/gateway/oauth"
)

// flowTTL bounds a sign-in in progress: the dev form or a round trip to
// the identity provider.
const flowTTL = 10 * time.Minute

// signIn starts a sign-in: the dev sign-in page (GET shows it, POST reads
// it), or a redirect to the OpenID Connect provider.
func (in *Inbox) signIn(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if in.oidc != nil {
		if r.Method != http.MethodGet {
			http.Error(w, "Sign in with GET.", http.StatusMethodNotAllowed)
			return
		}
		in.startOIDC(w, r, next)
		return
	}
	if r.Method == http.MethodGet {
		nonce := randomHex(16)
		http.SetCookie(w, in.sign.cookie(preCookie, nonce, int(flowTTL.Seconds())))
		in.devPage(w, http.StatusOK, nonce, next, "", auth.Identity{})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "The sign-in form could not be read.", http.StatusBadRequest)
		return
	}
	next = safeNext(r.PostForm.Get("next"))
	c, err := r.Cookie(preCookie)
	if err != nil || c.Value == "" || !checkToken(r.PostForm.Get("csrf"), in.sign.preCSRF(c.Value)) {
		nonce := randomHex(16)
		http.SetCookie(w, in.sign.cookie(preCookie, nonce, int(flowTTL.Seconds())))
		in.devPage(w, http.StatusForbidden, nonce, next, "This sign-in form is out of date or did not come from the inbox. Sign in again.", auth.Identity{})
		return
	}
	id, err := oauth.ReadSignIn(r, in.opts.Operators)
	var bad *oauth.SignInError
	switch {
	case errors.As(err, &bad):
		in.devPage(w, http.StatusBadRequest, c.Value, next, bad.Error(), bad.Value)
		return
	case err != nil:
		http.Error(w, "The sign-in form could not be read.", http.StatusBadRequest)
		return
	case id.Kind == auth.KindAgent:
		in.devPage(w, http.StatusBadRequest, c.Value, next, "Agents work over MCP, not in the inbox: sign in as a person or an operator.", id)
		return
	}
	if err := in.sign.startSession(w, id, in.opts.SessionTTL, in.now()); err != nil {
		http.Error(w, "The session could not be started.", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, in.sign.cookie(preCookie, "", -1))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// devPage shows the dev sign-in of package oauth with the inbox's hidden
// fields.
func (in *Inbox) devPage(w http.ResponseWriter, code int, nonce, next, msg string, v auth.Identity) {
	page := &oauth.SignInPage{
		Title:      "Sign in to the Baton inbox",
		Intro:      "Sign in as a person to decide your work, or as an operator to take escalations and cancel runs.",
		Action:     Path + "signin",
		Hidden:     map[string]string{"csrf": in.sign.preCSRF(nonce), "next": next},
		Groups:     in.opts.Groups,
		Operators:  in.opts.Operators,
		DefaultOrg: in.opts.Org,
		Error:      msg,
		Value:      v,
	}
	if err := page.Render(w, code); err != nil {
		in.opts.Logger.Error("inbox: render sign-in", "error", err)
	}
}

// signOut ends the session in this browser.
func (in *Inbox) signOut(w http.ResponseWriter, r *http.Request, s *session) {
	http.SetCookie(w, in.sign.cookie(sessionCookie, "", -1))
	http.Redirect(w, r, Path+"signin", http.StatusSeeOther)
}

// flow is an OpenID Connect sign-in in progress, kept in a sealed cookie
// between the redirect to the provider and its answer.
type flow struct {
	State    string `json:"state"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	Next     string `json:"next"`
	Exp      int64  `json:"exp"`
}

func (in *Inbox) startOIDC(w http.ResponseWriter, r *http.Request, next string) {
	f := flow{State: randomHex(16), Nonce: randomHex(16), Verifier: randomHex(32), Next: next, Exp: in.now().Add(flowTTL).Unix()}
	target, err := in.oidc.authURL(r.Context(), f)
	if err != nil {
		in.opts.Logger.ErrorContext(r.Context(), "inbox: OpenID Connect discovery", "error", err)
		in.fail(w, r, nil, http.StatusBadGateway, "The sign-in provider could not be reached. Try again in a moment.")
		return
	}
	sealed, err := in.sign.seal(flowCookie, f)
	if err != nil {
		in.fail(w, r, nil, http.StatusInternalServerError, "The sign-in could not be started.")
		return
	}
	http.SetCookie(w, in.sign.cookie(flowCookie, sealed, int(flowTTL.Seconds())))
	http.Redirect(w, r, target, http.StatusFound)
}

// callback is where the provider sends the browser back with a code.
func (in *Inbox) callback(w http.ResponseWriter, r *http.Request) {
	if in.oidc == nil {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	c, err := r.Cookie(flowCookie)
	var f flow
	if err != nil || in.sign.open(flowCookie, c.Value, &f) != nil || in.now().Unix() >= f.Exp || !checkToken(q.Get("state"), f.State) {
		in.fail(w, r, nil, http.StatusBadRequest, "This sign-in is out of date or was not started here. Sign in again.")
		return
	}
	http.SetCookie(w, in.sign.cookie(flowCookie, "", -1))
	if e := q.Get("error"); e != "" {
		msg := "The sign-in provider refused: " + e
		if d := q.Get("error_description"); d != "" {
			msg += " (" + d + ")"
		}
		in.fail(w, r, nil, http.StatusUnauthorized, msg+".")
		return
	}
	id, err := in.oidc.exchange(r.Context(), q.Get("code"), f)
	if err != nil {
		in.opts.Logger.WarnContext(r.Context(), "inbox: OpenID Connect sign-in refused", "error", err)
		in.fail(w, r, nil, http.StatusUnauthorized, "The sign-in did not succeed: "+err.Error())
		return
	}
	if id.Kind == auth.KindAgent {
		in.fail(w, r, nil, http.StatusForbidden, "Agents work over MCP, not in the inbox.")
		return
	}
	if err := in.sign.startSession(w, *id, in.opts.SessionTTL, in.now()); err != nil {
		in.fail(w, r, nil, http.StatusInternalServerError, "The session could not be started.")
		return
	}
	http.Redirect(w, r, safeNext(f.Next), http.StatusSeeOther)
}

// safeNext keeps a post-sign-in target inside the inbox.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || next == "" || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(u.Path, Path) ||
		strings.Contains(next, "//") || strings.Contains(next, `\`) || strings.HasPrefix(u.Path, Path+"signin") {
		return Path
	}
	return next
}
