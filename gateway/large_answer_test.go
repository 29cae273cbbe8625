package gateway

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

// nearMaxBody is a body near MaxProcessBytes, with what JSON escapes in it.
func nearMaxBody() string {
	return "\n# Large\n\n" + strings.Repeat("A line of the body, with <b>\"quotes\"</b> & Ünïcödé.\n", (240<<10)/56)
}

// endedRun publishes a process whose body is body and stores an ended run
// of it as a run writes one: its final view without the body, which
// get_run adds from the published version.
func endedRun(t testing.TB, b bundle, body string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "large-body")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "---\nname: large-body\ndescription: Ends where it starts.\nsteps:\n  - id: done\n    finish: ok\n---\n" + body
	if err := os.WriteFile(filepath.Join(dir, "PROCESS.md"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	pv, _, err := NewRegistry(b.store, b.g.opts.Org, b.g.Offer()).ImportAndPublish(b.ctx, dir, "u_admin", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &interpreter.Process{}
	if err := json.Unmarshal(pv.Definition, p); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	m, err := interpreter.StartRun(interpreter.Start{RunID: "r_large", Process: p, Version: pv.Version,
		Starter: interpreter.Actor{ID: "mira@example.com", Kind: interpreter.ActorPerson}}, now)
	if err != nil {
		t.Fatal(err)
	}
	v := m.View(now)
	v.Body = ""
	final, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	row := &store.RunRow{Org: b.g.opts.Org, RunID: v.Run.ID, Process: p.Name, Version: pv.Version, State: v.Run.State,
		Mode: interpreter.ModeLive, StartedBy: "mira@example.com", StartedAt: now, UpdatedAt: now, Seq: 1, FinalView: final}
	if v.Run.Outcome != nil {
		row.Outcome = *v.Run.Outcome
	}
	if _, err := b.store.PublishRun(b.ctx, nil, row, nil, nil); err != nil {
		t.Fatal(err)
	}
	return v.Run.ID
}

// get_run of an ended run of a process of 240 KiB answers its view with
// the body added, byte for byte as the MCP SDK answers it.
func TestLargeViewAnswersAsTheSDK(t *testing.T) {
	b, direct, sdk, tok := bothPaths(t)
	body := nearMaxBody()
	runID := endedRun(t, b, body)
	req := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_run","arguments":{"runId":"` + runID + `"},` + newMeta + `}}`
	h := newHeader(tok, "get_run")
	got, want := send(t, direct.URL, h, "", req), send(t, sdk.URL, h, "", req)
	if got.status != http.StatusOK || string(got.body) != string(want.body) {
		t.Fatalf("direct answered %d, %d bytes; the SDK %d, %d bytes; or they differ", got.status, len(got.body), want.status, len(want.body))
	}
	var res struct {
		Result struct {
			StructuredContent struct {
				OK   bool             `json:"ok"`
				Data interpreter.View `json:"data"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(got.body, &res); err != nil {
		t.Fatal(err)
	}
	if v := res.Result.StructuredContent; !v.OK || v.Data.Run.ID != runID || v.Data.Body != body {
		t.Fatalf("get_run answered ok %v, run %q, a body of %d bytes; want run %s and the %d bytes published", v.OK, v.Data.Run.ID, len(v.Data.Body), runID, len(body))
	}
}

// BenchmarkLargeView is a get_run of an ended run of a process of 240 KiB
// over HTTP, answered directly and by the SDK: the gateway adds the body
// to the stored view and encodes the tool result of a quarter megabyte.
func BenchmarkLargeView(b *testing.B) {
	bu, direct, sdk, tok := bothPaths(b)
	runID := endedRun(b, bu, nearMaxBody())
	req := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_run","arguments":{"runId":"` + runID + `"},` + newMeta + `}}`
	benchBothPaths(b, direct, sdk, newHeader(tok, "get_run"), req)
}

// encodeResult writes what json.Marshal of the SDK's result writes, byte
// for byte: text and structured content with what JSON escapes (quotes,
// <, > and &, U+2028, non-ASCII), a refusal, the new protocol's _meta,
// file links, and results it leaves to the SDK's encoder.
func TestEncodeResultIsTheSDKs(t *testing.T) {
	env := []byte(`{"ok":true,"data":{"body":"<b>\"x\"</b> & é` + "\u2028" + `","n":1.50}}`)
	size := int64(12)
	results := map[string]*mcp.CallToolResult{
		"plain": {StructuredContent: json.RawMessage(env), Content: []mcp.Content{&mcp.TextContent{Text: string(env)}}},
		"refusal": {IsError: true, StructuredContent: json.RawMessage(`{"ok":false,"error":{"code":"invalid"}}`),
			Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":false,"error":{"code":"invalid"}}`}}},
		"meta": {Meta: mcp.Meta{mcp.MetaKeyServerInfo: &mcp.Implementation{Name: "baton", Version: "1"}},
			StructuredContent: json.RawMessage(env), Content: []mcp.Content{&mcp.TextContent{Text: string(env)}}},
		"file links": {StructuredContent: json.RawMessage(env), Content: []mcp.Content{&mcp.TextContent{Text: string(env)},
			&mcp.ResourceLink{URI: "http://127.0.0.1/files/f_1?sig=a&b", Name: "r<1>.pdf", MIMEType: "application/pdf", Size: &size}}},
		"annotated text (the SDK's)": {StructuredContent: json.RawMessage(env),
			Content: []mcp.Content{&mcp.TextContent{Text: string(env), Annotations: &mcp.Annotations{Priority: 1}}}},
		"no structured content (the SDK's)": {Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}},
	}
	for name, res := range results {
		got, err := encodeResult(res)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: encodeResult wrote\n%s\njson.Marshal\n%s", name, got, want)
		}
	}
}
