package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/pgtest"
)

// The run's workflow writes its rows after every state change; get_work and
// list_runs read them.
func ExampleStore_UpsertRun() {
	ctx := context.Background()
	srv, err := pgtest.SharedServer()
	if err != nil {
		log.Fatal(err)
	}
	db, err := srv.CreateDatabase(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.DropDatabase(ctx, db)

	s, err := store.Open(ctx, srv.DatabaseURL(db))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

	at := time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
	run := store.RunRow{
		Org: "o_acme", RunID: "r_8f2", Process: "supplier-onboarding", Version: 3,
		State: "active", Mode: "live", Inputs: json.RawMessage(`{"vendorName": "Acme", "amount": 48000}`),
		StartedBy: "u_mira", StartedAt: at, UpdatedAt: at, Seq: 1,
	}
	work := []store.WorkRow{{StepID: "check_vendor", Kind: store.WorkAgent, ReadySince: at}}
	if _, err := s.UpsertRun(ctx, nil, run, work); err != nil {
		log.Fatal(err)
	}

	items, next, err := s.ListAgentWork(ctx, "o_acme", store.WorkFilter{}, 20, "")
	if err != nil {
		log.Fatal(err)
	}
	for _, w := range items {
		fmt.Println(w.RunID, w.StepID, w.ReadySince.UTC().Format(time.RFC3339))
	}
	runs, _, err := s.ListRuns(ctx, "o_acme", store.RunFilter{Inputs: json.RawMessage(`{"amount": 48000.0}`)}, 20, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(runs), "run with amount 48000.0; last page of work:", next == "")
	// Output:
	// r_8f2 check_vendor 2026-10-06T09:00:00Z
	// 1 run with amount 48000.0; last page of work: true
}
