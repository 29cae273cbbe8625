package downstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
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
	i := slices.IndexFunc(tools, func(tl downstream.Tool) bool { return tl.Name == "refund" })
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

func TestCheckArguments(t *testing.T) {
	t.Parallel()
	_, c, ep := setup(t, nil)
	tools, err := c.ListTools(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	var refund json.RawMessage
	for _, tl := range tools {
		if tl.Name == "refund" {
			refund = tl.InputSchema
		}
	}
	for _, tc := range []struct {
		args, issue string
	}{
		{args: `{"customer":"alice@example.com","amount":89,"currency":"EUR"}`},
		{args: `{"customer":"alice@example.com","amount":89.5,"currency":"EUR","reason":"broken"}`},
		{args: `{"customer":"alice@example.com","amount":"89","currency":"EUR"}`, issue: "amount"},
		{args: `{"customer":"alice@example.com","amount":89}`, issue: "currency"},
		{args: `{"customer":"alice@example.com","amount":89,"currency":"EUR","tip":1}`, issue: "tip"},
		{args: `{`, issue: "unexpected end of JSON input"},
	} {
		got := downstream.CheckArguments(refund, json.RawMessage(tc.args))
		switch {
		case tc.issue == "" && got != nil:
			t.Errorf("%s: issues %q", tc.args, got)
		case tc.issue != "" && (len(got) != 1 || !strings.HasPrefix(got[0], "arguments: ") || !strings.Contains(got[0], tc.issue)):
			t.Errorf("%s: issues %q, want one naming %q", tc.args, got, tc.issue)
		}
	}
	// No schema, or one Baton cannot use, checks nothing.
	for _, schema := range []string{"", "null", `{"$ref":"https://elsewhere.example/schema.json"}`, `not json`} {
		if got := downstream.CheckArguments(json.RawMessage(schema), json.RawMessage(`{"anything":1}`)); got != nil {
			t.Errorf("schema %q: issues %q", schema, got)
		}
	}
}
