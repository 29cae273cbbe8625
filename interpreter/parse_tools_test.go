package interpreter

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// testCatalog is a registration with two servers: crm's three tools of the
// refund story plus one that needs approval and names no approvers, and
// erp's one.
func testCatalog() *ToolCatalog {
	return &ToolCatalog{Tools: []CatalogTool{
		{Server: "crm", Tool: "get_customer", Policy: PolicyRead, Idempotency: IdempotencyNone},
		{Server: "crm", Tool: "create_ticket", Policy: PolicyWrite, Idempotency: IdempotencyByKey},
		{Server: "crm", Tool: "refund", Policy: PolicyApprovalRequired, Idempotency: IdempotencyByKey,
			Approvers: []string{"finance"}, ApprovalSLA: 4 * time.Hour},
		{Server: "crm", Tool: "wire_transfer", Policy: PolicyApprovalRequired, Idempotency: IdempotencyNone},
		{Server: "erp", Tool: "post_invoice", Policy: PolicyWrite, Idempotency: IdempotencyNone},
	}}
}

// withTools offers the default, check-1 and baton-tools-1 with cat.
func withTools(cat *ToolCatalog) *Offer {
	o := withCheck()
	o.Profiles = append(o.Profiles, ProfileTools)
	o.ToolCatalog = cat
	return o
}

// toolsFront is a process whose first step carries the given tools lines
// (indented under "    tools:", which is line 7 of the file). Line 8 is
// the first entry.
func toolsFront(lines ...string) string {
	return "name: demo\ndescription: A demo.\nsteps:\n  - id: work\n    agent: Do it.\n    tools:\n" +
		strings.Join(lines, "\n") + "\n  - id: done\n    finish: ok\n"
}

func TestValidateTools(t *testing.T) {
	t.Parallel()
	cat := testCatalog()
	runValidateCases(t, []validateCase{
		{
			name:  "the refund story is accepted",
			front: toolsFront("      - crm/get_customer", "      - crm/create_ticket", "      - { ref: crm/refund, approvers: [finance-leads] }"),
			offer: withTools(cat),
		},
		{
			name:  "tightening is accepted",
			front: toolsFront("      - { ref: crm/get_customer, policy: write }", "      - { ref: crm/create_ticket, policy: approval_required, approvers: [ops-leads] }", "      - { ref: crm/refund, policy: approval_required }"),
			offer: withTools(cat),
		},
		{
			name:  "the same policy is not a loosening",
			front: toolsFront("      - { ref: crm/create_ticket, policy: write }"),
			offer: withTools(cat),
		},
		{
			name:  "without the profile",
			front: toolsFront("      - crm/get_customer"),
			offer: withCheck(),
			want:  []string{"7:5: steps[0].tools: needs the baton-tools-1 profile, which this server does not offer (it needs a tool registration, --tools)"},
		},
		{
			name:  "the profile with nothing registered",
			front: toolsFront("      - crm/get_customer"),
			offer: withTools(nil),
			want:  []string{`8:9: steps[0].tools[0]: unknown tool server "crm" (no tool servers are registered)`},
		},
		{
			name:  "unknown server",
			front: toolsFront("      - crn/get_customer"),
			offer: withTools(cat),
			want:  []string{`8:9: steps[0].tools[0]: unknown tool server "crn" (registered: crm, erp)`},
		},
		{
			name:  "unknown tool",
			front: toolsFront("      - crm/get_customer", "      - { ref: crm/refnd }"),
			offer: withTools(cat),
			want:  []string{`9:16: steps[0].tools[1]: server crm has no registered tool "refnd" (its tools: create_ticket, get_customer, refund, wire_transfer)`},
		},
		{
			name:  "loosening",
			front: toolsFront("      - { ref: crm/create_ticket, policy: read }", "      - ref: crm/refund", "        policy: write"),
			offer: withTools(cat),
			want: []string{
				"8:43: steps[0].tools[0].policy: read would loosen crm/create_ticket, registered as write; a step may only tighten a policy (read < write < approval_required)",
				"10:17: steps[0].tools[1].policy: write would loosen crm/refund, registered as approval_required; a step may only tighten a policy (read < write < approval_required)",
			},
		},
		{
			name:  "approval with no approvers on either side",
			front: toolsFront("      - crm/wire_transfer", "      - { ref: crm/get_customer, policy: approval_required }"),
			offer: withTools(cat),
			want: []string{
				"8:9: steps[0].tools[0]: crm/wire_transfer needs approval and no one may give it: name approvers here or in the tool registration",
				"9:9: steps[0].tools[1]: crm/get_customer needs approval and no one may give it: name approvers here or in the tool registration",
			},
		},
		{
			name:  "approvers on the step are enough",
			front: toolsFront("      - { ref: crm/wire_transfer, approvers: [treasury] }"),
			offer: withTools(cat),
		},
		{
			name:  "approvers make a read tool need approval",
			front: toolsFront("      - { ref: crm/get_customer, approvers: [privacy] }"),
			offer: withTools(cat),
		},
		{
			name:  "approvers beside a looser policy",
			front: toolsFront("      - { ref: crm/create_ticket, policy: write, approvers: [ops] }"),
			offer: withTools(cat),
			want:  []string{"8:43: steps[0].tools[0].policy: write cannot stand beside approvers; a step that names approvers makes the tool approval_required"},
		},
		{
			name: "approvers must be role names",
			front: toolsFront("      - ref: crm/refund", "        approvers: [initiator, inputs.boss, ' ', finance-leads, finance-leads]",
				"      - { ref: crm/wire_transfer, approvers: [] }"),
			offer: withTools(cat),
			want: []string{
				"9:21: steps[0].tools[0].approvers[0]: approvers are role names; the person who started the run does not approve its tool calls",
				"9:32: steps[0].tools[0].approvers[1]: approvers are role names, not run-data paths (a role name has no dot)",
				"9:45: steps[0].tools[0].approvers[2]: must not be blank",
				"9:65: steps[0].tools[0].approvers[4]: \"finance-leads\" is listed twice",
				"10:46: steps[0].tools[1].approvers: at least one role",
			},
		},
		{
			name:  "references",
			front: toolsFront("      - crm.refund", "      - crm/", "      - /refund", "      - crm/a/b", "      - crm/get_customer", "      - { ref: crm/get_customer }"),
			offer: withTools(cat),
			want: []string{
				`8:9: steps[0].tools[0]: "crm.refund" is not a tool reference server/tool`,
				`9:9: steps[0].tools[1]: "crm/" is not a tool reference server/tool`,
				`10:9: steps[0].tools[2]: "/refund" is not a tool reference server/tool`,
				`11:9: steps[0].tools[3]: "crm/a/b" is not a tool reference server/tool`,
				`13:16: steps[0].tools[5]: crm/get_customer is listed twice`,
			},
		},
		{
			name:  "shapes",
			front: toolsFront("      - 12", "      - { ref: crm/refund, policy: sometimes, extra: 1 }", "      - { policy: read }", "      - ''"),
			offer: withTools(cat),
			want: []string{
				"8:9: steps[0].tools[0]: expected a tool reference server/tool or { ref, policy, approvers }, found a number",
				`9:36: steps[0].tools[1].policy: unknown policy "sometimes" (read, write or approval_required)`,
				"9:47: steps[0].tools[1].extra: unknown field",
				"10:9: steps[0].tools[2].ref: required",
				"11:9: steps[0].tools[3]: must not be blank",
			},
		},
		{
			name:  "an empty list and a string",
			front: "name: demo\ndescription: A demo.\nsteps:\n  - id: a\n    agent: A.\n    tools: []\n  - id: b\n    agent: B.\n    tools: crm/refund\n  - id: done\n    finish: ok\n",
			offer: withTools(cat),
			want: []string{
				"7:12: steps[0].tools: at least one tool",
				"10:12: steps[1].tools: expected a list, found a string",
			},
		},
		{
			name: "tools only on agent steps",
			front: "name: demo\ndescription: A demo.\nsteps:\n  - id: t\n    task: T.\n    person: clerk\n    tools: [crm/get_customer]\n" +
				"  - id: a\n    approve: A.\n    person: boss\n    tools: [crm/get_customer]\n  - id: done\n    finish: ok\n",
			offer: withTools(cat),
			want: []string{
				"8:5: steps[0].tools: not allowed on a task step (only on agent steps)",
				"12:5: steps[1].tools: not allowed on an approve step (only on agent steps)",
			},
		},
	})
}

func TestParseToolsModel(t *testing.T) {
	t.Parallel()
	src := processDoc(`name: refund
description: Refund a customer.
steps:
  - id: resolve
    agent: Resolve it.
    tools:
      - crm/get_customer
      - { ref: crm/create_ticket, policy: approval_required, approvers: [ops-leads] }
      - { ref: crm/refund, approvers: [finance-leads, cfo] }
    next: review
  - id: review
    person: finance-leads
    approve: Check it.
  - id: done
    finish: ok
`)
	p, err := Parse([]byte(src), &ParseOptions{Offer: withTools(testCatalog())})
	if err != nil {
		t.Fatal(err)
	}
	got := p.Step("resolve").Tools
	want := []ToolUse{
		{Ref: "crm/get_customer", Short: true},
		{Ref: "crm/create_ticket", Policy: PolicyApprovalRequired, Approvers: []string{"ops-leads"}},
		{Ref: "crm/refund", Approvers: []string{"finance-leads", "cfo"}},
	}
	if len(got) != len(want) {
		t.Fatalf("tools = %+v", got)
	}
	for i := range want {
		if got[i].Ref != want[i].Ref || got[i].Policy != want[i].Policy || got[i].Short != want[i].Short || !slices.Equal(got[i].Approvers, want[i].Approvers) {
			t.Errorf("tools[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if u := p.Step("resolve").ToolUse("crm/refund"); u == nil || u.Approvers[1] != "cfo" {
		t.Errorf("ToolUse(crm/refund) = %+v", u)
	}
	if u := p.Step("resolve").ToolUse("crm/delete_customer"); u != nil {
		t.Errorf("ToolUse of a tool not listed = %+v, want nil", u)
	}
	// Person and approver roles together, once each, in order of
	// appearance: the approval's finance-leads is already an approver.
	if roles := p.Roles(); !slices.Equal(roles, []string{"ops-leads", "finance-leads", "cfo"}) {
		t.Errorf("Roles() = %q", roles)
	}
	if !p.UsesTools() {
		t.Error("UsesTools() = false")
	}
	if !strings.Contains(string(p.Frontmatter), `"tools":["crm/get_customer",{"approvers":["ops-leads"],"policy":"approval_required","ref":"crm/create_ticket"}`) {
		t.Errorf("canonical frontmatter lacks the tools key: %s", p.Frontmatter)
	}
}

// The content hash covers tools: like every frontmatter key: changing a
// policy or an approver changes the hash.
func TestToolsInContentHash(t *testing.T) {
	t.Parallel()
	offer := withTools(testCatalog())
	hash := func(entry string) string {
		t.Helper()
		p, err := Parse([]byte(processDoc(toolsFront(entry))), &ParseOptions{Offer: offer})
		if err != nil {
			t.Fatal(err)
		}
		return p.Hash
	}
	base := hash("      - { ref: crm/refund, approvers: [finance-leads] }")
	for _, other := range []string{
		"      - { ref: crm/refund, approvers: [finance] }",
		"      - { ref: crm/refund }",
		"      - crm/refund",
		"      - { ref: crm/create_ticket, approvers: [finance-leads] }",
	} {
		if hash(other) == base {
			t.Errorf("%q hashes like the base", other)
		}
	}
	if again := hash("      - {approvers: [finance-leads], ref: crm/refund}"); again != base {
		t.Errorf("key order changed the hash")
	}
}

func TestRolesWithoutTools(t *testing.T) {
	t.Parallel()
	p, err := Parse([]byte(processDoc("name: demo\ndescription: A demo.\n"+okSteps)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if roles := p.Roles(); !slices.Equal(roles, []string{"boss"}) {
		t.Errorf("Roles() = %q", roles)
	}
	if p.UsesTools() {
		t.Error("UsesTools() = true for a process without tools")
	}
}
