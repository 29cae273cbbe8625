package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/baton-run/baton/internal/store"
)

// The insights bench's shape: the figure is for 100,000 ended and
// 10,000 open runs of one process.
const (
	insightsBenchEnded = 100_000
	insightsBenchOpen  = 10_000
)

// benchInsights is `baton bench --insights DB`: it seeds ended and open
// runs of one process with their step attempts straight into the
// PostgreSQL of db ("dev": the one of the --data folder), in an
// organization of their own, times samples insights queries one after
// another, prints their p50 and p99 and EXPLAIN ANALYZE of each
// statement, and deletes what it seeded.
func benchInsights(db, data string, samples int, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	url := db
	if db == "dev" {
		url = ""
	}
	where := whereFlags{databaseURL: url, data: data}
	st, release, err := where.open(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "baton bench: %v\n", err)
		return 1
	}
	defer release()
	org, process := "o_insights_bench_"+rand.Text()[:8], "insights-bench"
	begin := time.Now()
	defer func() {
		if err := st.DropInsightsBench(context.WithoutCancel(ctx), org); err != nil {
			fmt.Fprintf(stderr, "baton bench: %v\n", err)
		}
	}()
	if err := st.SeedInsightsBench(ctx, org, process, insightsBenchEnded, insightsBenchOpen, time.Now()); err != nil {
		fmt.Fprintf(stderr, "baton bench: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "seeded %d ended and %d open runs of %s in %s, in %v\n", insightsBenchEnded, insightsBenchOpen, process, org, time.Since(begin).Round(time.Millisecond))
	// The last 30 days, as the figure has it; and a window that
	// begins at noon UTC 15 days ago, the most of its first day's rows a
	// report counts one by one: the seeded runs all start inside the last
	// 30 days, so that window's first day holds none before it.
	now := time.Now()
	noon := time.Date(now.Year(), now.Month(), now.Day(), 12, 0, 0, 0, time.UTC).AddDate(0, 0, -15)
	windows := []struct {
		name string
		opts *store.InsightsOptions
	}{
		{"over 30 days", nil},
		{"from noon UTC 15 days ago (12 hours of rows counted)", &store.InsightsOptions{Since: now.Sub(noon), Now: now}},
	}
	for _, w := range windows {
		took := make([]time.Duration, 0, samples)
		for range samples {
			t := time.Now()
			r, err := st.Insights(ctx, org, process, w.opts)
			if err != nil {
				fmt.Fprintf(stderr, "baton bench: %v\n", err)
				return 1
			}
			took = append(took, time.Since(t))
			if r.Runs.Ended == 0 || r.Steps == nil {
				fmt.Fprintf(stderr, "baton bench: the insights found nothing of what was seeded\n")
				return 1
			}
		}
		slices.Sort(took)
		fmt.Fprintf(stdout, "insights of %s %s, %d queries: p50 %v, p99 %v\n", process, w.name, samples,
			took[len(took)/2].Round(10*time.Microsecond), took[len(took)*99/100].Round(10*time.Microsecond))
	}
	for i, w := range windows {
		plans, err := st.ExplainInsights(ctx, org, process, w.opts, false)
		if err != nil {
			fmt.Fprintf(stderr, "baton bench: %v\n", err)
			return 1
		}
		for _, p := range plans {
			if i == 0 || p[0] == "counters" {
				fmt.Fprintf(stdout, "\n-- %s, %s\n%s\n", p[0], w.name, p[1])
			}
		}
	}
	return 0
}
