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
	took := make([]time.Duration, 0, samples)
	var last *store.InsightsOptions
	for range samples {
		t := time.Now()
		r, err := st.Insights(ctx, org, process, last)
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
	fmt.Fprintf(stdout, "insights of %s over 30 days, %d queries: p50 %v, p99 %v\n", process, samples,
		took[len(took)/2].Round(10*time.Microsecond), took[len(took)*99/100].Round(10*time.Microsecond))
	plans, err := st.ExplainInsights(ctx, org, process, nil, false)
	if err != nil {
		fmt.Fprintf(stderr, "baton bench: %v\n", err)
		return 1
	}
	for _, p := range plans {
		fmt.Fprintf(stdout, "\n-- %s\n%s\n", p[0], p[1])
	}
	return 0
}
