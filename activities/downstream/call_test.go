package downstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/activities/downstream"
	"github.com/baton-run/baton/internal/testing/crmtest"
	"github.com/baton-run/baton/internal/toolreg"
	"github.com/baton-run/baton/interpreter"
)

const token = "crm-secret-1"

// setup starts a crm requiring the token and returns a client whose
// environment holds it, and the endpoint.
func setup(t *testing.T, opts *crmtest.Options) (*crmtest.Server, *downstream.Client, downstream.Endpoint) {
	t.Helper()
	o := crmtest.Options{Token: token}
	if opts != nil {
		o = *opts
	}
	crm, err := crmtest.Start(&o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { crm.Close() })
	env := map[string]string{"CRM_TOKEN": token}
	c, err := downstream.New(&downstream.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	ep := downstream.Endpoint{Server: "crm", URL: crm.URL(), Timeout: 5 * time.Second,
		Credentials: &toolreg.Credentials{Env: "CRM_TOKEN", Header: "Authorization", Scheme: "Bearer"}}
	return crm, c, ep
}

func call(t *testing.T, c *downstream.Client, ep downstream.Endpoint, tool, args, key string) (*downstream.Result, error) {
	t.Helper()
	return c.Call(context.Background(), downstream.Call{Endpoint: ep, Tool: tool, Arguments: json.RawMessage(args), IdempotencyKey: key})
}

// decoded returns a result's JSON as a map.
func decoded(t *testing.T, r *downstream.Result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.JSON, &m); err != nil {
		t.Fatalf("result %s: %v", r.JSON, err)
	}
	return m
}

// A read over real HTTP: the answer's structured content, the key in _meta
// and in the header of the tools/call request alone, the credentials on
// every request.
func TestCallRead(t *testing.T) {
	t.Parallel()
	crm, c, ep := setup(t, nil)
	r, err := call(t, c, ep, "get_customer", `{"email":"alice@example.com"}`, "bt1-read")
	if err != nil {
		t.Fatal(err)
	}
	m := decoded(t, r)
	sc, _ := m["structuredContent"].(map[string]any)
	if r.IsError || m["isError"] != false || sc["id"] != "c_001" || sc["name"] != "Alice Martin" {
		t.Fatalf("result = %s", r.JSON)
	}
	content, _ := m["content"].([]any)
	if len(content) != 1 || content[0].(map[string]any)["type"] != "text" {
		t.Errorf("content = %v", m["content"])
	}
	calls := crm.Calls("get_customer")
	if len(calls) != 1 || calls[0].MetaKey != "bt1-read" || calls[0].HeaderKey != "bt1-read" || string(calls[0].Arguments) != `{"email":"alice@example.com"}` {
		t.Fatalf("calls = %+v", calls)
	}
	for _, req := range crm.Requests() {
		if req.Method != "tools/call" && req.HeaderKey != "" {
			t.Errorf("%s carried Idempotency-Key %q", req.Method, req.HeaderKey)
		}
	}
	if crm.Effects("get_customer") != 1 {
		t.Errorf("effects = %d", crm.Effects("get_customer"))
	}
}

// The same key twice: one effect, the same answer. Another key: another
// ticket.
func TestCallWriteDeduplicatedByKey(t *testing.T) {
	t.Parallel()
	crm, c, ep := setup(t, nil)
	args := `{"customer":"alice@example.com","subject":"Order 1042 arrived broken"}`
	first, err := call(t, c, ep, "create_ticket", args, "bt1-ticket")
	if err != nil {
		t.Fatal(err)
	}
	again, err := call(t, c, ep, "create_ticket", args, "bt1-ticket")
	if err != nil {
		t.Fatal(err)
	}
	if string(first.JSON) != string(again.JSON) || !strings.Contains(string(first.JSON), `"ticket":"T-1001"`) {
		t.Fatalf("first %s, again %s", first.JSON, again.JSON)
	}
	if crm.Effects("create_ticket") != 1 || len(crm.Tickets()) != 1 || len(crm.Calls("create_ticket")) != 2 || !crm.Calls("create_ticket")[1].Replayed {
		t.Fatalf("effects %d, tickets %+v, calls %+v", crm.Effects("create_ticket"), crm.Tickets(), crm.Calls("create_ticket"))
	}
	other, err := call(t, c, ep, "create_ticket", args, "bt1-ticket-2")
	if err != nil || !strings.Contains(string(other.JSON), `"ticket":"T-1002"`) || crm.Effects("create_ticket") != 2 {
		t.Fatalf("another key: %s, %v", other.JSON, err)
	}
	// The same key for other arguments is the server's refusal, a tool
	// error: the call reached it and it said no.
	reused, err := call(t, c, ep, "create_ticket", `{"customer":"bob@example.com","subject":"x"}`, "bt1-ticket")
	if err != nil || !reused.IsError || !strings.Contains(string(reused.JSON), "was used for another call") || crm.Effects("create_ticket") != 2 {
		t.Fatalf("key reused: %v, %v", reused, err)
	}
}

// A tool's own error is a result, not an error.
func TestCallToolError(t *testing.T) {
	t.Parallel()
	crm, c, ep := setup(t, nil)
	r, err := call(t, c, ep, "refund", `{"customer":"alice@example.com","amount":890,"currency":"EUR"}`, "bt1-big")
	if err != nil {
		t.Fatal(err)
	}
	m := decoded(t, r)
	if !r.IsError || m["isError"] != true || !strings.Contains(string(r.JSON), "refunds over 500 are not made here") {
		t.Fatalf("result = %s", r.JSON)
	}
	if _, has := m["structuredContent"]; has {
		t.Errorf("an error result has structured content: %s", r.JSON)
	}
	if len(crm.Refunds()) != 0 {
		t.Errorf("refunds = %+v", crm.Refunds())
	}
	// Arguments the tool's schema refuses are the tool's error too.
	r, err = call(t, c, ep, "refund", `{"customer":"alice@example.com","amount":"89","currency":"EUR"}`, "bt1-str")
	if err != nil || !r.IsError || !strings.Contains(string(r.JSON), "amount") {
		t.Fatalf("schema refusal: %v, %v", r, err)
	}
}

// An unknown tool: the server answers with a protocol error; the call did
// not run, and the answer is the call's.
func TestCallUnknownTool(t *testing.T) {
	t.Parallel()
	_, c, ep := setup(t, nil)
	_, err := call(t, c, ep, "delete_customer", `{}`, "bt1-x")
	var ce *downstream.CallError
	if !errors.As(err, &ce) || ce.Kind != downstream.Refused || ce.Retryable() || ce.MayHaveRun() {
		t.Fatalf("err = %#v", err)
	}
	if !strings.Contains(ce.Message, `crm refused the call`) || !strings.Contains(ce.Message, "delete_customer") {
		t.Errorf("message = %q", ce.Message)
	}
	var res struct {
		Content []struct{ Text string }
		IsError bool
	}
	if err := json.Unmarshal(ce.Result(), &res); err != nil || !res.IsError || res.Content[0].Text != ce.Message {
		t.Errorf("Result() = %s", ce.Result())
	}
}

// Down: connection refused, certainly not sent. Back up on the same
// address, the same call works.
func TestCallServerDown(t *testing.T) {
	t.Parallel()
	crm, c, ep := setup(t, nil)
	if err := crm.SetDown(true); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := call(t, c, ep, "refund", `{"customer":"alice@example.com","amount":89,"currency":"EUR"}`, "bt1-down")
	var ce *downstream.CallError
	if !errors.As(err, &ce) || ce.Kind != downstream.NotSent || !ce.Retryable() || ce.MayHaveRun() {
		t.Fatalf("err = %#v", err)
	}
	if !strings.HasPrefix(ce.Message, "crm could not be reached") || time.Since(start) > 3*time.Second {
		t.Errorf("message %q after %s", ce.Message, time.Since(start))
	}
	if err := crm.SetDown(false); err != nil {
		t.Fatal(err)
	}
	r, err := call(t, c, ep, "refund", `{"customer":"alice@example.com","amount":89,"currency":"EUR"}`, "bt1-down")
	if err != nil || r.IsError || len(crm.Refunds()) != 1 {
		t.Fatalf("after coming back: %v, %v, refunds %+v", r, err, crm.Refunds())
	}
}

// 503 on every request: the handshake fails, nothing was sent.
func TestCallServerUnavailable(t *testing.T) {
	t.Parallel()
	crm, c, ep := setup(t, nil)
	crm.SetUnavailable(true)
	_, err := call(t, c, ep, "get_customer", `{"email":"alice@example.com"}`, "")
	var ce *downstream.CallError
	if !errors.As(err, &ce) || ce.Kind != downstream.NotSent || ce.Status != 503 {
		t.Fatalf("err = %#v", err)
	}
	if len(crm.Calls("")) != 0 {
		t.Errorf("calls reached the tool: %+v", crm.Calls(""))
	}
}

// Slow: the refund is made but the answer comes after the timeout. The
// outcome is unknown to the caller; sending again with the same key gets
// the first answer and makes no second refund.
func TestCallSlowServer(t *testing.T) {
	t.Parallel()
	crm, c, ep := setup(t, nil)
	crm.SetDelay(3 * time.Second)
	ep.Timeout = 300 * time.Millisecond
	args := `{"customer":"alice@example.com","amount":89,"currency":"EUR","reason":"Order 1042 arrived broken"}`
	start := time.Now()
	_, err := call(t, c, ep, "refund", args, "bt1-slow")
	var ce *downstream.CallError
	if !errors.As(err, &ce) || ce.Kind != downstream.NoAnswer || !ce.MayHaveRun() || !ce.Retryable() {
		t.Fatalf("err = %#v", err)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("the call took %s; the timeout is 300ms", elapsed)
	}
	if ce.Message != "crm did not answer within 300ms; the call may or may not have run" {
		t.Errorf("message = %q", ce.Message)
	}
	if len(crm.Refunds()) != 1 {
		t.Fatalf("refunds = %+v", crm.Refunds())
	}
	crm.SetDelay(0)
	ep.Timeout = 5 * time.Second
	r, err := call(t, c, ep, "refund", args, "bt1-slow")
	if err != nil || r.IsError || !strings.Contains(string(r.JSON), `"refund":"R-5001"`) {
		t.Fatalf("retry with the key: %v, %v", r, err)
	}
	if len(crm.Refunds()) != 1 || crm.Effects("refund") != 1 {
		t.Fatalf("a second refund was made: %+v", crm.Refunds())
	}
}

// A server that ignores keys (idempotency: none) makes a second refund on
// a second send: what Baton must never do after an unknown outcome.
func TestCallKeysIgnored(t *testing.T) {
	t.Parallel()
	crm, c, ep := setup(t, &crmtest.Options{IgnoreKeys: true})
	ep.Credentials = nil
	args := `{"customer":"bob@example.com","amount":20,"currency":"USD"}`
	for range 2 {
		if _, err := call(t, c, ep, "refund", args, "bt1-same"); err != nil {
			t.Fatal(err)
		}
	}
	if len(crm.Refunds()) != 2 {
		t.Fatalf("refunds = %+v", crm.Refunds())
	}
}

func TestCallCredentials(t *testing.T) {
	t.Parallel()
	crm, c, ep := setup(t, nil)

	wrong, _ := downstream.New(&downstream.Options{LookupEnv: func(string) (string, bool) { return "wrong", true }})
	_, err := call(t, wrong, ep, "get_customer", `{"email":"alice@example.com"}`, "")
	var ce *downstream.CallError
	if !errors.As(err, &ce) || ce.Kind != downstream.NotSent || ce.Status != 401 || !strings.Contains(ce.Message, "refused Baton's credentials (HTTP 401)") {
		t.Fatalf("wrong token: %#v", err)
	}

	handshakes := len(crm.Requests())
	for _, r := range crm.Requests() {
		if r.Method == "tools/call" {
			t.Errorf("a call got past the wrong token's handshake: %+v", crm.Requests())
		}
	}

	unset, _ := downstream.New(&downstream.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	_, err = call(t, unset, ep, "get_customer", `{"email":"alice@example.com"}`, "")
	if !errors.As(err, &ce) || ce.Kind != downstream.NotSent || !errors.Is(err, downstream.ErrCredentials) ||
		!strings.Contains(ce.Message, "the environment variable CRM_TOKEN of crm is not set where calls are made") {
		t.Fatalf("unset variable: %#v", err)
	}
	// With the variable unset nothing was sent at all.
	if reqs := crm.Requests(); len(reqs) != handshakes || handshakes == 0 {
		t.Errorf("requests = %+v", reqs)
	}
	if r, err := call(t, c, ep, "get_customer", `{"email":"alice@example.com"}`, ""); err != nil || r.IsError {
		t.Fatalf("the right token: %v, %v", r, err)
	}

	// A file, another header, no scheme.
	keyed, err := crmtest.Start(&crmtest.Options{Token: token, Header: "X-Api-Key"})
	if err != nil {
		t.Fatal(err)
	}
	defer keyed.Close()
	path := filepath.Join(t.TempDir(), "crm.token")
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fileClient, _ := downstream.New(nil)
	ep2 := downstream.Endpoint{Server: "crm", URL: keyed.URL(), Credentials: &toolreg.Credentials{File: path, Header: "X-Api-Key"}}
	if r, err := call(t, fileClient, ep2, "get_customer", `{"email":"bob@example.com"}`, ""); err != nil || r.IsError {
		t.Fatalf("file credentials: %v, %v", r, err)
	}
}

func TestCallTruncatesLargeResults(t *testing.T) {
	t.Parallel()
	_, _, ep := setup(t, nil)
	small, _ := downstream.New(&downstream.Options{MaxResultBytes: 64, LookupEnv: func(string) (string, bool) { return token, true }})
	r, err := call(t, small, ep, "get_customer", `{"email":"alice@example.com"}`, "")
	if err != nil || !r.Truncated || r.IsError || !strings.Contains(string(r.JSON), "over the 64 bytes Baton keeps") {
		t.Fatalf("result = %+v, %v", r, err)
	}
	if _, err := downstream.New(&downstream.Options{MaxResultBytes: -1}); err == nil {
		t.Error("a negative MaxResultBytes was accepted")
	}
}

// The stateless protocol (2026-07-28) works the same.
func TestCallStateless(t *testing.T) {
	t.Parallel()
	crm, c, ep := setup(t, &crmtest.Options{Token: token, Stateless: true})
	args := `{"customer":"carol@example.com","subject":"Where is my order?"}`
	for range 2 {
		r, err := call(t, c, ep, "create_ticket", args, "bt1-stateless")
		if err != nil || r.IsError {
			t.Fatalf("%v, %v", r, err)
		}
	}
	if crm.Effects("create_ticket") != 1 || crm.Calls("create_ticket")[0].HeaderKey != "bt1-stateless" {
		t.Fatalf("effects %d, calls %+v", crm.Effects("create_ticket"), crm.Calls("create_ticket"))
	}
}

func TestEndpointFor(t *testing.T) {
	t.Parallel()
	s := toolreg.Server{Name: "crm", URL: "https://crm/mcp", Timeout: time.Second,
		Credentials: &toolreg.Credentials{Env: "CRM_TOKEN", Header: "Authorization", Scheme: "Bearer"}}
	withTest := s
	withTest.TestURL = "https://crm-sandbox/mcp"
	for _, tc := range []struct {
		name   string
		s      toolreg.Server
		test   bool
		policy interpreter.Policy
		url    string
		send   bool
	}{
		{"live write", s, false, interpreter.PolicyWrite, "https://crm/mcp", true},
		{"live approval", withTest, false, interpreter.PolicyApprovalRequired, "https://crm/mcp", true},
		{"test read without test_url", s, true, interpreter.PolicyRead, "https://crm/mcp", true},
		{"test write without test_url", s, true, interpreter.PolicyWrite, "https://crm/mcp", false},
		{"test approval without test_url", s, true, interpreter.PolicyApprovalRequired, "https://crm/mcp", false},
		{"test write with test_url", withTest, true, interpreter.PolicyWrite, "https://crm-sandbox/mcp", true},
		{"test read with test_url", withTest, true, interpreter.PolicyRead, "https://crm-sandbox/mcp", true},
	} {
		ep, send := downstream.EndpointFor(tc.s, tc.test, tc.policy)
		if ep.URL != tc.url || send != tc.send || ep.Server != "crm" || ep.Credentials.Env != "CRM_TOKEN" || ep.Timeout != time.Second {
			t.Errorf("%s: EndpointFor = %+v, %v", tc.name, ep, send)
		}
	}
}
