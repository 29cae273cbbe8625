package telemetry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/baton-run/baton/internal/telemetry"
)

// baton_open_steps shows what its reader returns, read once for scrapes
// that come close together; a reading that fails shows no samples.
func TestOpenStepsGauge(t *testing.T) {
	m, err := telemetry.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	var fail error
	err = m.WatchOpenSteps(func(context.Context) ([]telemetry.OpenSteps, error) {
		reads++
		return []telemetry.OpenSteps{
			{Org: "o_a", Process: "invoices", Step: "approve", State: "waiting", Count: 300},
			{Org: "o_a", Process: "invoices", Step: "match", State: "claimed", Count: 4},
		}, fail
	})
	if err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, m.Handler())
	s := sample(fams, "baton_open_steps", map[string]string{"org": "o_a", "process": "invoices", "step": "approve", "state": "waiting"})
	if s == nil || s.GetGauge().GetValue() != 300 || len(fams["baton_open_steps"].GetMetric()) != 2 {
		t.Fatalf("baton_open_steps: %v", fams["baton_open_steps"])
	}
	fail = errors.New("the database is down")
	scrape(t, m.Handler())
	if reads != 1 {
		t.Fatalf("two scrapes in a row read %d times", reads)
	}

	bad, _ := telemetry.NewMetrics(nil)
	_ = bad.WatchOpenSteps(func(context.Context) ([]telemetry.OpenSteps, error) { return nil, errors.New("the database is down") })
	if f := scrape(t, bad.Handler())["baton_open_steps"]; f != nil && len(f.GetMetric()) > 0 {
		t.Fatalf("a failed reading shows %v", f)
	}
}
