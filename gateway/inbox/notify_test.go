package inbox

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/store"
)

// Operators see their own organization's deliveries under Notifications,
// each failure with its error and the run and item it was about; a
// person is refused the page and the log is not read for them; a log
// that cannot be read, or a deployment without one, says so.
func TestNotificationsPage(t *testing.T) {
	at := time.Date(2026, 10, 6, 9, 4, 12, 0, time.UTC)
	var asked []string
	deliveries := func(_ context.Context, org string, limit int) ([]store.Delivery, error) {
		asked = append(asked, org)
		if org == "o_broken" {
			return nil, errors.New("connection refused")
		}
		return []store.Delivery{
			{Org: org, EventID: "ev_2", Channel: "email-1", EventType: "work.opened", RunID: "r_1", WorkItemID: "w_1",
				State: store.DeliveryFailed, Attempts: 12, LastError: "email email-1: smtp.acme.example:587 offers no STARTTLS", UpdatedAt: at},
			{Org: org, EventID: "ev_1", Channel: "webhook-1", EventType: "run.ended", RunID: "r_1",
				State: store.DeliveryDelivered, Attempts: 1, UpdatedAt: at},
		}, nil
	}
	in, err := New(canned{}, &Options{DevSignIn: true, Org: "o_acme", Deliveries: deliveries})
	if err != nil {
		t.Fatal(err)
	}
	ops := auth.Identity{ID: "u_ops", Kind: auth.KindOperator, Groups: []string{"operators"}, Org: "o_acme"}
	w := get(t, in, ops, Path+"notifications")
	page := w.Body.String()
	if w.Code != http.StatusOK || len(asked) != 1 || asked[0] != "o_acme" {
		t.Fatalf("operators' page: %d, log read for %v\n%s", w.Code, asked, page)
	}
	for _, want := range []string{
		`<span class="badge over">failed</span>`, "offers no STARTTLS", "email-1", "work.opened", "ev_2", ">12<",
		`href="/inbox/runs/r_1/items/w_1"`, "webhook-1", "run.ended", "2026-10-06 09:04:12 UTC",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, `<span class="badge over">delivered</span>`) {
		t.Errorf("a delivered row is marked:\n%s", page)
	}

	person := auth.Identity{ID: "rita@acme.example", Kind: auth.KindPerson, Org: "o_acme"}
	if w := get(t, in, person, Path+"notifications"); w.Code != http.StatusForbidden || len(asked) != 1 {
		t.Fatalf("a person: %d, log read %d times", w.Code, len(asked))
	}
	if w := get(t, in, person, Path+"runs/r_1/items/w_1"); !strings.Contains(w.Body.String(), "<nav>") || strings.Contains(w.Body.String(), Path+"notifications") {
		t.Errorf("a person's menu links to Notifications, or has no menu (%d):\n%s", w.Code, w.Body.String())
	}
	if w := get(t, in, ops, Path+"runs/r_1/items/w_1"); !strings.Contains(w.Body.String(), `href="`+Path+`notifications"`) {
		t.Errorf("the operators' menu has no Notifications (%d):\n%s", w.Code, w.Body.String())
	}

	broken := ops
	broken.Org = "o_broken"
	if w := get(t, in, broken, Path+"notifications"); w.Code != http.StatusServiceUnavailable || strings.Contains(w.Body.String(), "connection refused") {
		t.Fatalf("an unreadable log: %d\n%s", w.Code, w.Body.String())
	}

	off, err := New(canned{}, &Options{DevSignIn: true, Org: "o_acme"})
	if err != nil {
		t.Fatal(err)
	}
	if w := get(t, off, ops, Path+"notifications"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "baton notify log") {
		t.Fatalf("without a log: %d\n%s", w.Code, w.Body.String())
	}
}
