package downstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/baton-run/baton/activities/downstream"
	"github.com/baton-run/baton/internal/toolreg"
)

func TestListTools(t *testing.T) {
	t.Parallel()
	crm, c, ep := setup(t, nil)
	tools, err := c.ListTools(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		if tl.Description == "" || !json.Valid(tl.InputSchema) {
			t.Errorf("%s: description %q, schema %s", tl.Name, tl.Description, tl.InputSchema)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"create_ticket", "get_customer", "refund"}) {
		t.Fatalf("tools = %q", names)
	}
	i := slices.IndexFunc(tools, func(tl toolreg.ListedTool) bool { return tl.Name == "refund" })
	var schema struct {
		Type       string
		Properties map[string]struct{ Type string }
		Required   []string
	}
	if err := json.Unmarshal(tools[i].InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || schema.Properties["amount"].Type != "number" || !slices.Contains(schema.Required, "currency") {
		t.Errorf("refund schema = %s", tools[i].InputSchema)
	}

	// As the registration's lister.
	listed, err := c.Lister()(context.Background(), toolreg.Server{Name: "crm", URL: crm.URL(), Timeout: time.Second,
		Credentials: &toolreg.Credentials{Env: "CRM_TOKEN", Header: "Authorization", Scheme: "Bearer"}})
	if err != nil || len(listed) != 3 {
		t.Fatalf("Lister = %+v, %v", listed, err)
	}

	if err := crm.SetDown(true); err != nil {
		t.Fatal(err)
	}
	_, err = c.ListTools(context.Background(), ep)
	var ce *downstream.CallError
	if !errors.As(err, &ce) || ce.Kind != downstream.NotSent {
		t.Fatalf("listing a server that is down: %#v", err)
	}
}
