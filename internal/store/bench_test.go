package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/pgtest"
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
	if _, err := s.Pool().Exec(ctx, "ANALYZE runs; ANALYZE work; ANALYZE run_inputs"); err != nil {
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
	benchUpserts++
	r := run(fmt.Sprintf("r_bench_%d", benchUpserts), 0, t0, `{"vendorName": "Bench", "amount": 1}`)
	due := t0.Add(time.Hour)
	work := []store.WorkRow{
		agentStep("check", t0),
		{StepID: "approve", WorkItemID: "w_bench", Kind: store.WorkApprove, ReadySince: t0, Due: &due, AssignedGroup: "g_finance"},
	}
	rewrite(b, s, r, work)
}

// BenchmarkUpsertRunStateChange is the write of a state change (an agent's
// submit that opens a person's approval, the approval that ends the run)
// of runs started with eight inputs, 200 runs written in turn. A state
// change moves the row's indexed state column, so PostgreSQL writes the
// new row version into every index of the table; inputs, which never
// change, are indexed in a table of their own, written once a run.
func BenchmarkUpsertRunStateChange(b *testing.B) {
	s := seededStore(b)
	ctx := context.Background()
	benchUpserts++
	inputs := `{"vendorName": "Acme GmbH", "vendorEmail": "ap@acme.example", "country": "DE", "amount": 48000,
		"currency": "EUR", "costCenter": "CC-4711", "contractStart": "2027-01-01", "priority": "high"}`
	rows := make([]store.RunRow, 200)
	for i := range rows {
		rows[i] = run(fmt.Sprintf("r_state_%d_%d", benchUpserts, i), 0, t0, inputs)
	}
	work := []store.WorkRow{agentStep("check", t0)}
	wal := walBytes(b, s)
	n := 0
	for b.Loop() {
		r := &rows[n%len(rows)]
		r.Seq++
		r.State = []string{"running", "waiting"}[r.Seq%2]
		r.UpdatedAt = r.UpdatedAt.Add(time.Second)
		if applied, err := s.UpsertRun(ctx, nil, *r, work); err != nil || !applied {
			b.Fatalf("applied %v, err %v", applied, err)
		}
		n++
	}
	b.StopTimer()
	reportMs(b)
	reportWAL(b, wal)
}

// BenchmarkPublishRunLargeAnswer is a write's read-model transaction for a
// run near the default cap on run data (256 KB): every answer carries the
// run's view, data and all, and the transaction stores it for replays.
func BenchmarkPublishRunLargeAnswer(b *testing.B) {
	s := seededStore(b)
	ctx := context.Background()
	benchUpserts++
	data := map[string]any{}
	for i := range 2000 {
		data[fmt.Sprintf("field_%d", i)] = map[string]any{"value": fmt.Sprintf("a value of some length, number %d", i), "n": i, "ok": i%2 == 0}
	}
	view, err := json.Marshal(map[string]any{"run": map[string]any{"id": "r_large"}, "data": data})
	if err != nil {
		b.Fatal(err)
	}
	r := run(fmt.Sprintf("r_answer_%d", benchUpserts), 0, t0, `{"vendorName": "Large"}`)
	work := []store.WorkRow{agentStep("check", t0)}
	n := 0
	for b.Loop() {
		n++
		r.Seq++
		answer := &store.Request{Org: org, RequestID: fmt.Sprintf("q_answer_%d_%d", benchUpserts, n), Tool: "submit", Digest: "ab", Result: view, RunID: r.RunID}
		if applied, err := s.PublishRun(ctx, nil, &r, work, answer); err != nil || !applied {
			b.Fatalf("applied %v, err %v", applied, err)
		}
	}
	b.StopTimer()
	reportMs(b)
	b.ReportMetric(float64(len(view)), "answer-B")
}

// BenchmarkPublishRunAfterIdle is a write's read-model transaction (the
// run's row, its work and the write's answer, as a claim publishes them)
// after PostgreSQL has had nothing to do for a while, as it has when a
// write reaches it: a call at a time spends milliseconds in Temporal
// before its worker writes. It reports the transaction's mean (ns/op),
// median and 90th percentile; the pause is not timed. The gap
// between "back-to-back" and the others is what waking an idle database
// costs on the machine, not what the transaction does. Run it with a
// fixed count, say -benchtime 200x: the pauses add up.
func BenchmarkPublishRunAfterIdle(b *testing.B) {
	s := seededStore(b)
	ctx := context.Background()
	for _, idle := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 50 * time.Millisecond} {
		name := "back-to-back"
		if idle > 0 {
			name = "idle-" + idle.String()
		}
		b.Run(name, func(b *testing.B) {
			benchUpserts++
			r := run(fmt.Sprintf("r_idle_%d", benchUpserts), 0, t0, `{"vendorName": "Idle", "amount": 1}`)
			work := []store.WorkRow{agentStep("check", t0)}
			result := json.RawMessage(`{"token": "t", "step": {"id": "check"}}`)
			// Timed here, not by the benchmark's timer: stopping that
			// timer stops the world, which is not what an idle server sees.
			took := make([]time.Duration, 0, b.N)
			var sum time.Duration
			for i := 0; i < b.N; i++ {
				time.Sleep(idle)
				r.Seq++
				answer := &store.Request{Org: org, RequestID: fmt.Sprintf("q_idle_%d_%d", benchUpserts, i), Tool: "claim", Digest: "ab", Result: result, RunID: r.RunID}
				begin := time.Now()
				applied, err := s.PublishRun(ctx, nil, &r, work, answer)
				d := time.Since(begin)
				if err != nil || !applied {
					b.Fatalf("applied %v, err %v", applied, err)
				}
				took, sum = append(took, d), sum+d
			}
			slices.Sort(took)
			b.ReportMetric(float64(sum.Nanoseconds())/float64(b.N), "ns/op")
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "p90-ms")
		})
	}
}

// rewrite writes run r with work again and again, each time at the next
// seq, and reports the time and the WAL of one write.
func rewrite(b *testing.B, s *store.Store, r store.RunRow, work []store.WorkRow) {
	b.Helper()
	ctx := context.Background()
	wal := walBytes(b, s)
	for b.Loop() {
		r.Seq++
		if applied, err := s.UpsertRun(ctx, nil, r, work); err != nil || !applied {
			b.Fatalf("applied %v, err %v", applied, err)
		}
	}
	b.StopTimer()
	reportMs(b)
	reportWAL(b, wal)
}

// reportWAL reports the WAL that wal counted as bytes per iteration.
func reportWAL(b *testing.B, wal func() int64) {
	b.ReportMetric(float64(wal())/float64(b.N), "WAL-B/op")
}

// walBytes returns a function that tells how many bytes of WAL the
// server wrote since walBytes was called: what the writes between cost
// the server's disk and its replicas.
func walBytes(b *testing.B, s *store.Store) func() int64 {
	b.Helper()
	ctx := context.Background()
	var start string
	if err := s.Pool().QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&start); err != nil {
		b.Fatal(err)
	}
	return func() int64 {
		var n int64
		if err := s.Pool().QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::bigint`, start).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
}

// BenchmarkPublishWideRun is a write to one branch of a run with eight
// open ones (a parallel-1 fan-out of agent steps), over 500 such runs in
// turn, as writes to many open runs interleave: each write moves the run's
// row on and changes one branch's work row (its handoff); the other seven
// rows are as they were.
func BenchmarkPublishWideRun(b *testing.B) {
	s := seededStore(b)
	ctx := context.Background()
	benchUpserts++
	const runs, branches = 500, 8
	rows := make([]store.RunRow, runs)
	work := make([][]store.WorkRow, runs)
	for i := range rows {
		rows[i] = run(fmt.Sprintf("r_wide_%d_%d", benchUpserts, i), 1, t0, `{"vendorName": "Wide", "amount": 1, "region": "eu"}`)
		for j := range branches {
			work[i] = append(work[i], agentStep(fmt.Sprintf("branch-%d", j), t0))
		}
		if _, err := s.UpsertRun(ctx, nil, rows[i], work[i]); err != nil {
			b.Fatal(err)
		}
	}
	wal := walBytes(b, s)
	n := 0
	for b.Loop() {
		i := n % runs
		r, w := &rows[i], work[i]
		r.Seq++
		r.UpdatedAt = r.UpdatedAt.Add(time.Second)
		w[n/runs%branches].Handoff = json.RawMessage(fmt.Sprintf(`{"attempt": %d}`, r.Seq))
		if applied, err := s.UpsertRun(ctx, nil, *r, w); err != nil || !applied {
			b.Fatalf("applied %v, err %v", applied, err)
		}
		n++
	}
	b.StopTimer()
	reportMs(b)
	reportWAL(b, wal)
}

// BenchmarkUpsertRunLargeInputs is BenchmarkUpsertRun for a run started
// with 32 KB of inputs, which PostgreSQL keeps out of line (TOAST).
func BenchmarkUpsertRunLargeInputs(b *testing.B) {
	s := seededStore(b)
	benchUpserts++
	notes, _ := json.Marshal(strings.Repeat("A supplier's long onboarding notes. ", 900))
	r := run(fmt.Sprintf("r_large_%d", benchUpserts), 0, t0, `{"vendorName": "Large", "notes": `+string(notes)+`}`)
	work := []store.WorkRow{agentStep("check", t0)}
	rewrite(b, s, r, work)
}
