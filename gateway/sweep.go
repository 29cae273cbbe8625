package gateway

import (
	"context"
	"fmt"
	"time"
)

// DefaultRequestRetention is how long idempotency records are kept: 7 days.
// A requestId retried after its record is gone runs again as a new call, so
// the retention must outlast any client's retries by far: clients retry
// within seconds to hours.
const DefaultRequestRetention = 7 * 24 * time.Hour

// MinRequestRetention is the shortest retention SweepRequests accepts.
const MinRequestRetention = 24 * time.Hour

// SweepOptions configure [Gateway.SweepRequests].
type SweepOptions struct {
	// Retention is how long an idempotency record is kept. Default
	// DefaultRequestRetention; at least MinRequestRetention.
	Retention time.Duration
	// Every is how often the sweep runs. Default 1 hour.
	Every time.Duration
}

// SweepRequests deletes the idempotency records older than opts.Retention,
// in every organization, at once and then every opts.Every, until ctx ends
// (then it returns nil). A failed sweep is logged and tried again at the
// next tick. Every gateway of a deployment may run it; the deletes do not
// conflict. Nil options mean defaults.
func (g *Gateway) SweepRequests(ctx context.Context, opts *SweepOptions) error {
	var o SweepOptions
	if opts != nil {
		o = *opts
	}
	if o.Retention == 0 {
		o.Retention = DefaultRequestRetention
	}
	if o.Retention < MinRequestRetention {
		return fmt.Errorf("gateway: request retention %v is under the minimum of %v: clients may still retry those requestIds", o.Retention, MinRequestRetention)
	}
	if o.Every <= 0 {
		o.Every = time.Hour
	}
	t := time.NewTicker(o.Every)
	defer t.Stop()
	for {
		n, err := g.store.DeleteRequestsBefore(ctx, nil, time.Now().Add(-o.Retention))
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			g.opts.Logger.Warn("sweeping old idempotency records failed; trying again later", "error", err)
		case n > 0:
			g.opts.Logger.Info("swept old idempotency records", "deleted", n, "retention", o.Retention)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
