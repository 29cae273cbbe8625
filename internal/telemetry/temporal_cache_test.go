package telemetry

import (
	"bytes"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"go.temporal.io/sdk/client"
)

// exposition is what reg serves, in Prometheus's text format.
func exposition(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, f := range fams {
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func otelOn(t testing.TB, reg *prometheus.Registry) client.MetricsHandler {
	t.Helper()
	h, err := otelMetrics(reg, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The cache changes nothing that is recorded: the same calls through the
// cached handler and through the OpenTelemetry handler alone serve the
// same series with the same values, tags given in fresh maps each time,
// nested, or changed by their caller after WithTags.
func TestCachedTemporalMetricsRecordAsUncached(t *testing.T) {
	calls := func(h client.MetricsHandler) {
		h.Counter("temporal_poll").Inc(1)
		for i := range 3 {
			q := h.WithTags(map[string]string{"namespace": "default", "task_queue": "baton"})
			q.Counter("temporal_request").Inc(int64(i + 1))
			q.Timer("temporal_request_latency").Record(time.Duration(i+1) * 10 * time.Millisecond)
			q.WithTags(map[string]string{"workflow_type": "ProcessRun"}).Counter("temporal_workflow_completed").Inc(1)
		}
		h.WithTags(map[string]string{"task_queue": "baton", "namespace": "other"}).Counter("temporal_request").Inc(5)
		h.WithTags(map[string]string{"namespace": "default", "task_queue": "baton"}).Gauge("temporal_num_pollers").Update(4)
		h.Gauge("temporal_sticky_cache_size").Update(7)
		tags := map[string]string{"activity_type": "PublishRun"}
		before := h.WithTags(tags)
		tags["activity_type"] = "Evaluate"
		h.WithTags(tags).Counter("temporal_activity_execution").Inc(2)
		before.Counter("temporal_activity_execution").Inc(1)
	}
	plain, cached := prometheus.NewRegistry(), prometheus.NewRegistry()
	calls(otelOn(t, plain))
	calls(newCachedHandler(otelOn(t, cached)))
	want, got := exposition(t, plain), exposition(t, cached)
	if got != want {
		t.Errorf("cached handler serves\n%s\nwant\n%s", got, want)
	}
	for _, s := range []string{`temporal_request_total{namespace="default",task_queue="baton"} 6`, `temporal_activity_execution_total{activity_type="PublishRun"} 1`} {
		if !bytes.Contains([]byte(got), []byte(s)) {
			t.Errorf("missing %s in\n%s", s, got)
		}
	}
}

// Equal tags give the same handler whatever their map's order; each set
// of tags is kept once in the whole tree, up to maxTaggedHandlers, past
// which WithTags hands out handlers that still record.
func TestCachedTemporalMetricsKeepTaggedHandlers(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := newCachedHandler(otelOn(t, reg))
	a := c.WithTags(map[string]string{"namespace": "default", "task_queue": "baton"})
	if b := c.WithTags(map[string]string{"task_queue": "baton", "namespace": "default"}); b != a {
		t.Error("equal tags gave another handler")
	}
	if b := c.WithTags(map[string]string{"namespace": "default"}); b == a {
		t.Error("other tags gave the same handler")
	}
	a.WithTags(map[string]string{"workflow_type": "ProcessRun"})
	a.WithTags(map[string]string{"workflow_type": "ProcessRun"})
	if n := c.count.Load(); n != 3 {
		t.Errorf("%d tagged handlers kept, want 3", n)
	}

	c.count.Store(maxTaggedHandlers)
	over := c.WithTags(map[string]string{"namespace": "past-the-bound"})
	if _, ok := over.(*cachedHandler); ok {
		t.Error("past the bound, WithTags still kept a handler")
	}
	over.Counter("temporal_request").Inc(1)
	if got := exposition(t, reg); !bytes.Contains([]byte(got), []byte(`temporal_request_total{namespace="past-the-bound"} 1`)) {
		t.Errorf("a handler past the bound did not record:\n%s", got)
	}
}

// Handlers are asked for from many goroutines at once (every poller and
// task of a worker): each set of tags is still kept once and every
// increment counted.
func TestCachedTemporalMetricsConcurrent(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := newCachedHandler(otelOn(t, reg))
	const goroutines, rounds, queues = 8, 500, 10
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds {
				q := fmt.Sprintf("q%d", (g+i)%queues)
				c.WithTags(map[string]string{"task_queue": q}).Counter("temporal_request").Inc(1)
			}
		})
	}
	wg.Wait()
	if n := c.count.Load(); n != queues {
		t.Errorf("%d tagged handlers kept, want %d", n, queues)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, f := range fams {
		if f.GetName() == "temporal_request_total" {
			for _, m := range f.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	if total != goroutines*rounds {
		t.Errorf("counted %v requests, want %d", total, goroutines*rounds)
	}
}

// BenchmarkTemporalMetrics is what the SDK does around a task, many times
// a workflow task: tag a handler by namespace and task queue, then by
// workflow type, count, and time, each time with tags in new maps.
func BenchmarkTemporalMetrics(b *testing.B) {
	for _, kind := range []string{"otel", "cached"} {
		b.Run(kind, func(b *testing.B) {
			h := otelOn(b, prometheus.NewRegistry())
			if kind == "cached" {
				h = newCachedHandler(h)
			}
			b.ReportAllocs()
			for b.Loop() {
				t := h.WithTags(map[string]string{"namespace": "default", "task_queue": "baton"}).
					WithTags(map[string]string{"workflow_type": "ProcessRun"})
				t.Counter("temporal_workflow_task_queue_poll_succeed").Inc(1)
				t.Timer("temporal_workflow_task_execution_latency").Record(time.Millisecond)
			}
		})
	}
}
