package gateway

import (
	"context"

	"github.com/baton-run/baton/internal/store"
)

// Deliveries lists an organization's latest deliveries of run events to
// its notification channels, newest first, at most limit: what operators
// see under Notifications in the web inbox (docs/notifications.md).
func (g *Gateway) Deliveries(ctx context.Context, org string, limit int) ([]store.Delivery, error) {
	return g.store.RecentDeliveries(ctx, org, limit, false)
}
