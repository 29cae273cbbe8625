package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
)

var testAgent = auth.Identity{ID: "a_screener", Kind: auth.KindAgent}

func (b bundle) token(t testing.TB, id auth.Identity) string {
	t.Helper()
	tok, err := b.issuer.Issue(id, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// post sends one raw JSON-RPC body to /mcp as id.
func (b bundle) post(t testing.TB, url string, id auth.Identity, body io.Reader) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+b.token(t, id))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return http.DefaultClient.Do(req)
}

// toolCall is a tools/call request body with its fields in the order given.
func toolCall(params string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`
}

func uploadArgs(content []byte, requestID string) string {
	return fmt.Sprintf(`{"fileName":"r.pdf","contentType":"application/pdf","contentBase64":%q,"requestId":%q}`,
		base64.StdEncoding.EncodeToString(content), requestID)
}

// callResult reads a tool call's answer: the envelope Baton puts in the
// result.
func callResult(t testing.TB, resp *http.Response) envelopeReply {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var rpc struct {
		Result struct {
			StructuredContent envelopeReply `json:"structuredContent"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal(b, &rpc); err != nil || rpc.Error != nil {
		t.Fatalf("not a tool result: %s", b)
	}
	return rpc.Result.StructuredContent
}

type envelopeReply struct {
	OK    bool            `json:"ok"`
	Data  json.RawMessage `json:"data"`
	Error *struct {
		Code    string   `json:"code"`
		Message string   `json:"message"`
		Issues  []string `json:"issues"`
	} `json:"error"`
}

// Every tool but upload takes a body of at most MaxRequestBytes; an upload
// may be as large as its file allows.
func TestRequestBodiesAreLimited(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	srv := httptest.NewServer(b.g.Handler())
	t.Cleanup(srv.Close)
	big := strings.Repeat("r", 3<<19) // 1.5 MiB

	tests := []struct {
		name string
		body string
		// sdk: the first MiB says upload, and the MCP SDK, having read
		// it all, decoded another tool: refused as an invalid request.
		sdk bool
	}{
		{"another tool", toolCall(`{"name":"get_run","arguments":{"runId":"` + big + `"}}`), false},
		{"upload named after its arguments", toolCall(`{"arguments":` + uploadArgs([]byte(big), "r1") + `,"name":"upload"}`), false},
		{"upload named twice", toolCall(`{"name":"upload","arguments":{"runId":"` + big + `"},"name":"get_run"}`), true},
		{"method named twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"x":"` + big + `"}},"method":"tools/list"}`, true},
		{"method after params", `{"jsonrpc":"2.0","id":1,"params":{"name":"upload","arguments":` + uploadArgs([]byte(big), "r2") + `},"method":"tools/call"}`, false},
		{"not a call", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"name":"upload","x":"` + big + `"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := b.post(t, srv.URL, testAgent, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tt.sdk {
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"code":-32600`) || !strings.Contains(string(body), "only a tools/call of upload") {
					t.Fatalf("status %d: %.300s; want the invalid request error", resp.StatusCode, body)
				}
				return
			}
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413: %.200s", resp.StatusCode, body)
			}
			t.Logf("%.200s", body)
		})
	}

	t.Run("upload", func(t *testing.T) {
		content := bytes.Repeat([]byte("%PDF"), 1<<20) // 4 MiB
		resp, err := b.post(t, srv.URL, testAgent, strings.NewReader(toolCall(`{"name":"upload","arguments":`+uploadArgs(content, "r3")+`}`)))
		if err != nil {
			t.Fatal(err)
		}
		if r := callResult(t, resp); !r.OK || !strings.Contains(string(r.Data), `"bytes":4194304`) {
			t.Fatalf("upload of 4 MiB: %+v %s", r.Error, r.Data)
		}
	})
	t.Run("small call", func(t *testing.T) {
		resp, err := b.post(t, srv.URL, testAgent, strings.NewReader(toolCall(`{"name":"describe","arguments":{}}`)))
		if err != nil {
			t.Fatal(err)
		}
		if r := callResult(t, resp); !r.OK {
			t.Fatalf("describe: %+v", r.Error)
		}
	})
}

// slowBody sends head at once, then tail in pieces spread over d.
func slowBody(head, tail []byte, d time.Duration) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		if _, err := pw.Write(head); err != nil {
			return
		}
		const pieces = 10
		step := (len(tail) + pieces - 1) / pieces
		for i := 0; i < len(tail); i += step {
			time.Sleep(d / pieces)
			if _, err := pw.Write(tail[i:min(i+step, len(tail))]); err != nil {
				return
			}
		}
		pw.Close()
	}()
	return pr
}

// A server's read and write timeouts bound ordinary calls, but an upload
// on a slow link gets the time its size needs.
func TestSlowUploadOutlivesServerTimeouts(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: b.g.Handler(), ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	url := "http://" + ln.Addr().String()

	body := []byte(toolCall(`{"name":"upload","arguments":` + uploadArgs(bytes.Repeat([]byte("x"), 2<<20), "r-slow") + `}`))
	resp, err := b.post(t, url, testAgent, slowBody(body[:(1<<20)+10], body[(1<<20)+10:], time.Second))
	if err != nil {
		t.Fatalf("slow upload: %v", err)
	}
	if r := callResult(t, resp); !r.OK {
		t.Fatalf("slow upload: %+v", r.Error)
	}

	small := []byte(toolCall(`{"name":"describe","arguments":{}}`))
	resp, err = b.post(t, url, testAgent, slowBody(small[:10], small[10:], time.Second))
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("a small call trickled past ReadTimeout was answered: %s", body)
		}
	}
}

// A call wait is more than nothing and at most CallTimeout: the one check
// of Options.CallWait, which baton's --call-wait uses too. Zero in Options
// is the default.
func TestCheckCallWait(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		wait time.Duration
		ok   bool
	}{
		{-time.Second, false},
		{0, false},
		{time.Nanosecond, true},
		{300 * time.Millisecond, true},
		{CallTimeout, true},
		{CallTimeout + time.Nanosecond, false},
	} {
		if err := CheckCallWait(tc.wait); (err == nil) != tc.ok {
			t.Errorf("CheckCallWait(%v) = %v, want ok %v", tc.wait, err, tc.ok)
		}
	}
	for _, tc := range []struct {
		wait time.Duration
		ok   bool
	}{{0, true}, {-time.Second, false}, {CallTimeout + time.Second, false}} {
		o := Options{CallWait: tc.wait}
		if err := o.defaults(); (err == nil) != tc.ok {
			t.Errorf("Options{CallWait: %v}: %v, want ok %v", tc.wait, err, tc.ok)
		}
		if tc.ok && o.CallWait != DefaultCallWait {
			t.Errorf("Options{CallWait: 0} waits %v, want DefaultCallWait", o.CallWait)
		}
	}
}
