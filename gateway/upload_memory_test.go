package gateway

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/testing/memtest"
	"github.com/baton-run/baton/interpreter"
)

// uploadBody is the JSON-RPC body of a tools/call of upload carrying data.
func uploadBody(reqID string, data []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"requestId":%q,"fileName":"scan.bin","contentType":"application/octet-stream","contentBase64":"`, reqID)
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	enc.Write(data)
	enc.Close()
	b.WriteString(`"}}}`)
	return b.Bytes()
}

// A 10 MiB upload over MCP holds a bounded number of copies of itself:
// the peak heap while it is served, above what was held before, and the
// bytes allocated, are logged (go test ./gateway -run
// TestUploadMemoryOverMCP -v).
func TestUploadMemoryOverMCP(t *testing.T) {
	b := setup(t, nil)
	srv := httptest.NewServer(b.g.Handler())
	defer srv.Close()
	data := make([]byte, 10<<20)
	rand.Read(data)
	post := func(body []byte) (int, string) {
		resp, err := b.post(t, srv.URL, testAgent, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	// Warm up: connections, schemas, the first statements.
	if code, out := post(uploadBody("warm-up", data[:1<<10])); code != http.StatusOK || strings.Contains(out, `"isError":true`) {
		t.Fatalf("warm-up upload: %d %s", code, out)
	}
	body := uploadBody("scan-1", data)
	var code int
	var out string
	u := memtest.Measure(func() { code, out = post(body) })
	if code != http.StatusOK || strings.Contains(out, `"isError":true`) || !strings.Contains(out, `\"bytes\":10485760`) {
		t.Fatalf("upload: %d %.300s", code, out)
	}
	t.Logf("10 MiB upload over MCP (%d-byte body): peak heap %.1f MiB above the start, %.1f MiB allocated",
		len(body), float64(u.Peak)/(1<<20), float64(u.Allocated)/(1<<20))
	checkUploadMemory(t, u)
}

// checkUploadMemory fails a 10 MiB upload over MCP that allocated more
// than a streamed one: 419 MiB, most of it the MCP SDK reading and
// decoding the body; 710 MiB when the gateway buffered the body and
// canonicalized the base64 for its digest. The peak depends on when the
// collector runs and is only logged.
func checkUploadMemory(t *testing.T, u memtest.Usage) {
	t.Helper()
	if u.Allocated > 550<<20 {
		t.Errorf("a 10 MiB upload allocated %.1f MiB, over 550 MiB: is the body buffered or the base64 canonicalized again?", float64(u.Allocated)/(1<<20))
	}
}

// An upload's digest, made without canonicalizing its base64, is the one
// the whole arguments' JCS form gives: records made before stay replays.
func TestUploadDigestIsTheJCSDigest(t *testing.T) {
	t.Parallel()
	g := &Gateway{tools: map[interpreter.Tool]*tool{}}
	for _, tl := range toolTable() {
		g.tools[tl.name] = tl
	}
	for _, raw := range []string{
		`{"requestId":"u-1","fileName":"scan.pdf","contentType":"application/pdf","contentBase64":"QUJD+/9="}`,
		`{"contentBase64":"QUJD\/\/9=","fileName":"r\u00e9sum\u00e9 <1> & \"2\".txt","requestId":"u-2","contentType":"text/plain"}`,
		`{"requestId":"u-3","fileName":"a","contentType":"b","contentBase64":""}`,
		`{"requestId":"u-4","fileName":"a","contentType":"b","contentBase64":"not base64!"}`,
	} {
		var args map[string]any
		d := json.NewDecoder(strings.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&args); err != nil {
			t.Fatal(err)
		}
		c := &call{tool: g.tools["upload"], id: auth.Identity{ID: "a_1", Kind: auth.KindAgent}, args: args, raw: json.RawMessage(raw)}
		canon, err := jcs.Transform(c.raw)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		fmt.Fprintf(h, "upload\x00agent\x00a_1\x00")
		h.Write(canon)
		if got, want := digest(c), hex.EncodeToString(h.Sum(nil)); got != want {
			t.Errorf("%s: digest %s, want the JCS digest %s", raw, got, want)
		}
	}
}
