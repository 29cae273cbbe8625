package toolreg_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/toolreg"
	"github.com/baton-run/baton/interpreter"
)

// storyFile is the refund story's registration, which the store's tests
// keep too.
var storyFile = func() string {
	b, err := os.ReadFile(filepath.Join("testdata", "story.yaml"))
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func TestParseStory(t *testing.T) {
	t.Parallel()
	f, err := toolreg.Parse([]byte(storyFile), &toolreg.ParseOptions{Name: "tools.yaml", Dir: "/etc/baton"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Servers) != 2 {
		t.Fatalf("servers = %+v", f.Servers)
	}
	crm := f.Servers[0]
	if crm.Name != "crm" || crm.URL != "http://127.0.0.1:8090/mcp" || crm.TestURL != "http://localhost:8091/mcp" || crm.Timeout != 20*time.Second {
		t.Errorf("crm = %+v", crm)
	}
	if *crm.Credentials != (toolreg.Credentials{Env: "CRM_TOKEN", Header: "Authorization", Scheme: "Bearer"}) {
		t.Errorf("crm credentials = %+v", *crm.Credentials)
	}
	want := []toolreg.Tool{
		{Name: "get_customer", Policy: interpreter.PolicyRead, Idempotency: interpreter.IdempotencyNone},
		{Name: "create_ticket", Policy: interpreter.PolicyWrite, Idempotency: interpreter.IdempotencyByKey},
		{Name: "refund", Policy: interpreter.PolicyApprovalRequired, Idempotency: interpreter.IdempotencyByKey, Approvers: []string{"finance"}, ApprovalSLA: 4 * time.Hour},
	}
	if len(crm.Tools) != len(want) {
		t.Fatalf("crm tools = %+v", crm.Tools)
	}
	for i, w := range want {
		g := crm.Tools[i]
		if g.Name != w.Name || g.Policy != w.Policy || g.Idempotency != w.Idempotency || !slices.Equal(g.Approvers, w.Approvers) || g.ApprovalSLA != w.ApprovalSLA {
			t.Errorf("tool %d = %+v, want %+v", i, g, w)
		}
	}
	erp := f.Servers[1]
	if erp.Timeout != toolreg.DefaultTimeout || *erp.Credentials != (toolreg.Credentials{File: "/etc/baton/secrets/erp.token", Header: "X-Api-Key", Scheme: ""}) {
		t.Errorf("erp = %+v, credentials %+v", erp, *erp.Credentials)
	}

	cat := f.Catalog()
	if got := cat.Servers(); !slices.Equal(got, []string{"crm", "erp"}) {
		t.Errorf("catalog servers = %q", got)
	}
	if r, ok := cat.Lookup("crm/refund"); !ok || r.Policy != interpreter.PolicyApprovalRequired || r.ApprovalSLA != 4*time.Hour || !slices.Equal(r.Approvers, []string{"finance"}) {
		t.Errorf("catalog crm/refund = %+v, %v", r, ok)
	}
	if s, tl := f.Tool("erp/wire"); s == nil || s.Name != "erp" || tl.Policy != interpreter.PolicyApprovalRequired {
		t.Errorf("Tool(erp/wire) = %+v, %+v", s, tl)
	}
	if s, tl := f.Tool("erp/refund"); s != nil || tl != nil {
		t.Errorf("Tool(erp/refund) found %+v", tl)
	}
}

// A registration that names approvers on none of its approval tools is
// still valid: a step names them (docs/profile-tools.md §3).
func TestParseMinimal(t *testing.T) {
	t.Parallel()
	f, err := toolreg.Parse([]byte("servers:\n- name: a\n  url: https://a.example/mcp\n  tools: { x: read }\n"), nil)
	if err != nil || len(f.Servers) != 1 || f.Servers[0].Credentials != nil || f.Servers[0].Tools[0].Name != "x" {
		t.Fatalf("Parse = %+v, %v", f, err)
	}
}

func TestParseRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"empty", "", []string{"1:1: servers: required; the file is empty"}},
		{"comment only", "# nothing\n", []string{"1:1: servers: required; the file is empty"}},
		{"not a mapping", "- crm\n", []string{"1:1: file: expected a mapping, found a list"}},
		{"no servers", "server: []\n", []string{"1:1: server: unknown field", "1:1: servers: required"}},
		{"empty servers", "servers: []\n", []string{"1:10: servers: at least one server"}},
		{"syntax", "servers:\n  - name: crm\n   url: x\n", []string{"2: YAML: did not find expected '-' indicator"}},
		{"two documents", "servers: []\n---\nservers: []\n", []string{"2: more than one YAML document"}},
		{
			name: "server keys",
			src:  "servers:\n  - name: Crm\n    uri: x\n  - 12\n",
			want: []string{
				"2:5: servers[0].url: required",
				"2:5: servers[0].tools: required",
				"2:11: servers[0].name: must match ^[a-z0-9]+(-[a-z0-9]+)*$ and be at most 64 characters",
				"3:5: servers[0].uri: unknown field",
				"4:5: servers[1]: expected a mapping, found a number",
			},
		},
		{
			name: "duplicates, anchors and tags",
			src:  "servers:\n  - name: crm\n    name: crm2\n    url: &u https://a.example/mcp\n    test_url: *u\n    timeout: !!int 30\n    tools: { x: read }\n",
			want: []string{
				"3:5: servers[0].name: duplicate key, first at line 2",
				"4:10: servers[0].url: anchors and aliases are not allowed",
				"5:15: servers[0].test_url: anchors and aliases are not allowed",
				"6:14: servers[0].timeout: expected a string, found a number",
			},
		},
		{
			name: "unknown tags and keys equal once resolved",
			src:  "servers:\n  - name: !!timestamp crm\n    url: https://a.example/mcp\n    tools: { x: read, \"x\": write }\n",
			want: []string{
				"2:11: servers[0].name: unknown tag !!timestamp",
				"4:23: servers[0].tools.x: duplicate key, first at line 4",
			},
		},
		{
			name: "names twice",
			src:  "servers:\n  - { name: crm, url: 'https://a.example/mcp', tools: { x: read } }\n  - { name: crm, url: 'https://b.example/mcp', tools: { x: read } }\n",
			want: []string{`3:13: servers[1].name: "crm" is already the name of servers[0]`},
		},
		{
			name: "urls",
			src: "servers:\n  - { name: a, url: 'ftp://a.example/mcp', tools: { x: read } }\n  - { name: b, url: 'https:///mcp', tools: { x: read } }\n" +
				"  - { name: c, url: 'https://u:p@c.example/mcp', tools: { x: read } }\n  - { name: d, url: 'https://d.example/mcp#x', tools: { x: read } }\n" +
				"  - { name: e, url: '', tools: { x: read } }\n  - { name: f, url: 'https://f.example/mcp', test_url: 'ws://f.example', tools: { x: read } }\n",
			want: []string{
				"2:21: servers[0].url: must be an http or https URL",
				"3:21: servers[1].url: must name a host",
				"4:21: servers[2].url: must not carry a user or password; name the secret in credentials instead",
				"5:21: servers[3].url: must not have a fragment",
				"6:21: servers[4].url: must not be blank",
				"7:56: servers[5].test_url: must be an http or https URL",
			},
		},
		{
			name: "credentials",
			src: "servers:\n" +
				"  - { name: a, url: 'https://a.example/mcp', credentials: { env: A, file: a }, tools: { x: read } }\n" +
				"  - { name: b, url: 'https://b.example/mcp', credentials: {}, tools: { x: read } }\n" +
				"  - { name: c, url: 'https://c.example/mcp', credentials: { env: 1BAD }, tools: { x: read } }\n" +
				"  - { name: d, url: 'https://d.example/mcp', credentials: { env: D, header: Idempotency-Key }, tools: { x: read } }\n" +
				"  - { name: e, url: 'https://e.example/mcp', credentials: { env: E, header: 'X Key', scheme: 'Bear er' }, tools: { x: read } }\n" +
				"  - { name: f, url: 'http://crm.example/mcp', credentials: { env: F }, tools: { x: read } }\n" +
				"  - { name: g, url: 'https://g.example/mcp', test_url: 'http://10.0.0.1/mcp', credentials: { env: G, secret: s }, tools: { x: read } }\n",
			want: []string{
				"2:69: servers[0].credentials: env or file, not both",
				"3:59: servers[1].credentials: needs env (an environment variable) or file (a file holding the secret)",
				`4:66: servers[2].credentials.env: "1BAD" is not an environment variable name`,
				"5:77: servers[3].credentials.header: Idempotency-Key is set by Baton or MCP; name another header",
				`6:77: servers[4].credentials.header: "X Key" is not an HTTP header name`,
				`6:94: servers[4].credentials.scheme: "Bear er" is not a scheme word such as Bearer; "" sends the secret alone`,
				"7:47: servers[5].credentials: credentials travel only over https, or plain http to a loopback host; http://crm.example/mcp is neither",
				"8:79: servers[6].credentials: credentials travel only over https, or plain http to a loopback host; http://10.0.0.1/mcp is neither",
				"8:102: servers[6].credentials.secret: unknown field",
			},
		},
		{
			name: "timeouts",
			src: "servers:\n  - { name: a, url: 'https://a.example/mcp', timeout: 30, tools: { x: read } }\n" +
				"  - { name: b, url: 'https://b.example/mcp', timeout: 1h, tools: { x: read } }\n" +
				"  - { name: c, url: 'https://c.example/mcp', timeout: 0s, tools: { x: read } }\n" +
				"  - { name: d, url: 'https://d.example/mcp', timeout: 10m, tools: { x: read } }\n",
			want: []string{
				"2:55: servers[0].timeout: expected a string, found a number",
				"3:55: servers[1].timeout: must be from 1s to 10m0s",
				"4:55: servers[2].timeout: must be a whole number followed by s, m, h or d, such as 30s",
			},
		},
		{
			name: "tools",
			src: "servers:\n  - name: crm\n    url: https://a.example/mcp\n    tools:\n" +
				"      get customer: read\n" +
				"      create_ticket: write\n" +
				"      refund: { policy: approval_required }\n" +
				"      wire: { policy: aproval_required, idempotency: key }\n" +
				"      note: { policy: write, idempotency: maybe }\n" +
				"      lookup: { policy: read, approvers: [finance], approval_sla: 4h }\n" +
				"      pay: { policy: approval_required, idempotency: key, approvers: [finance, finance, ''], approval_sla: 4s }\n" +
				"      list: { idempotency: none }\n" +
				"      12: read\n" +
				"      ok: read\n",
			want: []string{
				"5:7: servers[0].tools.get customer: a tool name must match ^[A-Za-z0-9_.-]{1,128}$",
				"6:22: servers[0].tools.create_ticket: a write tool needs idempotency: key or none; write { policy: write, idempotency: key }",
				"7:15: servers[0].tools.refund.idempotency: required on an approval_required tool: key when the server deduplicates by the idempotency key, none when it does not",
				`8:23: servers[0].tools.wire.policy: unknown policy "aproval_required" (read, write or approval_required)`,
				`9:43: servers[0].tools.note.idempotency: unknown idempotency "maybe" (key or none)`,
				"10:31: servers[0].tools.lookup.approvers: only on an approval_required tool",
				"10:53: servers[0].tools.lookup.approval_sla: only on an approval_required tool",
				`11:80: servers[0].tools.pay.approvers[1]: "finance" is listed twice`,
				"11:89: servers[0].tools.pay.approvers[2]: must not be blank",
				"11:108: servers[0].tools.pay.approval_sla: must be a whole number followed by m, h or d, such as 30m, 4h or 3d",
				"12:13: servers[0].tools.list.policy: required",
				"13:7: servers[0].tools.12: expected a string, found a number",
			},
		},
		{
			name: "empty tools",
			src:  "servers:\n  - { name: a, url: 'https://a.example/mcp', tools: {} }\n  - { name: b, url: 'https://b.example/mcp', tools: [x] }\n",
			want: []string{
				"2:53: servers[0].tools: at least one tool",
				"3:53: servers[1].tools: expected a mapping of tool name to policy, found a list",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := toolreg.Parse([]byte(tc.src), &toolreg.ParseOptions{Name: "tools.yaml", Dir: "/etc/baton"})
			var fe *toolreg.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse = %+v, %v; want a *FileError", f, err)
			}
			if f != nil {
				t.Errorf("a refused file returned %+v", f)
			}
			got := make([]string, len(fe.Issues))
			for i, is := range fe.Issues {
				got[i] = is.String()
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("issues:\n got: %q\nwant: %q", got, tc.want)
			}
			if !strings.Contains(err.Error(), "tools.yaml:"+tc.want[0]) {
				t.Errorf("Error() = %q lacks the file and first issue", err.Error())
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "tools.yaml")
	if err := os.WriteFile(path, []byte(storyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := toolreg.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Server("erp").Credentials.File; got != filepath.Join(dir, "secrets", "erp.token") {
		t.Errorf("a relative credentials file resolves to %s", got)
	}
	if _, err := toolreg.ReadFile(filepath.Join(dir, "missing.yaml")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("# "+strings.Repeat("x", toolreg.MaxFileBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := toolreg.ReadFile(big); err == nil || !strings.Contains(err.Error(), "over 1048576 bytes") {
		t.Errorf("oversized file: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("servers: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := toolreg.ReadFile(bad); err == nil || err.Error() != "tool registration refused: "+bad+":1:10: servers: at least one server" {
		t.Errorf("refused file: %v", err)
	}
}
