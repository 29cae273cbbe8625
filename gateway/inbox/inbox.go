// Package inbox is Baton's web inbox: server-rendered pages where people
// see their work and decide it, and operators take escalations and cancel
// runs, without an MCP client.
//
// The inbox applies exactly the rules of the MCP tools because it calls
// them: every page reads through get_work, get_run or list_runs, and every
// form submits through decide, upload or cancel, by way of [Tools], for the
// identity the session holds. It never reads the store or Temporal itself,
// but for the operators' log of notification deliveries, which the tools
// read for it (Options.Deliveries).
// A refusal comes back as the tool's {code, message, issues}, and the page
// shows each issue next to the field it names. Every form carries a
// requestId made when the page was rendered, so a double click makes the
// same call twice and the tool answers it once.
//
// People sign in with the dev sign-in of package oauth (baton dev) or with
// OpenID Connect against the deployment's issuer (serve, gateway). A
// session is a signed cookie; every form carries a CSRF token. The pages
// use no JavaScript.
package inbox

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/gateway/oauth"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

// Path is where the inbox is mounted on the gateway.
const Path = "/inbox/"

// Tools runs the MCP tools for an identity the caller has authenticated,
// exactly as the MCP endpoint runs them. It returns the tool's data, or an
// *interpreter.Error for a refusal; any other error is the server failing.
// *gateway.Gateway implements it.
type Tools interface {
	Call(ctx context.Context, id auth.Identity, tool string, args json.RawMessage) (json.RawMessage, error)
}

// Admitter limits how many requests one identity has served at once.
// When the inbox's Tools implement it (*gateway.Gateway does), every
// request of a session is admitted before its body is read, and one
// beyond the identity's limit gets 429 at once.
type Admitter interface {
	Admit(id auth.Identity) (release func(), ok bool)
}

// Families tells where a run stands among the runs of
// baton-subprocess-1: the run and process step that started it, and the
// runs its process steps started. When the inbox's Tools implement it
// (*gateway.Gateway does), a run's page links them.
type Families interface {
	Family(ctx context.Context, id auth.Identity, runID string) (parent, step string, children []string, more bool, err error)
}

// Options configure the inbox.
type Options struct {
	// BaseURL is the gateway's public URL; the inbox is at BaseURL/inbox/.
	// Session cookies are Secure unless its host is a loopback address, so
	// anywhere else it must be https. Default "http://127.0.0.1:8080".
	BaseURL string
	// Secret is the gateway's master secret; the keys of sessions and
	// CSRF tokens are derived from it. Default: a random key, so sessions
	// do not survive a restart.
	Secret []byte
	// DevSignIn signs people in with the dev sign-in page of package
	// oauth: pick a person or an operator, no password. For baton dev
	// only. Exactly one of DevSignIn and OIDC is required.
	DevSignIn bool
	// Groups are offered as tick boxes on the dev sign-in page. Default
	// none.
	Groups []string
	// OIDC signs people in with OpenID Connect. Exactly one of DevSignIn
	// and OIDC is required.
	OIDC *OIDCOptions
	// Org is the deployment's default organization: a person whose
	// sign-in names no organization signs in to it. Every session is
	// bound to its organization and to BaseURL. Default: the tools'
	// default organization when they say it (an Org method, as
	// *gateway.Gateway has), else auth.DefaultOrg.
	Org string
	// Operators is the group every operator is in. Default interpreter.DefaultOperators.
	Operators string
	// SessionTTL is how long a sign-in lasts. Default 12 hours.
	SessionTTL time.Duration
	// Logger receives failures. Default slog.Default().
	Logger *slog.Logger
	// Deliveries reads the deliveries log operators see under
	// Notifications. Default: the tools' when they have one (a Deliveries
	// method, as *gateway.Gateway has), else none and the page says so.
	Deliveries DeliveryLog
}

// Inbox serves the web inbox.
type Inbox struct {
	tools Tools
	opts  Options
	sign  *signer
	oidc  *oidcClient
	pages *template.Template
	now   func() time.Time

	maxUpload atomic.Int64 // describe's maxUploadBytes, once read
}

// New returns the inbox over the tools. Options are required: they say how
// people sign in.
func New(tools Tools, opts *Options) (*Inbox, error) {
	if tools == nil {
		return nil, errors.New("inbox: the tools are required (a *gateway.Gateway)")
	}
	if opts == nil {
		return nil, errors.New("inbox: options are required: set DevSignIn or OIDC")
	}
	in := &Inbox{tools: tools, opts: *opts, now: time.Now}
	o := &in.opts
	if o.BaseURL == "" {
		o.BaseURL = "http://127.0.0.1:8080"
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	u, err := url.Parse(o.BaseURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("inbox: BaseURL %q is not an absolute http(s) URL", o.BaseURL)
	}
	loopback := isLoopback(u.Hostname())
	if u.Scheme != "https" && !loopback {
		return nil, fmt.Errorf("inbox: BaseURL %q must be https: session cookies are Secure outside loopback", o.BaseURL)
	}
	if o.DevSignIn == (o.OIDC != nil) {
		return nil, errors.New("inbox: set exactly one of DevSignIn (baton dev) and OIDC")
	}
	if o.DevSignIn && !loopback {
		return nil, fmt.Errorf("inbox: the dev sign-in has no password and is offered on loopback only, not at %s", o.BaseURL)
	}
	if len(o.Secret) == 0 {
		o.Secret = []byte(randomHex(32))
	}
	if o.Operators == "" {
		o.Operators = interpreter.DefaultOperators
	}
	if o.Org == "" {
		o.Org = auth.DefaultOrg
		if d, ok := tools.(interface{ Org() string }); ok && d.Org() != "" {
			o.Org = d.Org()
		}
	}
	if err := auth.CheckOrg(o.Org); err != nil {
		return nil, fmt.Errorf("inbox: Org: %w", err)
	}
	if o.SessionTTL == 0 {
		o.SessionTTL = 12 * time.Hour
	}
	if o.SessionTTL < time.Minute {
		return nil, fmt.Errorf("inbox: SessionTTL %v is under the minimum of 1m", o.SessionTTL)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.OIDC != nil {
		if in.oidc, err = newOIDCClient(*o.OIDC, o.BaseURL+Path+"callback"); err != nil {
			return nil, err
		}
	}
	if d, ok := tools.(interface {
		Deliveries(ctx context.Context, org string, limit int) ([]store.Delivery, error)
	}); ok && o.Deliveries == nil {
		o.Deliveries = d.Deliveries
	}
	in.sign = newSigner(o.Secret, !loopback, o.BaseURL, o.Org)
	if in.pages, err = parsePages(); err != nil {
		return nil, err
	}
	return in, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL is the inbox's own address, BaseURL/inbox/.
func (in *Inbox) URL() string { return in.opts.BaseURL + Path }

// Handler serves the inbox under [Path]. Mount it on the gateway's
// handler there. On a loopback BaseURL (always so with DevSignIn) it
// answers only requests whose Host is a loopback name
// ([oauth.RequireHost]): a page of another site that rebinds its name to
// 127.0.0.1 gets 421, not the password-less sign-in.
func (in *Inbox) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path+"signin", in.signIn)
	mux.HandleFunc("POST "+Path+"signin", in.signIn)
	mux.HandleFunc("GET "+Path+"callback", in.callback)
	mux.HandleFunc("POST "+Path+"signout", in.authed(in.signOut))
	mux.HandleFunc("GET "+Path+"{$}", in.authed(in.work))
	mux.HandleFunc("GET "+Path+"escalations", in.authed(in.escalations))
	mux.HandleFunc("GET "+Path+"runs", in.authed(in.runs))
	mux.HandleFunc("GET "+Path+"notifications", in.authed(in.notifications))
	mux.HandleFunc("GET "+Path+"runs/{run}", in.authed(in.run))
	mux.HandleFunc("POST "+Path+"runs/{run}/cancel", in.authed(in.cancel))
	mux.HandleFunc("GET "+Path+"runs/{run}/items/{item}", in.authed(in.item))
	mux.HandleFunc("POST "+Path+"runs/{run}/items/{item}", in.authed(in.decide))
	mux.HandleFunc("GET "+Path+"insights", in.authed(in.insightsList))
	mux.HandleFunc("GET "+Path+"insights/{process}", in.authed(in.insightsProcess))
	mux.HandleFunc(Path, in.authed(func(w http.ResponseWriter, r *http.Request, s *session) {
		in.fail(w, r, s, http.StatusNotFound, "There is no such page in the inbox.")
	}))
	// Beyond loopback a rebound name carries no session: the cookie is
	// the real host's, and sign-in goes through the issuer. A proxy that
	// rewrites Host keeps working there.
	if base, _ := url.Parse(in.opts.BaseURL); isLoopback(base.Hostname()) {
		return oauth.RequireHost(base, mux)
	}
	return mux
}

// authed runs h for a request with a live session, and on a POST only
// with the session's CSRF token. Without a session it sends the browser
// to sign in and back.
func (in *Inbox) authed(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := in.sign.session(r, in.now())
		if s == nil {
			next := r.URL.RequestURI()
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				next = Path
			}
			http.Redirect(w, r, Path+"signin?next="+url.QueryEscape(next), http.StatusSeeOther)
			return
		}
		if a, ok := in.tools.(Admitter); ok {
			release, ok := a.Admit(s.identity())
			if !ok {
				w.Header().Set("Connection", "close") // the body is not read
				w.Header().Set("Retry-After", "1")
				in.fail(w, r, s, http.StatusTooManyRequests, "You have too many pages loading or forms sending at once. Nothing was sent; wait for them, then try again.")
				return
			}
			defer release()
		}
		if r.Method == http.MethodPost {
			if err := in.parseBody(w, r, s); err != nil {
				in.fail(w, r, s, http.StatusRequestEntityTooLarge, "The form could not be read: "+err.Error())
				return
			}
			if !checkToken(r.PostFormValue("csrf"), in.sign.csrf(s.SID)) {
				in.fail(w, r, s, http.StatusForbidden, "This form did not come from your inbox session, or your session changed since it was shown. Nothing was sent. Go back, reload the page and try again.")
				return
			}
		}
		h(w, r, s)
	}
}

// parseBody reads a form post, with files, within the size the uploads
// allow.
func (in *Inbox) parseBody(w http.ResponseWriter, r *http.Request, s *session) error {
	limit := in.uploadLimit(r.Context(), s)
	r.Body = http.MaxBytesReader(w, r.Body, 4*limit+1<<20)
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		return r.ParseMultipartForm(8 << 20)
	}
	return r.ParseForm()
}

// uploadLimit is describe's maxUploadBytes, read once.
func (in *Inbox) uploadLimit(ctx context.Context, s *session) int64 {
	if n := in.maxUpload.Load(); n > 0 {
		return n
	}
	var d described
	if err := in.call(ctx, s, "describe", map[string]any{}, &d); err == nil && d.MaxUploadBytes > 0 {
		in.maxUpload.Store(d.MaxUploadBytes)
		return d.MaxUploadBytes
	}
	return 10 << 20
}

// call runs a tool for the session's identity. A refusal comes back as
// *interpreter.Error; any other error has been logged.
func (in *Inbox) call(ctx context.Context, s *session, tool string, args map[string]any, out any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	return in.callRaw(ctx, s, tool, b, out)
}

// callRaw is call with the arguments as JSON.
func (in *Inbox) callRaw(ctx context.Context, s *session, tool string, args json.RawMessage, out any) error {
	raw, err := in.tools.Call(ctx, s.identity(), tool, args)
	if err != nil {
		if _, ok := refusal(err); !ok {
			in.opts.Logger.ErrorContext(ctx, "inbox: tool failed", "tool", tool, "identity", s.ID, "error", err)
		}
		return err
	}
	if out == nil {
		return nil
	}
	if err := interpreter.DecodeExact(raw, out); err != nil {
		in.opts.Logger.ErrorContext(ctx, "inbox: tool result not understood", "tool", tool, "error", err)
		return fmt.Errorf("read the result of %s: %w", tool, err)
	}
	return nil
}

func refusal(err error) (*interpreter.Error, bool) {
	var e *interpreter.Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// status is the HTTP status a page shows a refusal with.
func status(e *interpreter.Error) int {
	switch e.Code {
	case interpreter.CodeNotFound:
		return http.StatusNotFound
	case interpreter.CodeForbidden:
		return http.StatusForbidden
	case interpreter.CodeStale, interpreter.CodeConflict:
		return http.StatusConflict
	case interpreter.CodeRetry:
		return http.StatusServiceUnavailable
	}
	return http.StatusUnprocessableEntity
}

// frame is what every page shows around its content.
type frame struct {
	Title    string
	Who      *session
	CSRF     string
	Operator bool
	Notice   string
	Error    string
	Issues   []string
	Nav      string // the menu entry of this page
}

func (in *Inbox) frame(s *session, title, nav string) frame {
	f := frame{Title: title, Nav: nav}
	if s != nil {
		f.Who, f.CSRF, f.Operator = s, in.sign.csrf(s.SID), s.operator()
	}
	return f
}

// fail shows a page that says what went wrong.
func (in *Inbox) fail(w http.ResponseWriter, r *http.Request, s *session, code int, msg string) {
	f := in.frame(s, "Something went wrong", "")
	f.Error = msg
	in.render(w, code, "error", f)
}

// failTool shows a tool's refusal, or a server failure, as its own page.
func (in *Inbox) failTool(w http.ResponseWriter, r *http.Request, s *session, err error) {
	if e, ok := refusal(err); ok {
		f := in.frame(s, "Refused", "")
		f.Error, f.Issues = e.Message, e.Issues
		in.render(w, status(e), "error", f)
		return
	}
	in.fail(w, r, s, http.StatusInternalServerError, "The server could not complete this. Try again in a moment.")
}

//go:embed templates/*.html
var templateFiles embed.FS

func parsePages() (*template.Template, error) {
	return template.New("pages").Funcs(template.FuncMap{
		"path": func() string { return Path },
	}).ParseFS(templateFiles, "templates/*.html")
}

// render executes a page into memory first, so a failure is a 500 and not
// half a page. Pages may not be framed or cached and run no script.
func (in *Inbox) render(w http.ResponseWriter, code int, name string, data any) {
	var buf bytes.Buffer
	if err := in.pages.ExecuteTemplate(&buf, name, data); err != nil {
		in.opts.Logger.Error("inbox: render page", "page", name, "error", err)
		http.Error(w, "The page could not be shown.", http.StatusInternalServerError)
		return
	}
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

func securityHeaders(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Referrer-Policy", "no-referrer")
}
