package downstream_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/activities/downstream"
)

// Options.Observe sees every call with its server, tool and outcome: ok,
// the tool's own error, refused by the server, and not sent.
func TestCallObserved(t *testing.T) {
	t.Parallel()
	crm, _, ep := setup(t, nil)
	type seen struct{ server, tool, outcome string }
	var mu sync.Mutex
	var got []seen
	c, err := downstream.New(&downstream.Options{
		LookupEnv: func(string) (string, bool) { return token, true },
		Observe: func(server, tool, outcome string, took time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			if took <= 0 {
				t.Errorf("%s/%s took %v", server, tool, took)
			}
			got = append(got, seen{server, tool, outcome})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	do := func(tool, args string) {
		_, _ = c.Call(context.Background(), downstream.Call{Endpoint: ep, Tool: tool, Arguments: json.RawMessage(args), IdempotencyKey: "bt1-" + tool})
	}
	do("get_customer", `{"email":"alice@example.com"}`)
	do("refund", `{"customer":"alice@example.com","amount":890,"currency":"EUR"}`)
	do("delete_customer", `{}`)
	if err := crm.SetDown(true); err != nil {
		t.Fatal(err)
	}
	do("get_customer", `{"email":"alice@example.com"}`)

	want := []seen{
		{"crm", "get_customer", "ok"},
		{"crm", "refund", "tool_error"},
		{"crm", "delete_customer", "refused"},
		{"crm", "get_customer", "not_sent"},
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("observed %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d observed as %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestOutcome(t *testing.T) {
	tests := []struct {
		name string
		res  *downstream.Result
		err  error
		want string
	}{
		{"answer", &downstream.Result{}, nil, "ok"},
		{"tool error", &downstream.Result{IsError: true}, nil, "tool_error"},
		{"not sent", nil, &downstream.CallError{Kind: downstream.NotSent}, "not_sent"},
		{"no answer", nil, &downstream.CallError{Kind: downstream.NoAnswer}, "no_answer"},
		{"refused", nil, &downstream.CallError{Kind: downstream.Refused}, "refused"},
		{"other", nil, context.Canceled, "error"},
	}
	for _, tc := range tests {
		if got := downstream.Outcome(tc.res, tc.err); got != tc.want {
			t.Errorf("%s: Outcome = %s, want %s", tc.name, got, tc.want)
		}
	}
}
