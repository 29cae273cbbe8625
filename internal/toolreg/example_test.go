package toolreg_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/baton-run/baton/internal/toolreg"
	"github.com/baton-run/baton/interpreter"
)

func ExampleParse() {
	f, err := toolreg.Parse([]byte(`servers:
  - name: crm
    url: https://crm.example/mcp
    credentials: { env: CRM_TOKEN }
    tools:
      get_customer: read
      refund: { policy: approval_required, idempotency: key, approvers: [finance], approval_sla: 4h }
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range f.Catalog().Tools {
		fmt.Println(t.Ref(), t.Policy, t.Idempotency, t.Approvers, t.ApprovalSLA)
	}
	_, err = toolreg.Parse([]byte("servers:\n  - name: crm\n    url: https://crm.example/mcp\n    tools: { refund: write }\n"), &toolreg.ParseOptions{Name: "tools.yaml"})
	fmt.Println(err)
	// Output:
	// crm/get_customer read none [] 0s
	// crm/refund approval_required key [finance] 4h0m0s
	// tool registration refused: tools.yaml:4:22: servers[0].tools.refund: a write tool needs idempotency: key or none; write { policy: write, idempotency: key }
}

// The example registration and process under examples/ are valid
// together, and the process's approver role is one to bind.
func TestExamples(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "examples")
	f, err := toolreg.ReadFile(filepath.Join(root, "tools.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crm := f.Server("crm")
	if crm == nil || crm.URL != "http://127.0.0.1:8091/mcp" || crm.Credentials == nil || crm.Credentials.Env != "CRM_TOKEN" {
		t.Fatalf("crm = %+v", crm)
	}
	src, err := os.ReadFile(filepath.Join(root, "refund", "PROCESS.md"))
	if err != nil {
		t.Fatal(err)
	}
	offer := interpreter.DefaultOffer()
	offer.Profiles = append(offer.Profiles, interpreter.ProfileTools)
	offer.ToolCatalog = f.Catalog()
	p, err := interpreter.Parse(src, &interpreter.ParseOptions{Folder: "refund", Offer: &offer})
	if err != nil {
		t.Fatal(err)
	}
	if roles := p.Roles(); !slices.Equal(roles, []string{"finance-leads", "support-lead"}) {
		t.Errorf("roles = %q", roles)
	}
	reg, _ := offer.ToolCatalog.Lookup("crm/refund")
	r, err := interpreter.ResolveTool(*p.Step("resolve").ToolUse("crm/refund"), reg, map[string]string{"finance-leads": "finance-leads"})
	if err != nil || r.Policy != interpreter.PolicyApprovalRequired || !slices.Equal(r.Approvers, []string{"finance-leads"}) || !slices.Equal(r.Floor, []string{"finance"}) {
		t.Errorf("crm/refund resolves to %+v, %v", r, err)
	}
}
