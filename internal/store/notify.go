package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// The states of a delivery.
const (
	DeliveryDelivered = "delivered"
	// DeliveryRetrying: the last attempt failed and another will come.
	DeliveryRetrying = "retrying"
	// DeliveryFailed: the last attempt failed and it was the last.
	DeliveryFailed = "failed"
)

// DeliveryRetention is how long a delivery stays in the log.
const DeliveryRetention = 30 * 24 * time.Hour

// Delivery is one event's delivery to one channel of its organization.
type Delivery struct {
	Org, EventID, Channel string
	EventType             string
	RunID, WorkItemID     string
	State                 string
	// Attempts counts the attempts made; LastError is the last one's
	// failure ("" once delivered), which holds no secret.
	Attempts    int
	LastError   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	DeliveredAt *time.Time
}

const qDelivered = `SELECT state = 'delivered' FROM notify_deliveries WHERE org = $1 AND event_id = $2 AND channel = $3`

// Delivered reports whether the event reached the channel already.
func (s *Store) Delivered(ctx context.Context, org, eventID, channel string) (bool, error) {
	var done bool
	err := s.pool.QueryRow(ctx, qDelivered, org, eventID, channel).Scan(&done)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return done, err
}

const qRecordDelivery = `
INSERT INTO notify_deliveries (org, event_id, channel, event_type, run_id, work_item_id, state, attempts, last_error, delivered_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, CASE WHEN $7 = 'delivered' THEN now() END)
ON CONFLICT (org, event_id, channel) DO UPDATE SET
    state = CASE WHEN notify_deliveries.state = 'delivered' THEN 'delivered' ELSE EXCLUDED.state END,
    attempts = notify_deliveries.attempts + 1,
    last_error = CASE WHEN notify_deliveries.state = 'delivered' THEN '' ELSE EXCLUDED.last_error END,
    updated_at = now(),
    delivered_at = coalesce(notify_deliveries.delivered_at, EXCLUDED.delivered_at)`

const qSweepDeliveries = `DELETE FROM notify_deliveries WHERE org = $1 AND updated_at < $2`

// RecordDelivery records an attempt of a delivery: its state after it and
// its failure. A delivery once delivered stays so. A run's end also
// deletes the organization's deliveries older than DeliveryRetention.
func (s *Store) RecordDelivery(ctx context.Context, d Delivery) error {
	if _, err := s.pool.Exec(ctx, qRecordDelivery, d.Org, d.EventID, d.Channel, d.EventType, d.RunID, d.WorkItemID, d.State, d.LastError); err != nil {
		return err
	}
	if d.EventType == "run.ended" && d.State == DeliveryDelivered {
		_, err := s.pool.Exec(ctx, qSweepDeliveries, d.Org, time.Now().Add(-DeliveryRetention))
		return err
	}
	return nil
}

const qRecentDeliveries = `
SELECT org, event_id, channel, event_type, run_id, work_item_id, state, attempts, last_error, created_at, updated_at, delivered_at
FROM notify_deliveries
WHERE org = $1 AND ($2 = false OR state <> 'delivered')
ORDER BY updated_at DESC, event_id, channel
LIMIT $3`

// RecentDeliveries lists an organization's latest deliveries, newest
// first, at most limit; with failing, only those not delivered.
func (s *Store) RecentDeliveries(ctx context.Context, org string, limit int, failing bool) ([]Delivery, error) {
	rows, err := s.pool.Query(ctx, qRecentDeliveries, org, failing, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Delivery, error) {
		var d Delivery
		err := r.Scan(&d.Org, &d.EventID, &d.Channel, &d.EventType, &d.RunID, &d.WorkItemID, &d.State, &d.Attempts, &d.LastError, &d.CreatedAt, &d.UpdatedAt, &d.DeliveredAt)
		return d, err
	})
}

const qRunInputs = `SELECT inputs FROM runs WHERE org = $1 AND run_id = $2`

// RunInputs returns a run's inputs from the read model.
func (s *Store) RunInputs(ctx context.Context, org, runID string) (map[string]any, error) {
	var raw []byte
	err := s.pool.QueryRow(ctx, qRunInputs, org, runID).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var in map[string]any
	return in, json.Unmarshal(raw, &in)
}
