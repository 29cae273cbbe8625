package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-run/baton/internal/pgtest"
	"github.com/baton-run/baton/internal/store"
)

const benchRuns = 10_000

var benchUpserts int // a fresh run for each BenchmarkUpsertRun invocation

var seeded struct {
	once  sync.Once
	store *store.Store
	err   error
}

// seededStore returns a store holding benchRuns open runs over ten
// processes, each with one ready agent step and, for every third run, an
// approval assigned to one of five groups. It is built once per test binary
// with COPY and shared by the benchmarks, which only read it.
func seededStore(b *testing.B) *store.Store {
	b.Helper()
	srv := pgtest.Shared(b)
	seeded.once.Do(func() {
		ctx := context.Background()
		name, err := srv.CreateDatabase(ctx, "")
		if err != nil {
			seeded.err = err
			return
		}
		s, err := store.Open(ctx, srv.DatabaseURL(name))
		if err != nil {
			seeded.err = err
			return
		}
		if _, err := s.Migrate(ctx); err != nil {
			seeded.err = err
			return
		}
		seeded.store, seeded.err = s, seed(ctx, s)
	})
	if seeded.err != nil {
		b.Fatal(seeded.err)
	}
	return seeded.store
}

func seed(ctx context.Context, s *store.Store) error {
	start := time.Now()
	var runs, work [][]any
	for i := range benchRuns {
		id := fmt.Sprintf("r_%05d", i)
		process := fmt.Sprintf("process-%d", i%10)
		at := t0.Add(time.Duration(i) * time.Second)
		inputs, _ := json.Marshal(map[string]any{"vendorName": fmt.Sprintf("Vendor %d", i), "amount": 1000 * (i % 100), "region": []string{"eu", "us"}[i%2]})
		runs = append(runs, []any{org, id, process, 1, "active", "live", inputs, "u_mira", at, at, int64(1)})
		work = append(work, []any{org, id, "check", nil, "agent", process, 1, "live", at, nil, nil, nil})
		if i%3 == 0 {
			group := fmt.Sprintf("g_%d", i%5)
			work = append(work, []any{org, id, "approve", "w_" + id, "approve", process, 1, "live", at, group, nil, []byte(`{"id":"w_` + id + `"}`)})
		}
	}
	err := pgx.BeginFunc(ctx, s.Pool(), func(tx pgx.Tx) error {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"runs"},
			[]string{"org", "run_id", "process", "version", "state", "mode", "inputs", "started_by", "started_at", "updated_at", "seq"},
			pgx.CopyFromRows(runs)); err != nil {
			return err
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"work"},
			[]string{"org", "run_id", "step_id", "work_item_id", "kind", "process", "version", "mode", "ready_since", "assigned_group", "assigned_person", "item"},
			pgx.CopyFromRows(work))
		return err
	})
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if _, err := s.Pool().Exec(ctx, "ANALYZE runs; ANALYZE work"); err != nil {
		return err
	}
	fmt.Printf("seeded %d runs, %d work rows in %v\n", len(runs), len(work), time.Since(start).Round(time.Millisecond))
	return nil
}

func reportMs(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}

func BenchmarkListAgentWork(b *testing.B) {
	s := seededStore(b)
	ctx := context.Background()
	_, mid, err := s.ListAgentWork(ctx, org, store.WorkFilter{}, 100, "")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		filter store.WorkFilter
		cursor string
	}{
		{"first-page", store.WorkFilter{}, ""},
		{"second-page", store.WorkFilter{}, mid},
		{"process", store.WorkFilter{Process: "process-7"}, ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				items, _, err := s.ListAgentWork(ctx, org, c.filter, 20, c.cursor)
				if err != nil || len(items) != 20 {
					b.Fatalf("%d items, err %v", len(items), err)
				}
			}
			reportMs(b)
		})
	}
}

func BenchmarkListPersonWork(b *testing.B) {
	s := seededStore(b)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		groups []string
	}{
		{"one-group", []string{"g_1"}},                              // ~670 open items
		{"three-groups", []string{"g_1", "g_2", "g_3"}},             // ~2000
		{"all-groups", []string{"g_0", "g_1", "g_2", "g_3", "g_4"}}, // ~3300
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				items, _, err := s.ListPersonWork(ctx, org, "mira@example.com", c.groups, store.WorkFilter{}, 20, "")
				if err != nil || len(items) != 20 {
					b.Fatalf("%d items, err %v", len(items), err)
				}
			}
			reportMs(b)
		})
	}
}

func BenchmarkListRunsInputs(b *testing.B) {
	s := seededStore(b)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		filter store.RunFilter
		want   int
	}{
		{"one-match", store.RunFilter{Inputs: json.RawMessage(`{"vendorName": "Vendor 4711"}`)}, 1},
		{"one-match-with-process", store.RunFilter{Process: "process-1", Inputs: json.RawMessage(`{"vendorName": "Vendor 4711"}`)}, 1},
		{"many-matches", store.RunFilter{Inputs: json.RawMessage(`{"amount": 42000, "region": "eu"}`)}, 20},
		{"no-filter", store.RunFilter{}, 20},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				items, _, err := s.ListRuns(ctx, org, c.filter, 20, "")
				if err != nil || len(items) != c.want {
					b.Fatalf("%d items, want %d; err %v", len(items), c.want, err)
				}
			}
			reportMs(b)
		})
	}
}

// BenchmarkUpsertRun is the write each state change costs: a run row and
// two work rows, on top of the 10,000 seeded runs.
func BenchmarkUpsertRun(b *testing.B) {
	s := seededStore(b)
	ctx := context.Background()
	benchUpserts++
	r := run(fmt.Sprintf("r_bench_%d", benchUpserts), 0, t0, `{"vendorName": "Bench", "amount": 1}`)
	due := t0.Add(time.Hour)
	work := []store.WorkRow{
		agentStep("check", t0),
		{StepID: "approve", WorkItemID: "w_bench", Kind: store.WorkApprove, ReadySince: t0, Due: &due, AssignedGroup: "g_finance"},
	}
	for b.Loop() {
		r.Seq++
		if applied, err := s.UpsertRun(ctx, nil, r, work); err != nil || !applied {
			b.Fatalf("applied %v, err %v", applied, err)
		}
	}
	reportMs(b)
}
