package gateway_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/internal/toolreg"
	"github.com/baton-run/baton/interpreter"
)

const registration = `servers:
  - name: crm
    url: http://127.0.0.1:8090/mcp
    tools:
      get_customer: read
      create_ticket: { policy: write, idempotency: key }
      refund: { policy: approval_required, idempotency: key, approvers: [finance], approval_sla: 4h }
`

const refundProcess = `---
name: refund
description: Refund a customer once finance approves the exact refund.
inputs:
  customer: string
steps:
  - id: resolve
    agent: Look up the customer, open a ticket, refund.
    tools:
      - crm/get_customer
      - crm/create_ticket
      - { ref: crm/refund, approvers: [finance-leads] }
  - id: review
    person: support-lead
    approve: Check the ticket.
  - id: done
    finish: refunded
---
# Refund
`

func toolsOffer() interpreter.Offer {
	o := interpreter.DefaultOffer()
	o.Profiles = append(o.Profiles, interpreter.ProfileTools)
	return o
}

// registryWith returns a registry over a fresh database holding the given
// tool registration.
func registryWith(t *testing.T, reg string, offer interpreter.Offer) (*gateway.Registry, *store.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if reg != "" {
		f, err := toolreg.Parse([]byte(reg), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.PutToolServers(ctx, nil, "o_test", f.Servers); err != nil {
			t.Fatal(err)
		}
	}
	return gateway.NewRegistry(st, "o_test", offer), st
}

// Publication with tools: approver roles are bound like person roles, and
// the stored registration is what the tools are checked against.
func TestRegistryTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, st := registryWith(t, registration, toolsOffer())
	d, err := r.Import(ctx, []byte(refundProcess), "refund", "u_ops")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Roles, []string{"finance-leads", "support-lead"}) {
		t.Errorf("roles to bind = %q", d.Roles)
	}
	if _, err := r.Publish(ctx, "refund", "u_ops", false); !errors.Is(err, gateway.ErrUnboundRoles) || !strings.Contains(err.Error(), "finance-leads") {
		t.Fatalf("publish with the approver role unbound: %v", err)
	}
	if err := r.Bind(ctx, "refund", map[string]string{"finance-leads": "g_finance_leads", "support-lead": "g_support"}); err != nil {
		t.Fatal(err)
	}
	pv, err := r.Publish(ctx, "refund", "u_ops", false)
	if err != nil {
		t.Fatal(err)
	}
	if pv.Version != 1 || pv.Roles["finance-leads"] != "g_finance_leads" {
		t.Errorf("published %+v", pv)
	}

	// A step naming a tool the registration lacks is refused at import,
	// at its line and column.
	bad := strings.Replace(refundProcess, "crm/create_ticket", "crm/close_account", 1)
	_, err = r.Import(ctx, []byte(bad), "refund", "u_ops")
	var pe *interpreter.ProcessError
	if !errors.As(err, &pe) || len(pe.Issues) != 1 || pe.Issues[0].String() !=
		`11:9: steps[0].tools[1]: server crm has no registered tool "close_account" (its tools: create_ticket, get_customer, refund)` {
		t.Fatalf("import naming an unregistered tool: %v", err)
	}

	// The registration changes between import and publication: the draft
	// is checked again against it as it stands.
	if _, err := r.Import(ctx, []byte(strings.Replace(refundProcess, "# Refund", "# Refund v2", 1)), "refund", "u_ops"); err != nil {
		t.Fatal(err)
	}
	f, err := toolreg.Parse([]byte(strings.Replace(registration, "      create_ticket: { policy: write, idempotency: key }\n", "", 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutToolServers(ctx, nil, "o_test", f.Servers); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Publish(ctx, "refund", "u_ops", true); !errors.As(err, &pe) || !strings.Contains(err.Error(), `server crm has no registered tool "create_ticket"`) {
		t.Fatalf("publish after the tool was unregistered: %v", err)
	}
}

// A server without baton-tools-1 refuses tools: at publication.
func TestRegistryWithoutToolsProfile(t *testing.T) {
	t.Parallel()
	r, _ := registryWith(t, registration, interpreter.DefaultOffer())
	_, err := r.Import(context.Background(), []byte(refundProcess), "refund", "u_ops")
	if err == nil || !strings.Contains(err.Error(), "9:5: steps[0].tools: needs the baton-tools-1 profile, which this server does not offer") {
		t.Fatalf("import without the profile: %v", err)
	}
}

// With the profile and nothing registered, every tool is unknown.
func TestRegistryToolsNothingRegistered(t *testing.T) {
	t.Parallel()
	r, _ := registryWith(t, "", toolsOffer())
	_, err := r.Import(context.Background(), []byte(refundProcess), "refund", "u_ops")
	if err == nil || !strings.Contains(err.Error(), `10:9: steps[0].tools[0]: unknown tool server "crm" (no tool servers are registered)`) {
		t.Fatalf("import with nothing registered: %v", err)
	}
}
