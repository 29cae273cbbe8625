package interpreter

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPolicyOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p, q    Policy
		looser  bool
		tighter Policy
	}{
		{PolicyRead, PolicyWrite, true, PolicyWrite},
		{PolicyWrite, PolicyApprovalRequired, true, PolicyApprovalRequired},
		{PolicyRead, PolicyApprovalRequired, true, PolicyApprovalRequired},
		{PolicyWrite, PolicyWrite, false, PolicyWrite},
		{PolicyApprovalRequired, PolicyRead, false, PolicyApprovalRequired},
	} {
		if got := tc.p.Looser(tc.q); got != tc.looser {
			t.Errorf("%s.Looser(%s) = %v", tc.p, tc.q, got)
		}
		if got := tc.p.Tightest(tc.q); got != tc.tighter {
			t.Errorf("%s.Tightest(%s) = %s", tc.p, tc.q, got)
		}
	}
	for _, p := range Policies {
		if !p.Valid() {
			t.Errorf("%s is not valid", p)
		}
	}
	for _, p := range []Policy{"", "Read", "approve", "approval-required"} {
		if p.Valid() {
			t.Errorf("%q is valid", p)
		}
	}
	if !IdempotencyByKey.Valid() || !IdempotencyNone.Valid() || Idempotency("keys").Valid() {
		t.Error("Idempotency.Valid is wrong")
	}
}

func TestSplitToolRef(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ref, server, tool string
		ok                bool
	}{
		{"crm/refund", "crm", "refund", true},
		{"my-crm/get.customer_v2", "my-crm", "get.customer_v2", true},
		{"crm", "", "", false},
		{"crm/", "", "", false},
		{"/refund", "", "", false},
		{"crm/a/b", "", "", false},
		{"", "", "", false},
	} {
		s, tl, ok := SplitToolRef(tc.ref)
		if s != tc.server || tl != tc.tool || ok != tc.ok {
			t.Errorf("SplitToolRef(%q) = %q, %q, %v", tc.ref, s, tl, ok)
		}
	}
}

func TestToolCatalog(t *testing.T) {
	t.Parallel()
	c := testCatalog()
	if got, ok := c.Lookup("crm/refund"); !ok || got.Policy != PolicyApprovalRequired || got.ApprovalSLA != 4*time.Hour || got.Ref() != "crm/refund" {
		t.Errorf("Lookup(crm/refund) = %+v, %v", got, ok)
	}
	for _, ref := range []string{"crm/nope", "erp/refund", "crm", ""} {
		if _, ok := c.Lookup(ref); ok {
			t.Errorf("Lookup(%q) found something", ref)
		}
	}
	if got := c.Servers(); !slices.Equal(got, []string{"crm", "erp"}) {
		t.Errorf("Servers() = %q", got)
	}
	if got := c.ServerTools("crm"); !slices.Equal(got, []string{"create_ticket", "get_customer", "refund", "wire_transfer"}) {
		t.Errorf("ServerTools(crm) = %q", got)
	}
	var none *ToolCatalog
	if _, ok := none.Lookup("crm/refund"); ok || none.Servers() != nil || none.ServerTools("crm") != nil {
		t.Error("a nil catalog is not empty")
	}
}

func TestResolveTool(t *testing.T) {
	t.Parallel()
	cat := testCatalog()
	reg := func(ref string) CatalogTool {
		t.Helper()
		c, ok := cat.Lookup(ref)
		if !ok {
			t.Fatalf("no %s", ref)
		}
		return c
	}
	roles := map[string]string{"finance-leads": "g_finance_leads", "cfo": "g_cfo", "privacy": "g_privacy"}
	for _, tc := range []struct {
		name    string
		use     ToolUse
		reg     CatalogTool
		want    ResolvedTool
		wantErr error
	}{
		{
			name: "read as registered",
			use:  ToolUse{Ref: "crm/get_customer"}, reg: reg("crm/get_customer"),
			want: ResolvedTool{Ref: "crm/get_customer", Server: "crm", Tool: "get_customer", Policy: PolicyRead, Idempotency: IdempotencyNone},
		},
		{
			name: "tightened to write",
			use:  ToolUse{Ref: "crm/get_customer", Policy: PolicyWrite}, reg: reg("crm/get_customer"),
			want: ResolvedTool{Ref: "crm/get_customer", Server: "crm", Tool: "get_customer", Policy: PolicyWrite, Idempotency: IdempotencyNone},
		},
		{
			name: "a looser step policy never loosens (the registration changed after publication)",
			use:  ToolUse{Ref: "crm/create_ticket", Policy: PolicyRead}, reg: reg("crm/create_ticket"),
			want: ResolvedTool{Ref: "crm/create_ticket", Server: "crm", Tool: "create_ticket", Policy: PolicyWrite, Idempotency: IdempotencyByKey},
		},
		{
			name: "the registration's approvers",
			use:  ToolUse{Ref: "crm/refund"}, reg: reg("crm/refund"),
			want: ResolvedTool{Ref: "crm/refund", Server: "crm", Tool: "refund", Policy: PolicyApprovalRequired, Idempotency: IdempotencyByKey,
				Approvers: []string{"finance"}, ApprovalSLA: 4 * time.Hour},
		},
		{
			name: "the step's approvers above the registration's floor",
			use:  ToolUse{Ref: "crm/refund", Approvers: []string{"finance-leads", "cfo"}}, reg: reg("crm/refund"),
			want: ResolvedTool{Ref: "crm/refund", Server: "crm", Tool: "refund", Policy: PolicyApprovalRequired, Idempotency: IdempotencyByKey,
				Approvers: []string{"g_finance_leads", "g_cfo"}, Floor: []string{"finance"}, ApprovalSLA: 4 * time.Hour},
		},
		{
			name: "step approvers make a read tool need approval",
			use:  ToolUse{Ref: "crm/get_customer", Approvers: []string{"privacy"}}, reg: reg("crm/get_customer"),
			want: ResolvedTool{Ref: "crm/get_customer", Server: "crm", Tool: "get_customer", Policy: PolicyApprovalRequired, Idempotency: IdempotencyNone,
				Approvers: []string{"g_privacy"}},
		},
		{
			name: "nobody may approve",
			use:  ToolUse{Ref: "crm/wire_transfer"}, reg: reg("crm/wire_transfer"),
			wantErr: ErrNoApprovers,
		},
		{
			name: "an unbound approver role",
			use:  ToolUse{Ref: "crm/refund", Approvers: []string{"treasury"}}, reg: reg("crm/refund"),
			wantErr: ErrUnboundApprover,
		},
		{
			name: "another tool's registration",
			use:  ToolUse{Ref: "crm/refund"}, reg: reg("crm/create_ticket"),
			wantErr: ErrToolMismatch,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveTool(tc.use, tc.reg, roles)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tc.want)
			if string(g) != string(w) {
				t.Errorf("got  %s\nwant %s", g, w)
			}
		})
	}
}

func TestMayApprove(t *testing.T) {
	t.Parallel()
	plain := ResolvedTool{Policy: PolicyApprovalRequired, Approvers: []string{"finance", "treasury"}}
	floored := ResolvedTool{Policy: PolicyApprovalRequired, Approvers: []string{"finance-leads"}, Floor: []string{"finance"}}
	for _, tc := range []struct {
		name   string
		r      ResolvedTool
		groups []string
		want   bool
	}{
		{"in the group", plain, []string{"finance"}, true},
		{"in the second group", plain, []string{"sales", "treasury"}, true},
		{"in no group", plain, []string{"sales"}, false},
		{"no groups at all", plain, nil, false},
		{"in the step's group and the floor", floored, []string{"finance", "finance-leads"}, true},
		{"in the step's group only", floored, []string{"finance-leads"}, false},
		{"in the floor only", floored, []string{"finance"}, false},
	} {
		if got := tc.r.MayApprove(tc.groups); got != tc.want {
			t.Errorf("%s: MayApprove(%q) = %v", tc.name, tc.groups, got)
		}
	}
}

func TestCheckCallArguments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want, issue string
	}{
		{in: "", want: "{}"},
		{in: "null", want: "{}"},
		{in: " {\n \"b\": 1.50, \"a\" : [ 2, 3e0 ] } ", want: `{"b":1.50,"a":[2,3e0]}`},
		{in: `{"s":"<&>\u00e9"}`, want: `{"s":"<&>\u00e9"}`},
		{in: "[1]", issue: "arguments: expected object"},
		{in: `"x"`, issue: "arguments: expected object"},
		{in: "{", issue: "arguments: unexpected end of JSON input"},
		{in: `{"a":1,"a":2}`, issue: "arguments: Duplicate key: \"a\""},
		{in: `{"a":1E400}`, issue: "arguments: Number out of range"},
		{in: `{"a":"` + strings.Repeat("x", MaxToolArgumentsBytes) + `"}`, issue: "arguments: over 65536 bytes"},
		// Integers a double holds exactly pass, beyond 2^53 too; the ones
		// it rounds would share a digest with their neighbours.
		{in: `{"a":9007199254740992,"b":-9007199254740992,"c":18014398509481984,"d":1e22,"e":0.1,"f":9007199254740993.5}`,
			want: `{"a":9007199254740992,"b":-9007199254740992,"c":18014398509481984,"d":1e22,"e":0.1,"f":9007199254740993.5}`},
		{in: `{"acct": 9007199254740993}`, issue: "arguments.acct: integer beyond 2^53 is not exact"},
		{in: `{"x":{"ids":[1,-9007199254740995]}}`, issue: "arguments.x.ids[1]: integer beyond 2^53 is not exact"},
		{in: `{"n":9007199254740993.0}`, issue: "arguments.n: integer beyond 2^53 is not exact"},
		{in: `{"n":90071992547409930e-1}`, issue: "arguments.n: integer beyond 2^53 is not exact"},
		{in: `{"n":123456789012345678901234567890}`, issue: "arguments.n: integer beyond 2^53 is not exact"},
		{in: `{"n":1e23}`, issue: "arguments.n: integer beyond 2^53 is not exact"},
		{in: `{"n":1` + strings.Repeat("0", 800) + `e-780}`, issue: "arguments.n: number of over 800 characters"},
	} {
		got, err := CheckCallArguments([]byte(tc.in))
		if tc.issue != "" {
			if err == nil || err.Code != CodeInvalid || len(err.Issues) != 1 || !strings.HasPrefix(err.Issues[0], tc.issue) {
				t.Errorf("CheckCallArguments(%.40q) = %s, %v; want invalid %q", tc.in, got, err, tc.issue)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("CheckCallArguments(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestCallDigest(t *testing.T) {
	t.Parallel()
	// The documented derivation, by hand: SHA-256 of the canonical JSON of
	// {tool, arguments}, members sorted.
	canonical := `{"arguments":{"amount":89,"currency":"EUR","customer":"alice@example.com"},"tool":"crm/refund"}`
	sum := sha256.Sum256([]byte(canonical))
	want := hex.EncodeToString(sum[:])
	for _, args := range []string{
		`{"customer":"alice@example.com","amount":89,"currency":"EUR"}`,
		`{"currency":"EUR","amount":89.0,"customer":"alice@example.com"}`,
		`{ "amount": 8.9e1, "currency": "EUR", "customer": "alice@example.com" }`,
	} {
		got, err := CallDigest("crm/refund", json.RawMessage(args))
		if err != nil || got != want {
			t.Errorf("CallDigest(%s) = %s, %v; want %s", args, got, err, want)
		}
	}
	for _, tc := range []struct{ tool, args string }{
		{"crm/refund", `{"customer":"alice@example.com","amount":890,"currency":"EUR"}`},
		{"crm/refund", `{"customer":"alice@example.com","amount":"89","currency":"EUR"}`},
		{"crm/create_ticket", `{"customer":"alice@example.com","amount":89,"currency":"EUR"}`},
	} {
		if got, _ := CallDigest(tc.tool, json.RawMessage(tc.args)); got == want {
			t.Errorf("CallDigest(%s, %s) equals the 89 EUR refund's", tc.tool, tc.args)
		}
	}
	empty, _ := CallDigest("crm/get_customer", nil)
	braces, _ := CallDigest("crm/get_customer", json.RawMessage("{}"))
	if empty != braces {
		t.Error("no arguments and {} differ")
	}
	if _, err := CallDigest("crm/refund", json.RawMessage(`{"a":1E400}`)); err == nil {
		t.Error("a number beyond a double has a digest")
	}
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	k := IdempotencyKey("o_default", "r_1", "resolve", "abc")
	sum := sha256.Sum256([]byte("baton-tools-1\x00o_default\x00r_1\x00resolve\x00abc\x00"))
	if want := "bt1-" + hex.EncodeToString(sum[:]); k != want {
		t.Fatalf("key = %s, want %s", k, want)
	}
	if k != IdempotencyKey("o_default", "r_1", "resolve", "abc") {
		t.Error("the key is not stable")
	}
	for _, other := range []string{
		IdempotencyKey("o_other", "r_1", "resolve", "abc"),
		IdempotencyKey("o_default", "r_2", "resolve", "abc"),
		IdempotencyKey("o_default", "r_1", "review", "abc"),
		IdempotencyKey("o_default", "r_1", "resolve", "abd"),
		// The separators keep parts from running into each other.
		IdempotencyKey("o_default", "r_1r", "esolve", "abc"),
	} {
		if other == k {
			t.Errorf("%s collides", other)
		}
	}
}

func TestCallStates(t *testing.T) {
	t.Parallel()
	final := map[CallState]bool{CallCompleted: true, CallFailed: true, CallRejected: true}
	for _, s := range []CallState{CallProposed, CallApproved, CallRejected, CallStarted, CallCompleted, CallFailed, CallUnknown} {
		if s.Final() != final[s] {
			t.Errorf("%s.Final() = %v", s, s.Final())
		}
		if s.String() != strings.ToLower(s.String()) || s.String() == "" {
			t.Errorf("state word %q", s)
		}
	}
}

// The journal entry's wire shape: every field of profile-tools §5.3
// present, null where it has no value yet.
func TestJournalEntryShape(t *testing.T) {
	t.Parallel()
	e := JournalEntry{Tool: "crm/refund", Arguments: json.RawMessage(`{"amount":89}`), Digest: "d", Policy: PolicyApprovalRequired,
		Idempotency: IdempotencyByKey, State: CallProposed, Agent: "a_1", Attempt: 1, At: "2026-10-06T09:04:12Z", IdempotencyKey: "bt1-x"}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tool":"crm/refund","arguments":{"amount":89},"digest":"d","policy":"approval_required","idempotency":"key","state":"proposed",` +
		`"agent":"a_1","attempt":1,"at":"2026-10-06T09:04:12Z","workItemId":null,"decision":null,"idempotencyKey":"bt1-x",` +
		`"startedAt":null,"endedAt":null,"result":null,"resolution":null}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	ext := ToolsExtension{Call: NewCallTemplate("tok"), Tools: []ExtensionTool{{Name: "crm/refund", Policy: PolicyApprovalRequired}},
		Journal: []JournalEntry{}, Limits: DefaultToolLimits()}
	b, _ = json.Marshal(ext)
	want = `{"call":{"tool":"call_tool","arguments":{"token":"tok","tool":"\u003cserver/tool\u003e","arguments":{},"requestId":"\u003cnew UUID\u003e"}},` +
		`"tools":[{"name":"crm/refund","policy":"approval_required","description":null,"inputSchema":null}],"journal":[],` +
		`"limits":{"argumentsBytes":65536,"resultBytes":262144,"callsPerStep":100}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestCallResults(t *testing.T) {
	t.Parallel()
	if got := string(RejectedResult("Over the limit for this customer.")); got !=
		`{"content":[{"text":"Rejected: a person did not approve this call. Reason: Over the limit for this customer.","type":"text"}],"isError":true}` {
		t.Errorf("RejectedResult = %s", got)
	}
	if got := string(TestRunResult("crm/refund")); got !=
		`{"content":[{"text":"Test run: crm/refund was not sent (crm has no test_url).","type":"text"}],"isError":false}` {
		t.Errorf("TestRunResult = %s", got)
	}
	err := ErrDivergentCall("crm/refund", "9f86", 1, "51c2")
	if err.Code != CodeConflict || !slices.Equal(err.Issues, []string{IssueDivergentCall}) ||
		!strings.Contains(err.Message, "crm/refund was approved for digest 9f86 (the call proposed in attempt 1); this call's digest is 51c2.") {
		t.Errorf("ErrDivergentCall = %+v", err)
	}
}

func TestCallTexts(t *testing.T) {
	t.Parallel()
	c := CallText{Tool: "crm/refund", Arguments: json.RawMessage(`{"customer":"alice@example.com","amount":89.50,"currency":"EUR"}`),
		StepID: "resolve", Process: "refund", Version: 3, RunID: "r_8f2", Agent: "a_refunds", Attempt: 2, Digest: "9f86d0"}
	want := `An agent asks to call crm/refund. Approve only if this exact call should run; it runs once, exactly as shown.

Tool: crm/refund
Arguments:
{
  "customer": "alice@example.com",
  "amount": 89.50,
  "currency": "EUR"
}
Step: resolve (process refund, version 3, run r_8f2)
Agent: a_refunds, attempt 2
Digest: 9f86d0

Approve to let the agent run it. Reject with a note to refuse it; the agent reads your note.`
	if got := ApprovalText(c); got != want {
		t.Errorf("ApprovalText:\n%s\nwant:\n%s", got, want)
	}
	c.Test = true
	if got := ApprovalText(c); !strings.HasPrefix(got, "This is a test run. An agent asks") {
		t.Errorf("test-run ApprovalText starts %.40q", got)
	}
	c.Test, c.SentAt, c.Why = false, "2026-10-06T10:00:00Z", "the worker stopped while the call was in flight"
	got := UnknownOutcomeText(c)
	for _, part := range []string{
		"Baton sent this call to crm/refund and does not know whether it happened (the worker stopped while the call was in flight).",
		`"amount": 89.50`, "Agent: a_refunds, attempt 2", "Digest: 9f86d0", "Sent: 2026-10-06T10:00:00Z",
		"fail it with a note if it did not",
	} {
		if !strings.Contains(got, part) {
			t.Errorf("UnknownOutcomeText lacks %q:\n%s", part, got)
		}
	}
	if f := UnknownOutcomeOutput(); len(f) != 1 || f[0].Name != "result" || f[0].Type != TypeString || f[0].Optional {
		t.Errorf("UnknownOutcomeOutput = %+v", f)
	}
}

func TestEffectivePolicy(t *testing.T) {
	for _, tc := range []struct {
		name string
		use  ToolUse
		reg  Policy
		want Policy
	}{
		{"the registration's", ToolUse{}, PolicyRead, PolicyRead},
		{"the step tightens", ToolUse{Policy: PolicyWrite}, PolicyRead, PolicyWrite},
		{"the step cannot loosen", ToolUse{Policy: PolicyRead}, PolicyWrite, PolicyWrite},
		{"approvers want approval", ToolUse{Approvers: []string{"finance"}}, PolicyRead, PolicyApprovalRequired},
		{"not registered", ToolUse{Policy: PolicyWrite}, "", PolicyWrite},
		{"not registered, no policy", ToolUse{}, "", ""},
	} {
		if got := tc.use.EffectivePolicy(tc.reg); got != tc.want {
			t.Errorf("%s: EffectivePolicy(%q) = %q, want %q", tc.name, tc.reg, got, tc.want)
		}
	}
}
