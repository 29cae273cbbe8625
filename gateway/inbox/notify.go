package inbox

import (
	"context"
	"net/http"
	"time"

	"github.com/baton-run/baton/internal/store"
)

// DeliveryLog reads an organization's latest deliveries of run events to
// its notification channels, newest first (store.RecentDeliveries).
type DeliveryLog func(ctx context.Context, org string, limit int) ([]store.Delivery, error)

// deliveriesShown is how many deliveries the page lists.
const deliveriesShown = 100

type notificationsPage struct {
	frame
	Off  bool
	Rows []deliveryRow
}

type deliveryRow struct {
	When, State, Channel, Type, EventID, RunURL, RunID, ItemURL, ItemID, Error string
	Attempts                                                                   int
	Bad                                                                        bool
}

// notifications shows operators the latest deliveries of their
// organization's run events, with each failure (docs/notifications.md).
func (in *Inbox) notifications(w http.ResponseWriter, r *http.Request, s *session) {
	if !s.operator() {
		in.fail(w, r, s, http.StatusForbidden, "Only operators see the deliveries of notifications.")
		return
	}
	p := notificationsPage{frame: in.frame(s, "Notifications", "notifications"), Off: in.opts.Deliveries == nil}
	if !p.Off {
		ds, err := in.opts.Deliveries(r.Context(), s.Org, deliveriesShown)
		if err != nil {
			in.opts.Logger.Error("inbox: read the deliveries log", "org", s.Org, "error", err)
			in.fail(w, r, s, http.StatusServiceUnavailable, "The deliveries log could not be read. Try again in a moment.")
			return
		}
		for _, d := range ds {
			row := deliveryRow{
				When: d.UpdatedAt.UTC().Format(time.DateTime) + " UTC", State: d.State, Channel: d.Channel, Type: d.EventType,
				EventID: d.EventID, RunID: d.RunID, RunURL: Path + "runs/" + d.RunID, ItemID: d.WorkItemID,
				Error: d.LastError, Attempts: d.Attempts, Bad: d.State != store.DeliveryDelivered,
			}
			if d.WorkItemID != "" {
				row.ItemURL = row.RunURL + "/items/" + d.WorkItemID
			}
			p.Rows = append(p.Rows, row)
		}
	}
	in.render(w, http.StatusOK, "notifications", p)
}
