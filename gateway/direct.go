package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// A tool call is nearly every request an MCP client sends, and in
// stateless mode the MCP SDK gives each one a session of its own: it reads
// the body twice, connects a session with its goroutines, hands the call
// to them and the answer back, and on every call re-reads the tool's
// input schema for header annotations. That was about a quarter of a
// millisecond of every call on a quiet machine, and more of its CPU under
// load.
//
// direct answers the plain tools/call itself, exactly as the SDK would
// (TestDirectCallsAnswerAsTheSDK compares the two byte for byte), and
// hands everything else to the SDK unchanged: another method, a batch, a
// notification, an unknown tool, a body over MaxRequestBytes, a protocol
// version it does not know, and anything the SDK would refuse. It decides
// before it answers, so a request is served by one of the two, whole.
func (g *Gateway) direct(sdk http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !plainPOST(r) || r.ContentLength > MaxRequestBytes {
			sdk.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
		if err != nil {
			http.Error(w, "failed to read body", http.StatusBadRequest)
			return
		}
		if len(body) > MaxRequestBytes {
			r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			sdk.ServeHTTP(w, r)
			return
		}
		c, ok := g.plainCall(r.Header, body)
		if !ok {
			r.Body = readCloser{bytes.NewReader(body), r.Body}
			sdk.ServeHTTP(w, r)
			return
		}
		g.answerDirect(w, r, c)
	})
}

// directCall is a tools/call the gateway answers itself.
type directCall struct {
	id   json.RawMessage // as sent: an integer or a plain string
	tool *tool
	args json.RawMessage
	// newProtocol is a call of protocol version 2026-07-28 or later,
	// whose result names the server and says it is complete.
	newProtocol bool
}

// The protocol versions direct answers, each as the SDK answers it; a
// request naming another one, or none, goes to the SDK.
const newProtocolVersion = "2026-07-28"

var directVersions = map[string]bool{newProtocolVersion: true, "2025-11-25": true, "2025-06-18": true}

// plainPOST reports whether r passes the SDK's checks of an HTTP request
// before its body: method, media types, a known protocol version, no
// stream to resume, and the Host a loopback listener wants.
func plainPOST(r *http.Request) bool {
	if r.Method != http.MethodPost || len(r.Header.Values("Last-Event-ID")) > 0 || !directVersions[r.Header.Get("Mcp-Protocol-Version")] {
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	jsonOK, streamOK := accepts(r.Header.Values("Accept"))
	if !jsonOK || !streamOK {
		return false
	}
	// The SDK refuses a request to a loopback listener that names another
	// host (DNS rebinding).
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
		if loopback(local.String()) && !loopback(r.Host) {
			return false
		}
	}
	return true
}

// accepts reads Accept headers as the SDK does.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for _, raw := range strings.Split(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// loopback reports whether a host, with or without its port, is
// localhost or a loopback address.
func loopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// The request ids direct echoes as they came: the SDK writes these back
// byte for byte. Others (fractions, exponents, escapes) go to the SDK.
var plainID = regexp.MustCompile(`^(?:-?(?:0|[1-9][0-9]{0,17})|"[A-Za-z0-9._:-]{1,64}")$`)

// plainCall reads a body that is one tools/call of one of the gateway's
// tools, with nothing the SDK would read otherwise or refuse.
func (g *Gateway) plainCall(h http.Header, body []byte) (directCall, bool) {
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if !decodeKeys(body, &msg, "jsonrpc", "id", "method", "params") ||
		msg.JSONRPC != "2.0" || msg.Method != "tools/call" || !plainID.Match(msg.ID) {
		return directCall{}, false
	}
	var params struct {
		Name      string                     `json:"name"`
		Arguments json.RawMessage            `json:"arguments"`
		Meta      map[string]json.RawMessage `json:"_meta"` // an object, or none
	}
	if !decodeKeys(msg.Params, &params, "name", "arguments", "_meta") {
		return directCall{}, false
	}
	t := g.tools[interpreter.Tool(params.Name)]
	// Arguments are an object, or none (left out or null), which serve
	// reads as {} under the SDK too.
	if t == nil || (params.Arguments != nil && string(params.Arguments) != "null" && !isObject(params.Arguments)) {
		return directCall{}, false
	}
	version := h.Get("Mcp-Protocol-Version")
	metaVersion, ok := metaProtocolVersion(params.Meta)
	if !ok {
		return directCall{}, false
	}
	c := directCall{id: msg.ID, tool: t, args: params.Arguments, newProtocol: version >= newProtocolVersion}
	if !c.newProtocol {
		// An older version's call names none in _meta; one that does
		// is checked against the header by the SDK.
		return c, metaVersion == ""
	}
	// The new protocol's call names its version, the client's
	// capabilities and its method and tool in headers too (SEP-2575).
	if metaVersion != version || h.Get("Mcp-Method") != msg.Method || h.Get("Mcp-Name") != params.Name {
		return directCall{}, false
	}
	return c, plainMeta(params.Meta)
}

// decodeKeys decodes a JSON object into v when it has no key but keys and
// none twice.
func decodeKeys(b []byte, v any, keys ...string) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		k, ok := tok.(string)
		if err != nil || !ok || seen[k] || !slices.Contains(keys, k) {
			return false
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	if _, err := dec.Token(); err != nil {
		return false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

// isObject reports whether b, a value a decoding already found to be
// valid JSON, is an object: its first byte tells, with no second pass.
func isObject(b json.RawMessage) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// metaProtocolVersion is the protocol version a call's _meta names ("" for
// none); it reports false for a version that is not a string.
func metaProtocolVersion(meta map[string]json.RawMessage) (string, bool) {
	raw, ok := meta[mcp.MetaKeyProtocolVersion]
	if !ok {
		return "", true
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return v, true
}

// plainMeta reports whether a new-protocol call's _meta holds what the
// SDK requires of it: the client's capabilities, an object of objects,
// and its name, when given, an implementation.
func plainMeta(meta map[string]json.RawMessage) bool {
	var caps map[string]json.RawMessage
	if json.Unmarshal(meta[mcp.MetaKeyClientCapabilities], &caps) != nil || caps == nil {
		return false
	}
	for _, v := range caps {
		if !isObject(v) {
			return false
		}
	}
	var typed struct {
		mcp.ClientCapabilities
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	if json.Unmarshal(meta[mcp.MetaKeyClientCapabilities], &typed) != nil {
		return false
	}
	if info, ok := meta[mcp.MetaKeyClientInfo]; ok {
		var impl mcp.Implementation
		if !isObject(info) || json.Unmarshal(info, &impl) != nil {
			return false
		}
	}
	return true
}

// answerDirect runs the call and writes its result as the SDK's JSON
// response would be. As under the SDK, a client that goes away does not
// stop the call: a write it started finishes in its run, bounded by
// Options.CallWait.
func (g *Gateway) answerDirect(w http.ResponseWriter, r *http.Request, c directCall) {
	ctx := context.WithoutCancel(r.Context())
	id, _ := auth.FromTokenInfo(sdkauth.TokenInfoFromContext(ctx))
	data, err := g.serve(ctx, c.tool, id, c.args)
	res := g.result(ctx, string(c.tool.name), data, err)
	if c.newProtocol {
		res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: g.impl}
	}
	b, err := encodeResult(res)
	if err == nil && c.newProtocol {
		b, err = completeResult(b)
	}
	if err != nil {
		g.opts.Logger.ErrorContext(ctx, "encoding a tool result failed", "tool", c.tool.name, "error", err)
		http.Error(w, "the result could not be encoded", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	out := make([]byte, 0, len(b)+len(c.id)+32)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, c.id...)
	out = append(out, `,"result":`...)
	out = append(out, b...)
	out = append(out, '}')
	_, _ = w.Write(out)
}

// encodeResult encodes a tool result as the MCP SDK does, byte for byte,
// in fewer passes over it: the SDK encodes each part, then checks and
// compacts it again at every level, and a run view with the body of a
// large process is hundreds of kilobytes. A result with parts the
// gateway's results never have goes to the SDK's encoder.
func encodeResult(res *mcp.CallToolResult) ([]byte, error) {
	structured, ok := res.StructuredContent.(json.RawMessage)
	if !ok || res.InputRequests != nil || res.RequestState != "" || len(res.Content) == 0 {
		return res.MarshalJSON()
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok || text.Meta != nil || text.Annotations != nil {
		return res.MarshalJSON()
	}
	// The SDK's encoding/json writes strings with <, > and & escaped, and
	// escapes them in the structured content it copies.
	textJSON, err := json.Marshal(text.Text)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(textJSON) + len(structured) + 128)
	b.WriteByte('{')
	if len(res.Meta) > 0 {
		meta, err := json.Marshal(res.Meta)
		if err != nil {
			return nil, err
		}
		b.WriteString(`"_meta":`)
		b.Write(meta)
		b.WriteByte(',')
	}
	b.WriteString(`"content":[{"type":"text","text":`)
	b.Write(textJSON)
	b.WriteByte('}')
	for _, c := range res.Content[1:] {
		part, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		b.WriteByte(',')
		b.Write(part)
	}
	// The structured content is the envelope the gateway encoded, compact.
	b.WriteString(`],"structuredContent":`)
	json.HTMLEscape(&b, structured)
	if res.IsError {
		b.WriteString(`,"isError":true`)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// completeResult adds the new protocol's resultType to an encoded tool
// result, where the SDK writes it: last, as nothing after it is set.
func completeResult(b []byte) ([]byte, error) {
	if len(b) < 2 || b[len(b)-1] != '}' {
		return nil, errors.New("gateway: a tool result is not an object")
	}
	out := append(b[:len(b)-1:len(b)-1], `,"resultType":"complete"}`...)
	return out, nil
}
