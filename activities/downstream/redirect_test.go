package downstream_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/baton-run/baton/activities/downstream"
)

// A tool server that answers with a redirect: Baton follows none, so the
// server it points to sees no request, and no secret, from a call or a
// listing.
func TestRedirectsAreNotFollowed(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []http.Header
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		http.Error(w, "not here", http.StatusNotFound)
	}))
	defer elsewhere.Close()
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		// Every request redirected: the handshake of a call or a listing.
		crm, c, ep := setup(t, nil)
		moved := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere.URL+"/mcp", status)
		}))
		ep.URL = moved.URL + "/mcp"
		_, err := call(t, c, ep, "refund", `{"customer":"alice@example.com","amount":89,"currency":"EUR"}`, "bt1-moved")
		var ce *downstream.CallError
		if !errors.As(err, &ce) || ce.Kind != downstream.NotSent || ce.Status != status || !strings.Contains(ce.Message, "redirect") {
			t.Errorf("call, HTTP %d: %#v", status, err)
		}
		_, err = c.ListTools(context.Background(), ep)
		if !errors.As(err, &ce) || ce.Kind != downstream.NotSent || !strings.Contains(ce.Message, "redirect") {
			t.Errorf("listing, HTTP %d: %#v", status, err)
		}
		moved.Close()

		// Only the tools/call redirected, the handshake passed on to the
		// tool server.
		target, _ := url.Parse(crm.URL())
		proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.URL.Path = target.Path
		}}
		callMoved := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				http.Redirect(w, r, elsewhere.URL+"/mcp", status)
				return
			}
			proxy.ServeHTTP(w, r)
		}))
		ep.URL = callMoved.URL + "/mcp"
		_, err = call(t, c, ep, "refund", `{"customer":"alice@example.com","amount":89,"currency":"EUR"}`, "bt1-moved")
		if !errors.As(err, &ce) || ce.Kind != downstream.NotSent || ce.Status != status || !strings.Contains(ce.Message, "redirect") {
			t.Errorf("tools/call, HTTP %d: %#v", status, err)
		}
		if len(crm.Refunds()) != 0 {
			t.Errorf("HTTP %d: refunds %+v", status, crm.Refunds())
		}
		callMoved.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range seen {
		if strings.Contains(h.Get("Authorization"), token) {
			t.Errorf("the secret reached the server redirected to: %v", h)
		}
	}
	if len(seen) != 0 {
		t.Errorf("the server redirected to got %d requests", len(seen))
	}
}

// An endpoint's userinfo and query string may hold secrets: a failure's
// message, which reaches the agent, Temporal history and work items,
// names the server's url without them.
func TestErrorsRedactTheEndpointURL(t *testing.T) {
	t.Parallel()
	crm, c, ep := setup(t, nil)
	if err := crm.SetDown(true); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(crm.URL())
	ep.URL = "http://robot:pa55word@" + u.Host + u.Path + "?api_key=k3y-in-query&x=1#frag"
	_, callErr := call(t, c, ep, "get_customer", `{"email":"alice@example.com"}`, "")
	_, listErr := c.ListTools(context.Background(), ep)
	for _, err := range []error{callErr, listErr} {
		var ce *downstream.CallError
		if !errors.As(err, &ce) || ce.Kind != downstream.NotSent {
			t.Fatalf("err = %#v", err)
		}
		for _, text := range []string{ce.Message, err.Error(), ce.Err.Error()} {
			for _, secret := range []string{"robot", "pa55word", "k3y-in-query", "api_key", "frag"} {
				if strings.Contains(text, secret) {
					t.Errorf("%q holds %q", text, secret)
				}
			}
		}
		if !strings.Contains(ce.Message, "could not be reached") {
			t.Errorf("message = %q", ce.Message)
		}
	}
	if got := downstream.RedactURL(ep.URL); got != "http://"+u.Host+u.Path {
		t.Errorf("RedactURL = %q", got)
	}
}
