package crmtest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/internal/testing/crmtest"
)

// keyTransport sets the Idempotency-Key header on every request.
type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if k.key != "" {
		r.Header.Set("Idempotency-Key", k.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func connect(t *testing.T, url, headerKey string) *mcp.ClientSession {
	t.Helper()
	cl := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: keyTransport{headerKey}}, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func refund(t *testing.T, cs *mcp.ClientSession, metaKey string, amount float64) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: "refund", Arguments: map[string]any{"customer": "alice@example.com", "amount": amount, "currency": "EUR"}}
	if metaKey != "" {
		p.Meta = mcp.Meta{crmtest.MetaIdempotencyKey: metaKey}
	}
	r, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The key in _meta alone, or in the header alone, deduplicates; the two
// disagreeing is refused; no key means every call takes effect.
func TestKeys(t *testing.T) {
	t.Parallel()
	crm, err := crmtest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer crm.Close()

	plain := connect(t, crm.URL(), "")
	a := refund(t, plain, "k1", 10)
	b := refund(t, plain, "k1", 10)
	if a.IsError || text(a) != text(b) || len(crm.Refunds()) != 1 {
		t.Fatalf("meta key: %q then %q, refunds %+v", text(a), text(b), crm.Refunds())
	}

	headed := connect(t, crm.URL(), "h1")
	c := refund(t, headed, "", 20)
	d := refund(t, headed, "", 20)
	if c.IsError || text(c) != text(d) || len(crm.Refunds()) != 2 {
		t.Fatalf("header key: %q then %q, refunds %+v", text(c), text(d), crm.Refunds())
	}
	if e := refund(t, headed, "other", 20); !e.IsError || !strings.Contains(text(e), "differ") || len(crm.Refunds()) != 2 {
		t.Fatalf("meta and header disagree: %q", text(e))
	}

	refund(t, plain, "", 5)
	refund(t, plain, "", 5)
	if len(crm.Refunds()) != 4 || crm.Effects("refund") != 4 {
		t.Fatalf("without a key: refunds %+v", crm.Refunds())
	}
	if got := crm.Calls("refund"); len(got) != 7 || !got[1].Replayed || got[0].Replayed || got[0].MetaKey != "k1" || got[2].HeaderKey != "h1" {
		t.Errorf("calls = %+v", got)
	}
	// Every request is counted, those answered from a key included.
	var calls []crmtest.Request
	for _, r := range crm.Requests() {
		if r.Method == "tools/call" {
			calls = append(calls, r)
		}
	}
	if len(calls) != 7 || calls[0].Tool != "refund" || calls[0].MetaKey != "k1" || calls[1].MetaKey != "k1" || calls[2].HeaderKey != "h1" || calls[2].MetaKey != "" {
		t.Errorf("requests = %+v", calls)
	}
	// A key's first answer is what its later calls got.
	if got, ok := crm.Answer("k1"); !ok || !strings.Contains(text(b), string(got)) || !strings.Contains(string(got), crm.Refunds()[0].ID) {
		t.Errorf("Answer(k1) = %s, %v; the replayed call answered %q", got, ok, text(b))
	}
	if got, ok := crm.Answer("never"); ok {
		t.Errorf("Answer of an unused key = %s", got)
	}
}

// Down and up again on the same address; unavailable answers 503.
func TestDownAndUnavailable(t *testing.T) {
	t.Parallel()
	crm, err := crmtest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer crm.Close()
	url := crm.URL()
	if err := crm.SetDown(true); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Post(url, "application/json", strings.NewReader("{}")); err == nil {
		t.Fatal("a server that is down answered")
	}
	if err := crm.SetDown(false); err != nil {
		t.Fatal(err)
	}
	if crm.URL() != url {
		t.Fatalf("came back at %s, not %s", crm.URL(), url)
	}
	crm.SetUnavailable(true)
	resp, err := http.Post(url, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d", resp.StatusCode)
	}
	crm.SetUnavailable(false)
	cs := connect(t, url, "")
	if r := refund(t, cs, "", 1); r.IsError {
		t.Fatalf("after coming back: %q", text(r))
	}
}

// Credentials: a wrong or missing token gets 401.
func TestToken(t *testing.T) {
	t.Parallel()
	crm, err := crmtest.Start(&crmtest.Options{Token: "t0k"})
	if err != nil {
		t.Fatal(err)
	}
	defer crm.Close()
	resp, err := http.Post(crm.URL(), "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d without a token", resp.StatusCode)
	}
}
