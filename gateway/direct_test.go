package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// exchange is one HTTP request to /mcp and what came back.
type exchange struct {
	status int
	header http.Header // but Date
	body   []byte
}

func send(t testing.TB, url string, header http.Header, host, body string) exchange {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header.Clone()
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	h := resp.Header.Clone()
	h.Del("Date")
	return exchange{resp.StatusCode, h, b}
}

// bothPaths is one gateway served twice, with tool calls answered
// directly and all through the SDK, and a token of testAgent.
func bothPaths(t testing.TB) (b bundle, direct, sdk *httptest.Server, token string) {
	t.Helper()
	b = setup(t, nil)
	direct = httptest.NewServer(b.g.handler(true))
	t.Cleanup(direct.Close)
	sdk = httptest.NewServer(b.g.handler(false))
	t.Cleanup(sdk.Close)
	return b, direct, sdk, b.token(t, testAgent)
}

// newHeader is a tools/call's headers in protocol version 2026-07-28.
func newHeader(token, tool string) http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Mcp-Protocol-Version", "2026-07-28")
	h.Set("Mcp-Method", "tools/call")
	h.Set("Mcp-Name", tool)
	return h
}

const newMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`

// Every request to /mcp gets the same answer, its status, headers (but
// Date) and body byte for byte, whether the gateway answers its tool call
// directly or the MCP SDK answers it; and the direct path takes exactly
// the plain tool calls.
func TestDirectCallsAnswerAsTheSDK(t *testing.T) {
	b, direct, sdk, tok := bothPaths(t)

	type request struct {
		name                  string
		version, method, tool string // headers; "-" leaves Mcp-Method or Mcp-Name out
		body                  string
		edit                  func(http.Header)
		host                  string
		direct                bool
	}
	call := func(id, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`
	}
	cases := []request{
		{name: "new protocol", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":{},`+newMeta+`}`), direct: true},
		{name: "string id", version: "2026-07-28", body: call(`"c-1"`, `{"name":"describe","arguments":{},`+newMeta+`}`), direct: true},
		{name: "no arguments", version: "2026-07-28", body: call(`7`, `{"name":"describe",`+newMeta+`}`), direct: true},
		{name: "null arguments", version: "2026-07-28", body: call(`8`, `{"name":"describe","arguments":null,`+newMeta+`}`), direct: true},
		{name: "a refusal", version: "2026-07-28", tool: "get_run", body: call(`2`, `{"name":"get_run","arguments":{"runId":"r_<none>&"},`+newMeta+`}`), direct: true},
		{name: "invalid arguments", version: "2026-07-28", tool: "claim", body: call(`3`, `{"name":"claim","arguments":{"runId":5},`+newMeta+`}`), direct: true},
		{name: "a listing", version: "2026-07-28", tool: "list_runs", body: call(`4`, `{"name":"list_runs","arguments":{"limit":5},`+newMeta+`}`), direct: true},
		{name: "2025-11-25", version: "2025-11-25", body: call(`1`, `{"name":"describe","arguments":{}}`), direct: true},
		{name: "2025-06-18", version: "2025-06-18", body: call(`1`, `{"name":"get_run","arguments":{"runId":"r_x"}}`), direct: true},

		{name: "no version", version: "-", body: call(`1`, `{"name":"describe","arguments":{}}`)},
		{name: "2024-11-05", version: "2024-11-05", body: call(`1`, `{"name":"describe","arguments":{}}`)},
		{name: "unknown version", version: "2099-01-01", body: call(`1`, `{"name":"describe","arguments":{}}`)},
		{name: "name header differs", version: "2026-07-28", tool: "get_run", body: call(`1`, `{"name":"describe","arguments":{},`+newMeta+`}`)},
		{name: "no method header", version: "2026-07-28", method: "-", body: call(`1`, `{"name":"describe","arguments":{},`+newMeta+`}`)},
		{name: "no name header", version: "2026-07-28", tool: "-", body: call(`1`, `{"name":"describe","arguments":{},`+newMeta+`}`)},
		{name: "meta version differs", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-08-01","io.modelcontextprotocol/clientCapabilities":{}}}`)},
		{name: "meta a string", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":{},"_meta":"x"}`)},
		{name: "null meta", version: "2025-11-25", body: call(`1`, `{"name":"describe","arguments":{},"_meta":null}`), direct: true},
		{name: "no meta", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":{}}`)},
		{name: "no capabilities", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)},
		{name: "capabilities not objects", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":5}}}`)},
		{name: "client info a string", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"t"}}`)},
		{name: "old version naming the new in meta", version: "2025-11-25", body: call(`1`, `{"name":"describe","arguments":{},`+newMeta+`}`)},
		{name: "unknown tool", version: "2026-07-28", tool: "nothing", body: call(`1`, `{"name":"nothing","arguments":{},`+newMeta+`}`)},
		{name: "another method", version: "2026-07-28", method: "tools/list", tool: "-", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + newMeta + `}}`},
		{name: "a batch", version: "2025-03-26", body: `[` + call(`1`, `{"name":"describe","arguments":{}}`) + `]`},
		{name: "a notification", version: "2026-07-28", body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"describe","arguments":{},` + newMeta + `}}`},
		{name: "a key twice", version: "2026-07-28", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"describe","arguments":{},` + newMeta + `},"params":{"name":"get_run","arguments":{"runId":"r_1"},` + newMeta + `}}`},
		{name: "a name twice", version: "2026-07-28", body: call(`1`, `{"name":"get_run","name":"describe","arguments":{},`+newMeta+`}`)},
		{name: "another key", version: "2026-07-28", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"describe","arguments":{},` + newMeta + `},"extra":1}`},
		{name: "a fractional id", version: "2026-07-28", body: call(`1.5`, `{"name":"describe","arguments":{},`+newMeta+`}`)},
		{name: "an escaped id", version: "2026-07-28", body: call(`"a\u0041"`, `{"name":"describe","arguments":{},`+newMeta+`}`)},
		{name: "arguments a string", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":"x",`+newMeta+`}`)},
		{name: "not JSON", version: "2026-07-28", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`},
		{name: "JSON after", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":{},`+newMeta+`}`) + `{}`},
		{name: "Accept without streams", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":{},`+newMeta+`}`),
			edit: func(h http.Header) { h.Set("Accept", "application/json") }},
		{name: "Accept any", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":{},`+newMeta+`}`),
			edit: func(h http.Header) { h.Set("Accept", "*/*") }, direct: true},
		{name: "text body", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":{},`+newMeta+`}`),
			edit: func(h http.Header) { h.Set("Content-Type", "text/plain") }},
		{name: "resuming", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":{},`+newMeta+`}`),
			edit: func(h http.Header) { h.Set("Last-Event-ID", "1") }},
		{name: "another host", version: "2026-07-28", body: call(`1`, `{"name":"describe","arguments":{},`+newMeta+`}`), host: "baton.example"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tool := c.tool
			if tool == "" {
				tool = "describe"
			}
			h := newHeader(tok, tool)
			for key, v := range map[string]string{"Mcp-Protocol-Version": c.version, "Mcp-Method": c.method, "Mcp-Name": c.tool} {
				switch v {
				case "":
				case "-":
					h.Del(key)
				default:
					h.Set(key, v)
				}
			}
			if c.edit != nil {
				c.edit(h)
			}
			req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}))
			req.Header = h
			req.Host = "127.0.0.1:80"
			if c.host != "" {
				req.Host = c.host
			}
			_, taken := b.g.plainCall(h, []byte(c.body))
			taken = taken && plainPOST(req)
			if taken != c.direct {
				t.Errorf("answered directly: %v, want %v", taken, c.direct)
			}
			got, want := send(t, direct.URL, h, c.host, c.body), send(t, sdk.URL, h, c.host, c.body)
			if got.status != want.status || !reflect.DeepEqual(got.header, want.header) || !bytes.Equal(got.body, want.body) {
				t.Errorf("direct answered\n%d %v\n%s\nthe SDK\n%d %v\n%s", got.status, got.header, got.body, want.status, want.header, want.body)
			}
		})
	}
}

// recorder keeps every request an MCP client sends with its bearer
// token, and its answer.
type recorder struct {
	token string
	mu    sync.Mutex
	sent  []recorded
}

type recorded struct {
	header http.Header
	body   string
	answer []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+r.token)
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	r.mu.Lock()
	r.sent = append(r.sent, recorded{req.Header.Clone(), string(body), answer})
	r.mu.Unlock()
	return resp, nil
}

// The MCP SDK's own client, whatever protocol version it speaks, gets
// its tool calls answered directly, and each answer is the one the SDK
// gives the same request.
func TestDirectCallsOfTheSDKClient(t *testing.T) {
	b, direct, sdk, tok := bothPaths(t)
	rec := &recorder{token: tok}
	httpClient := &http.Client{Transport: rec}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: direct.URL + "/mcp", HTTPClient: httpClient}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, p := range []*mcp.CallToolParams{
		{Name: "describe"},
		{Name: "describe", Arguments: map[string]any{}},
		{Name: "describe", Arguments: map[string]any(nil)}, // "arguments":null
		{Name: "get_run", Arguments: map[string]any{"runId": "r_none"}},
		{Name: "list_runs", Arguments: map[string]any{"process": "p", "limit": 3}},
		{Name: "claim", Arguments: map[string]any{"runId": 1}},
	} {
		if _, err := cs.CallTool(ctx, p); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
	}
	calls := 0
	for _, s := range rec.sent {
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		req.Header = s.header
		_, plain := b.g.plainCall(s.header, []byte(s.body))
		plain = plain && plainPOST(req)
		if strings.Contains(s.body, `"tools/call"`) {
			calls++
			if !plain {
				t.Errorf("the client's call is not answered directly:\n%v\n%s", s.header, s.body)
			}
		}
		if !plain {
			continue
		}
		want := send(t, sdk.URL, s.header, "", s.body)
		if !bytes.Equal(s.answer, want.body) {
			t.Errorf("direct answered\n%s\nthe SDK\n%s", s.answer, want.body)
		}
	}
	if calls != 6 {
		t.Errorf("recorded %d tool calls, want 6", calls)
	}
}

// BenchmarkDescribeCall is one describe over HTTP, as the SDK's client
// sends it, answered directly and by the SDK: the transport's own cost.
func BenchmarkDescribeCall(b *testing.B) {
	_, direct, sdk, tok := bothPaths(b)
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"describe","arguments":{},` + newMeta + `}}`
	benchBothPaths(b, direct, sdk, newHeader(tok, "describe"), body)
}

// benchBothPaths times one request, answered directly and by the SDK.
func benchBothPaths(b *testing.B, direct, sdk *httptest.Server, h http.Header, body string) {
	for _, srv := range []struct {
		name string
		url  string
	}{{"direct", direct.URL}, {"sdk", sdk.URL}} {
		b.Run(srv.name, func(b *testing.B) {
			for b.Loop() {
				if got := send(b, srv.url, h, "", body); got.status != http.StatusOK {
					b.Fatalf("status %d", got.status)
				}
			}
		})
	}
}

// An upload over MaxRequestBytes in protocol version 2026-07-28, its
// length not said in advance, is read by the direct path up to the limit
// and handed to the SDK whole: its file is stored with its bytes' hash.
func TestDirectHandsLargeUploadsToTheSDK(t *testing.T) {
	_, direct, _, tok := bothPaths(t)
	content := bytes.Repeat([]byte("0123456789abcdef"), (MaxRequestBytes+MaxRequestBytes/2)/16)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload",` + newMeta + `,"arguments":` + uploadArgs(content, "up-large") + `}}`
	req, err := http.NewRequest(http.MethodPost, direct.URL+"/mcp", io.MultiReader(strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = newHeader(tok, "upload")
	if req.ContentLength > 0 {
		t.Fatal("the body's length is known")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	env := callResult(t, resp)
	var file struct {
		SHA256 string `json:"sha256"`
	}
	if !env.OK || json.Unmarshal(env.Data, &file) != nil {
		t.Fatalf("the upload was not stored: %+v %s", env.Error, env.Data)
	}
	if sum := sha256.Sum256(content); file.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("stored sha256 %s, want that of the %d bytes sent", file.SHA256, len(content))
	}
}
