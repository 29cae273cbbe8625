package store_test

import (
	"testing"

	"github.com/baton-run/baton/internal/store"
)

// A delivery's attempts are counted; once delivered it stays delivered,
// even when a late attempt fails; the log lists an organization's own,
// the failing ones alone when asked.
func TestDeliveriesLog(t *testing.T) {
	b := setup(t)
	d := store.Delivery{Org: "o_a", EventID: "ev_1", Channel: "webhook-1", EventType: "work.opened", RunID: "r_1", WorkItemID: "w_1"}
	if done, err := b.store.Delivered(b.ctx, "o_a", "ev_1", "webhook-1"); err != nil || done {
		t.Fatalf("delivered before any attempt: %v %v", done, err)
	}
	record := func(d store.Delivery, state, why string) {
		t.Helper()
		d.State, d.LastError = state, why
		if err := b.store.RecordDelivery(b.ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	record(d, store.DeliveryRetrying, "webhook webhook-1: POST https://h.example/b answered 503")
	if got, _ := b.store.RecentDeliveries(b.ctx, "o_a", 10, true); len(got) != 1 || got[0].Attempts != 1 || got[0].State != store.DeliveryRetrying {
		t.Fatalf("failing deliveries %+v", got)
	}
	record(d, store.DeliveryDelivered, "")
	record(d, store.DeliveryFailed, "late")
	if done, err := b.store.Delivered(b.ctx, "o_a", "ev_1", "webhook-1"); err != nil || !done {
		t.Fatalf("not delivered after a success: %v %v", done, err)
	}
	other := d
	other.Org, other.EventID = "o_b", "ev_2"
	record(other, store.DeliveryFailed, "email email-1: connect: refused")
	got, err := b.store.RecentDeliveries(b.ctx, "o_a", 10, false)
	if err != nil || len(got) != 1 {
		t.Fatalf("o_a's log %+v %v", got, err)
	}
	if g := got[0]; g.State != store.DeliveryDelivered || g.Attempts != 3 || g.LastError != "" || g.DeliveredAt == nil {
		t.Fatalf("delivery %+v", g)
	}
	if got, _ := b.store.RecentDeliveries(b.ctx, "o_a", 10, true); len(got) != 0 {
		t.Fatalf("o_a has failing deliveries %+v", got)
	}
}
