package main

import (
	"context"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/telemetry"
)

// watchOpenSteps adds the baton_open_steps gauge to m, read from the
// record of step attempts in st at each scrape.
func watchOpenSteps(m *telemetry.Metrics, st *store.Store) error {
	return m.WatchOpenSteps(func(ctx context.Context) ([]telemetry.OpenSteps, error) {
		counts, err := st.OpenSteps(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]telemetry.OpenSteps, len(counts))
		for i, c := range counts {
			out[i] = telemetry.OpenSteps{Org: c.Org, Process: c.Process, Step: c.Step, State: c.State, Count: c.Count}
		}
		return out, nil
	})
}
