package store_test

import (
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/toolreg"
	"github.com/baton-run/baton/interpreter"
)

func crmServer() toolreg.Server {
	return toolreg.Server{
		Name: "crm", URL: "http://127.0.0.1:8090/mcp", TestURL: "http://127.0.0.1:8091/mcp",
		Credentials: &toolreg.Credentials{Env: "CRM_TOKEN", Header: "Authorization", Scheme: "Bearer"},
		Timeout:     30 * time.Second,
		Tools: []toolreg.Tool{
			{Name: "get_customer", Policy: interpreter.PolicyRead, Idempotency: interpreter.IdempotencyNone},
			{Name: "create_ticket", Policy: interpreter.PolicyWrite, Idempotency: interpreter.IdempotencyByKey},
			{Name: "refund", Policy: interpreter.PolicyApprovalRequired, Idempotency: interpreter.IdempotencyByKey, Approvers: []string{"finance", "treasury"}, ApprovalSLA: 4 * time.Hour},
		},
	}
}

func TestToolServers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if list, err := b.store.ToolServers(b.ctx, org); err != nil || len(list) != 0 {
		t.Fatalf("empty registration = %+v, %v", list, err)
	}
	erp := toolreg.Server{Name: "erp", URL: "https://erp.example/mcp", Timeout: 5 * time.Second,
		Tools: []toolreg.Tool{{Name: "post_invoice", Policy: interpreter.PolicyWrite, Idempotency: interpreter.IdempotencyNone}}}
	if err := b.store.PutToolServers(b.ctx, nil, org, []toolreg.Server{crmServer(), erp}); err != nil {
		t.Fatal(err)
	}
	list, err := b.store.ToolServers(b.ctx, org)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "crm" || list[1].Name != "erp" {
		t.Fatalf("servers = %+v", list)
	}
	crm := list[0]
	want := crmServer()
	if crm.URL != want.URL || crm.TestURL != want.TestURL || *crm.Credentials != *want.Credentials || crm.Timeout != want.Timeout {
		t.Errorf("crm = %+v", crm)
	}
	if len(crm.Tools) != 3 {
		t.Fatalf("crm tools = %+v", crm.Tools)
	}
	for i, tp := range want.Tools {
		got := crm.Tools[i]
		if got.Name != tp.Name || got.Policy != tp.Policy || got.Idempotency != tp.Idempotency || !slices.Equal(got.Approvers, tp.Approvers) || got.ApprovalSLA != tp.ApprovalSLA {
			t.Errorf("crm tool %d = %+v, want %+v", i, got, tp)
		}
	}
	if crm.Listing != nil || !crm.ListedAt.IsZero() {
		t.Errorf("never listed, yet listing = %+v at %v", crm.Listing, crm.ListedAt)
	}
	if list[1].Credentials != nil || list[1].TestURL != "" {
		t.Errorf("erp = %+v", list[1])
	}
	if p := crm.Tool("refund"); p == nil || p.Policy != interpreter.PolicyApprovalRequired {
		t.Errorf("Tool(refund) = %+v", p)
	}

	got, err := b.store.GetToolServer(b.ctx, org, "erp")
	if err != nil || len(got.Tools) != 1 || got.Tools[0].Name != "post_invoice" || got.Timeout != 5*time.Second {
		t.Errorf("GetToolServer(erp) = %+v, %v", got, err)
	}
	if _, err := b.store.GetToolServer(b.ctx, org, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetToolServer(nope) err = %v", err)
	}
	if _, err := b.store.GetToolServer(b.ctx, "o_other", "crm"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another organization sees crm: %v", err)
	}
}

func TestToolListing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := b.store.PutToolServers(b.ctx, nil, org, []toolreg.Server{crmServer()}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
	listing := []toolreg.ListedTool{{Name: "refund", Description: "Refund a customer.", InputSchema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}}}`)}}
	if err := b.store.SetToolListing(b.ctx, nil, org, "crm", "http://elsewhere/mcp", listing, at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a listing from another url was stored: %v", err)
	}
	if err := b.store.SetToolListing(b.ctx, nil, org, "crm", crmServer().URL, listing, at); err != nil {
		t.Fatal(err)
	}
	crm, err := b.store.GetToolServer(b.ctx, org, "crm")
	if err != nil {
		t.Fatal(err)
	}
	l := crm.Listed("refund")
	if l == nil || l.Description != "Refund a customer." || !crm.ListedAt.Equal(at) {
		t.Fatalf("listing = %+v at %v", crm.Listing, crm.ListedAt)
	}
	var schema map[string]any
	if err := json.Unmarshal(l.InputSchema, &schema); err != nil || schema["type"] != "object" {
		t.Errorf("input schema = %s", l.InputSchema)
	}
	if crm.Listed("nope") != nil {
		t.Error("Listed(nope) found something")
	}

	// Loading the same server again keeps its listing; a new url drops it.
	same := crmServer()
	same.Tools = same.Tools[:1]
	if err := b.store.PutToolServers(b.ctx, nil, org, []toolreg.Server{same}); err != nil {
		t.Fatal(err)
	}
	crm, _ = b.store.GetToolServer(b.ctx, org, "crm")
	if crm.Listing == nil || len(crm.Tools) != 1 {
		t.Errorf("reload with the same url: listing %+v, tools %+v", crm.Listing, crm.Tools)
	}
	moved := crmServer()
	moved.URL = "https://crm.example/mcp"
	if err := b.store.PutToolServers(b.ctx, nil, org, []toolreg.Server{moved}); err != nil {
		t.Fatal(err)
	}
	crm, _ = b.store.GetToolServer(b.ctx, org, "crm")
	if crm.Listing != nil || !crm.ListedAt.IsZero() || crm.URL != moved.URL {
		t.Errorf("reload with a new url kept the old listing: %+v", crm)
	}
}

// A load replaces the registration: a server or tool no longer in it is
// gone, and a refused load changes nothing.
func TestPutToolServersReplaces(t *testing.T) {
	t.Parallel()
	b := setup(t)
	erp := toolreg.Server{Name: "erp", URL: "https://erp.example/mcp", Timeout: time.Second,
		Tools: []toolreg.Tool{{Name: "post_invoice", Policy: interpreter.PolicyWrite, Idempotency: interpreter.IdempotencyNone}}}
	if err := b.store.PutToolServers(b.ctx, nil, org, []toolreg.Server{crmServer(), erp}); err != nil {
		t.Fatal(err)
	}
	if err := b.store.PutToolServers(b.ctx, nil, "o_other", []toolreg.Server{erp}); err != nil {
		t.Fatal(err)
	}
	if err := b.store.PutToolServers(b.ctx, nil, org, []toolreg.Server{erp}); err != nil {
		t.Fatal(err)
	}
	list, _ := b.store.ToolServers(b.ctx, org)
	if len(list) != 1 || list[0].Name != "erp" {
		t.Fatalf("after replacing: %+v", list)
	}
	if other, _ := b.store.ToolServers(b.ctx, "o_other"); len(other) != 1 {
		t.Errorf("another organization's registration changed: %+v", other)
	}

	bad := crmServer()
	bad.Tools = append(bad.Tools, toolreg.Tool{Name: "x", Policy: "sometimes", Idempotency: interpreter.IdempotencyNone})
	if err := b.store.PutToolServers(b.ctx, nil, org, []toolreg.Server{bad}); err == nil {
		t.Fatal("an unknown policy was stored")
	}
	loose := crmServer()
	loose.Tools[1].Approvers = []string{"finance"}
	if err := b.store.PutToolServers(b.ctx, nil, org, []toolreg.Server{loose}); err == nil {
		t.Fatal("approvers on a write tool were stored")
	}
	if err := b.store.PutToolServers(b.ctx, nil, org, []toolreg.Server{{Name: "x"}}); err == nil {
		t.Fatal("a server without url was stored")
	}
	list, _ = b.store.ToolServers(b.ctx, org)
	if len(list) != 1 || list[0].Name != "erp" || len(list[0].Tools) != 1 {
		t.Fatalf("a refused load changed the registration: %+v", list)
	}
	if err := b.store.PutToolServers(b.ctx, nil, org, nil); err != nil {
		t.Fatal(err)
	}
	if list, _ = b.store.ToolServers(b.ctx, org); len(list) != 0 {
		t.Errorf("an empty registration left %+v", list)
	}
}

// A gateway and a worker starting together load the same file: both
// succeed and the registration is whole.
func TestPutToolServersConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- b.store.PutToolServers(b.ctx, nil, org, []toolreg.Server{crmServer()})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, _ := b.store.ToolServers(b.ctx, org)
	if len(list) != 1 || len(list[0].Tools) != 3 {
		t.Fatalf("after concurrent loads: %+v", list)
	}
}
