package telemetry

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// OpenSteps is how many attempts at one step of a process are open in one
// state (ready, claimed or waiting): a sample of baton_open_steps.
type OpenSteps struct {
	Org, Process, Step, State string
	Count                     int
}

// openStepsTTL is how long a reading of the open steps serves scrapes: a
// few scrapers, or a scraper retrying, cost one query.
const openStepsTTL = 10 * time.Second

// openStepsTimeout bounds one reading.
const openStepsTimeout = 5 * time.Second

var openStepsDesc = prometheus.NewDesc("baton_open_steps",
	"Open step attempts now, by organization, process, step and state (ready, claimed, waiting); from the record of step attempts.",
	[]string{"org", "process", "step", "state"}, nil)

// openStepsCollector reads the open steps at scrape time, at most once
// every openStepsTTL.
type openStepsCollector struct {
	read   func(context.Context) ([]OpenSteps, error)
	m      *Metrics
	mu     sync.Mutex
	at     time.Time
	latest []OpenSteps
}

// WatchOpenSteps adds the gauge baton_open_steps{org, process, step,
// state}, whose samples read returns when Prometheus scrapes (a reading
// serves scrapes for 10 s). Its series are bounded by the processes'
// steps times three states; a step with nothing open has none. A reading
// that fails is logged and the scrape has no samples of it. Call it once;
// a nil *Metrics does nothing.
func (m *Metrics) WatchOpenSteps(read func(context.Context) ([]OpenSteps, error)) error {
	if m == nil {
		return nil
	}
	return m.reg.Register(&openStepsCollector{read: read, m: m})
}

func (c *openStepsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- openStepsDesc }

func (c *openStepsCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	if time.Since(c.at) >= openStepsTTL {
		ctx, cancel := context.WithTimeout(context.Background(), openStepsTimeout)
		latest, err := c.read(ctx)
		cancel()
		if err != nil {
			c.m.logger.Error("metrics: reading the open steps failed", "error", err)
			latest = nil
		}
		c.latest, c.at = latest, time.Now()
	}
	latest := c.latest
	c.mu.Unlock()
	for _, s := range latest {
		ch <- prometheus.MustNewConstMetric(openStepsDesc, prometheus.GaugeValue, float64(s.Count), s.Org, s.Process, s.Step, s.State)
	}
}
