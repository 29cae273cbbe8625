package interpreter

import (
	"fmt"
	"time"
)

// Renew extends a lease with a new lease id; the old one is stale at once.
type Renew struct {
	StepID     string
	LeaseID    string
	Actor      Actor
	NewLeaseID string
	Lease      time.Duration
	// Progress, when not empty, replaces the progress note kept on the step.
	Progress string
}

// RenewResult is a renew's result without its token.
type RenewResult struct {
	RunID     string `json:"runId"`
	StepID    string `json:"stepId"`
	LeaseID   string `json:"leaseId"`
	ExpiresAt string `json:"expiresAt"`
}

func (c Renew) apply(m *Machine, now time.Time) (any, error) {
	if c.NewLeaseID == "" || c.Lease <= 0 {
		return nil, fmt.Errorf("renew: new lease id and a positive lease length are required")
	}
	if err := m.live(now); err != nil {
		return nil, err
	}
	_, sr, err := m.leased(c.StepID, c.LeaseID, c.Actor)
	if err != nil {
		return nil, err
	}
	exp := now.Add(c.Lease)
	sr.Lease = &Lease{ID: c.NewLeaseID, Holder: sr.Lease.Holder, ExpiresAt: exp}
	if c.Progress != "" {
		sr.Progress = c.Progress
	}
	// Neither the lease nor the progress note shows in get_run: a renew
	// leaves run.updatedAt as it was (SPEC-DECISIONS §30).
	return &RenewResult{RunID: m.run.ID, StepID: c.StepID, LeaseID: c.NewLeaseID, ExpiresAt: FormatTime(exp)}, nil
}

// RenewWire is renew's result on the wire (tools.md).
type RenewWire struct {
	Token     string `json:"token"`
	ExpiresAt string `json:"expiresAt"`
}

// Wire returns the tools.md shape of the result with the signed token.
func (r *RenewResult) Wire(token string) RenewWire {
	return RenewWire{Token: token, ExpiresAt: r.ExpiresAt}
}
