package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/pgtest"
)

const org = "o_test"

var t0 = time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)

func run(id string, seq int64, started time.Time, inputs string) store.RunRow {
	return store.RunRow{
		Org: org, RunID: id, Process: "supplier-onboarding", Version: 3,
		State: "active", Mode: "live", Inputs: json.RawMessage(inputs),
		StartedBy: "u_mira", StartedAt: started, UpdatedAt: started, Seq: seq,
	}
}

func agentStep(step string, ready time.Time) store.WorkRow {
	return store.WorkRow{StepID: step, Kind: store.WorkAgent, ReadySince: ready}
}

func upsert(t *testing.T, b bundle, r store.RunRow, work ...store.WorkRow) bool {
	t.Helper()
	applied, err := b.store.UpsertRun(b.ctx, nil, r, work)
	if err != nil {
		t.Fatal(err)
	}
	return applied
}

func stepIDs(ws []store.WorkRow) []string {
	var ids []string
	for _, w := range ws {
		ids = append(ids, w.RunID+"/"+w.StepID)
	}
	return ids
}

func runIDs(rs []store.RunRow) []string {
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.RunID)
	}
	return ids
}

func TestUpsertRunSeqGuard(t *testing.T) {
	t.Parallel()
	b := setup(t)

	r := run("r_1", 5, t0, `{"vendorName":"Acme"}`)
	if !upsert(t, b, r, agentStep("check_vendor", t0)) {
		t.Fatal("first write not applied")
	}

	newer := r
	newer.Seq, newer.State, newer.UpdatedAt = 7, "waiting", t0.Add(time.Minute)
	if !upsert(t, b, newer) {
		t.Fatal("newer write not applied")
	}

	for _, seq := range []int64{6, 7} { // late, then repeated
		older := r
		older.Seq, older.State = seq, "stale"
		if upsert(t, b, older, agentStep("stale_step", t0)) {
			t.Fatalf("write with seq %d applied over seq 7", seq)
		}
	}

	got, err := b.store.GetRun(b.ctx, org, "r_1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Seq != 7 || got.State != "waiting" || !got.UpdatedAt.Equal(newer.UpdatedAt) {
		t.Fatalf("stored run = seq %d state %q updated %v, want the seq 7 write", got.Seq, got.State, got.UpdatedAt)
	}
	work, err := b.store.RunWork(b.ctx, org, "r_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(work) != 0 {
		t.Fatalf("work = %v, want none (the seq 7 write has none; older writes ignored)", stepIDs(work))
	}
}

// A workflow task that Temporal lost wrote its seq and its answer; the
// task ran again later and wrote the same seq with another time and
// answer. The later attempt, the one Temporal kept, wins; a straggler of
// the lost attempt arriving after it changes nothing.
func TestPublishRunLaterAttemptWins(t *testing.T) {
	t.Parallel()
	b := setup(t)
	publish := func(updated time.Time, state, answer string) bool {
		t.Helper()
		r := run("r_1", 3, t0, `{}`)
		r.State, r.UpdatedAt = state, updated
		applied, err := b.store.PublishRun(b.ctx, nil, &r, []store.WorkRow{agentStep(state, updated)},
			&store.Request{Org: org, RequestID: "req-1", Tool: "claim", Digest: "d", Result: json.RawMessage(answer)})
		if err != nil {
			t.Fatal(err)
		}
		return applied
	}
	check := func(state, answer string) {
		t.Helper()
		got, err := b.store.GetRun(b.ctx, org, "r_1")
		if err != nil {
			t.Fatal(err)
		}
		work, err := b.store.RunWork(b.ctx, org, "r_1")
		if err != nil {
			t.Fatal(err)
		}
		req, err := b.store.GetRequest(b.ctx, org, "req-1")
		if err != nil {
			t.Fatal(err)
		}
		if got.State != state || !slices.Equal(stepIDs(work), []string{"r_1/" + state}) || strings.ReplaceAll(string(req.Result), " ", "") != answer {
			t.Fatalf("run %s, work %v, answer %s; want %s, [r_1/%s], %s", got.State, stepIDs(work), req.Result, state, state, answer)
		}
	}
	if !publish(t0, "lost", `{"at":1}`) {
		t.Fatal("first attempt not applied")
	}
	if !publish(t0.Add(time.Second), "kept", `{"at":2}`) {
		t.Fatal("the later attempt at the same seq was not applied")
	}
	check("kept", `{"at":2}`)
	if publish(t0, "lost", `{"at":1}`) {
		t.Fatal("the lost attempt, arriving late, applied over the later one")
	}
	check("kept", `{"at":2}`)
	// Another call's requestId: the write stores nothing, its run's row
	// and work included, and the record is left as it was.
	r := run("r_1", 3, t0.Add(2*time.Second), `{}`)
	r.State = "other"
	if _, err := b.store.PublishRun(b.ctx, nil, &r, []store.WorkRow{agentStep("other", r.UpdatedAt)},
		&store.Request{Org: org, RequestID: "req-1", Tool: "claim", Digest: "other", Result: json.RawMessage(`{"at":3}`)}); !errors.Is(err, store.ErrRequestIDReused) {
		t.Fatalf("a write under another call's requestId: %v, want ErrRequestIDReused", err)
	}
	check("kept", `{"at":2}`)
}

// One requestId used by writes to 16 runs at once: exactly one of them is
// stored, the others store nothing and learn that the requestId was
// another call's.
func TestPublishRunRacingRequestIDStoresOne(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("r_%d", i)
			r := run(id, 2, t0, `{}`)
			_, errs[i] = b.store.PublishRun(b.ctx, nil, &r, []store.WorkRow{agentStep("s", t0)},
				&store.Request{Org: org, RequestID: "req-race", Tool: "claim", Digest: id, Result: json.RawMessage(`{"run":"` + id + `"}`), RunID: id})
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner < 0:
			winner = i
		case err == nil:
			t.Fatalf("runs %d and %d both stored their write", winner, i)
		case !errors.Is(err, store.ErrRequestIDReused):
			t.Fatalf("run %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no write was stored")
	}
	for i := range n {
		_, err := b.store.GetRun(b.ctx, org, fmt.Sprintf("r_%d", i))
		if (i == winner) != (err == nil) {
			t.Fatalf("run %d (winner %d): read model row: %v", i, winner, err)
		}
	}
	req, err := b.store.GetRequest(b.ctx, org, "req-race")
	if err != nil || req.Digest != fmt.Sprintf("r_%d", winner) || req.RunID != req.Digest {
		t.Fatalf("record %+v, %v; want run %d's", req, err, winner)
	}
}

func TestUpsertRunReplacesWork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	due := t0.Add(48 * time.Hour)

	r := run("r_1", 1, t0, `{}`)
	upsert(t, b, r, agentStep("a", t0), agentStep("b", t0.Add(time.Second)))

	r.Seq = 2
	item := store.WorkRow{
		StepID: "approve", WorkItemID: "w_31", Kind: store.WorkApprove, ReadySince: t0.Add(time.Minute),
		Due: &due, AssignedGroup: "g_finance", Item: json.RawMessage(`{"id":"w_31","stepId":"approve"}`),
	}
	retried := agentStep("b", t0.Add(2*time.Second))
	retried.Handoff = json.RawMessage(`{"progress":"half done"}`)
	upsert(t, b, r, retried, item)

	work, err := b.store.RunWork(b.ctx, org, "r_1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stepIDs(work), []string{"r_1/b", "r_1/approve"}; !slices.Equal(got, want) {
		t.Fatalf("work = %v, want %v", got, want)
	}
	w := work[0]
	if !w.ReadySince.Equal(retried.ReadySince) || string(w.Handoff) != `{"progress": "half done"}` ||
		w.Process != r.Process || w.Version != r.Version || w.Mode != r.Mode || w.Org != org {
		t.Fatalf("agent row = %+v", w)
	}
	w = work[1]
	if w.WorkItemID != "w_31" || w.Kind != store.WorkApprove || w.Due == nil || !w.Due.Equal(due) ||
		w.AssignedGroup != "g_finance" || w.AssignedPerson != "" || w.Handoff != nil || len(w.Item) == 0 {
		t.Fatalf("work item row = %+v", w)
	}

	r.Seq, r.State, r.Outcome = 3, "done", "approved"
	upsert(t, b, r)
	if work, _ := b.store.RunWork(b.ctx, org, "r_1"); len(work) != 0 {
		t.Fatalf("ended run still has work %v", stepIDs(work))
	}
	got, _ := b.store.GetRun(b.ctx, org, "r_1")
	if got.Outcome != "approved" {
		t.Fatalf("outcome = %q", got.Outcome)
	}
}

// A write that leaves a work row as it was writes no new version of it,
// nor locks it: a write on one branch of a wide run costs one row, not all
// of them. The changed row does change.
func TestUpsertRunLeavesUnchangedWork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	due := t0.Add(48 * time.Hour)
	handed := agentStep("b", t0.Add(time.Second))
	handed.Handoff = json.RawMessage(`{"progress": "half done"}`)
	rows := []store.WorkRow{
		agentStep("a", t0),
		handed,
		{
			StepID: "approve", WorkItemID: "w_31", Kind: store.WorkApprove, ReadySince: t0.Add(time.Minute),
			Due: &due, AssignedGroup: "g_finance", AlsoGroups: []string{"g_legal", "g_audit"},
			Item: json.RawMessage(`{"id": "w_31", "stepId": "approve"}`),
		},
		{
			StepID: "task", WorkItemID: "w_32", Kind: store.WorkTask, ReadySince: t0.Add(2 * time.Minute),
			AssignedPerson: "ann@example.com", Item: json.RawMessage(`{"id": "w_32"}`),
		},
	}
	r := run("r_1", 1, t0, `{"vendorName": "Acme"}`)
	upsert(t, b, r, rows...)
	versions := func() map[string]string {
		t.Helper()
		got := map[string]string{}
		q, err := b.store.Pool().Query(b.ctx, `SELECT step_id, xmin::text || '/' || xmax::text FROM work WHERE org = $1 AND run_id = 'r_1'`, org)
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		for q.Next() {
			var step, v string
			if err := q.Scan(&step, &v); err != nil {
				t.Fatal(err)
			}
			got[step] = v
		}
		if err := q.Err(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	before := versions()

	r.Seq, r.UpdatedAt = 2, t0.Add(time.Hour)
	rows[0].Handoff = json.RawMessage(`{"progress": "started"}`)
	if !upsert(t, b, r, rows...) {
		t.Fatal("write not applied")
	}
	after := versions()
	for _, step := range []string{"b", "approve", "task"} {
		if after[step] != before[step] {
			t.Errorf("unchanged row %s was rewritten: xmin/xmax %s, then %s", step, before[step], after[step])
		}
	}
	if after["a"] == before["a"] {
		t.Errorf("changed row a kept its version %s", before["a"])
	}
	work, err := b.store.RunWork(b.ctx, org, "r_1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stepIDs(work), []string{"r_1/a", "r_1/b", "r_1/approve", "r_1/task"}; !slices.Equal(got, want) {
		t.Fatalf("work = %v, want %v", got, want)
	}
	if string(work[0].Handoff) != `{"progress": "started"}` {
		t.Fatalf("changed row's handoff = %s", work[0].Handoff)
	}
}

// A run's inputs never change after its start, so a later write keeps the
// stored value instead of writing it again: large inputs live out of line
// (TOAST), and rewriting them cost every write of such a run a new copy.
func TestUpsertRunKeepsInputs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// 16 KB that compresses poorly, so PostgreSQL stores it out of line.
	var notes strings.Builder
	for i := 0; notes.Len() < 16<<10; i++ {
		fmt.Fprintf(&notes, "%x", sha256.Sum256([]byte(strconv.Itoa(i))))
	}
	inputs := `{"vendorName": "Acme", "notes": "` + notes.String() + `"}`
	r := run("r_1", 1, t0, inputs)
	upsert(t, b, r, agentStep("a", t0))
	chunk := func() int64 {
		t.Helper()
		// The run's table has one row, so its TOAST table holds that
		// row's values only: their ids tell a value kept from one written
		// again.
		var toast string
		if err := b.store.Pool().QueryRow(b.ctx, `SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'runs'::regclass`).Scan(&toast); err != nil {
			t.Fatal(err)
		}
		var ids []int64
		if err := b.store.Pool().QueryRow(b.ctx, `SELECT coalesce(array_agg(DISTINCT chunk_id::text::bigint), '{}') FROM `+toast).Scan(&ids); err != nil {
			t.Fatal(err)
		}
		if len(ids) != 1 {
			t.Fatalf("TOAST values %v: the test needs the inputs, and only them, out of line", ids)
		}
		return ids[0]
	}
	before := chunk()
	r.Seq, r.State = 2, "waiting"
	if !upsert(t, b, r) {
		t.Fatal("write not applied")
	}
	if after := chunk(); after != before {
		t.Errorf("inputs written again: TOAST value %d, then %d", before, after)
	}
	got, err := b.store.GetRun(b.ctx, org, "r_1")
	if err != nil {
		t.Fatal(err)
	}
	var want, have any
	_ = json.Unmarshal([]byte(inputs), &want)
	if err := json.Unmarshal(got.Inputs, &have); err != nil || !reflect.DeepEqual(have, want) || got.State != "waiting" {
		t.Fatalf("run = state %s, inputs of %d bytes (err %v)", got.State, len(got.Inputs), err)
	}
}

// UpsertRun nests in a caller's transaction: rolling that back undoes it.
func TestUpsertRunInCallerTx(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tx, err := b.store.Pool().Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.UpsertRun(b.ctx, tx, run("r_1", 1, t0, `{}`), []store.WorkRow{agentStep("a", t0)}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(b.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.GetRun(b.ctx, org, "r_1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetRun after rollback: err = %v, want ErrNotFound", err)
	}
}

func TestUpsertRunRejectsBadWork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	bad := store.WorkRow{StepID: "approve", Kind: store.WorkApprove, ReadySince: t0} // no assignee, no item id
	if _, err := b.store.UpsertRun(b.ctx, nil, run("r_1", 1, t0, `{}`), []store.WorkRow{bad}); err == nil {
		t.Fatal("work item without id or assignee accepted")
	}
	if _, err := b.store.GetRun(b.ctx, org, "r_1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a failed write left the run row behind (err = %v)", err)
	}
}

func TestListAgentWorkOldestFirstAndPaging(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Seven ready steps over five runs, written out of order; two share a
	// ready-since time, so run and step ids break the tie.
	upsert(t, b, run("r_c", 1, t0, `{}`), agentStep("s1", t0.Add(3*time.Minute)))
	upsert(t, b, run("r_a", 1, t0, `{}`), agentStep("s2", t0.Add(1*time.Minute)), agentStep("s1", t0.Add(1*time.Minute)))
	upsert(t, b, run("r_b", 1, t0, `{}`), agentStep("s1", t0.Add(1*time.Minute)))
	upsert(t, b, run("r_d", 1, t0, `{}`), agentStep("s1", t0))
	other := run("r_e", 1, t0, `{}`)
	other.Process = "other"
	upsert(t, b, other, agentStep("s1", t0.Add(2*time.Minute)), agentStep("s2", t0.Add(4*time.Minute)))
	// Work items are not agent work.
	upsert(t, b, run("r_f", 1, t0, `{}`), store.WorkRow{StepID: "approve", WorkItemID: "w_1",
		Kind: store.WorkApprove, ReadySince: t0, AssignedGroup: "g"})

	want := []string{"r_d/s1", "r_a/s1", "r_a/s2", "r_b/s1", "r_e/s1", "r_c/s1", "r_e/s2"}
	var got []string
	cursor, pages := "", 0
	for {
		items, next, err := b.store.ListAgentWork(b.ctx, org, store.WorkFilter{}, 3, cursor)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		got = append(got, stepIDs(items)...)
		if next == "" {
			break
		}
		cursor = next
	}
	if !slices.Equal(got, want) || pages != 3 {
		t.Fatalf("over %d pages got %v, want 3 pages of %v", pages, got, want)
	}

	items, next, err := b.store.ListAgentWork(b.ctx, org, store.WorkFilter{Process: "other"}, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stepIDs(items), []string{"r_e/s1", "r_e/s2"}; !slices.Equal(got, want) || next != "" {
		t.Fatalf("process filter: got %v next %q, want %v and no next", got, next, want)
	}

	// An exactly full last page has no next cursor.
	items, next, _ = b.store.ListAgentWork(b.ctx, org, store.WorkFilter{}, 7, "")
	if len(items) != 7 || next != "" {
		t.Fatalf("limit 7 of 7: %d items, next %q", len(items), next)
	}
	// Another organization sees nothing.
	items, _, _ = b.store.ListAgentWork(b.ctx, "o_other", store.WorkFilter{}, 10, "")
	if len(items) != 0 {
		t.Fatalf("another org sees %v", stepIDs(items))
	}
}

func TestListPersonWork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	item := func(step, id string, ready time.Time, group, person string) store.WorkRow {
		return store.WorkRow{StepID: step, WorkItemID: id, Kind: store.WorkTask, ReadySince: ready,
			AssignedGroup: group, AssignedPerson: person}
	}
	upsert(t, b, run("r_1", 1, t0, `{}`),
		item("approve", "w_1", t0.Add(2*time.Minute), "g_finance", ""),
		item("sign", "w_2", t0.Add(1*time.Minute), "", "mira@example.com"),
		agentStep("check", t0))
	r2 := run("r_2", 1, t0, `{}`)
	r2.Process = "other"
	upsert(t, b, r2,
		item("approve", "w_3", t0.Add(3*time.Minute), "g_legal", ""),
		item("both", "w_4", t0.Add(4*time.Minute), "g_finance", "mira@example.com"),
		item("other", "w_5", t0, "", "ops@example.com"),
		// A tool-call approval three groups may decide; it shows the first.
		store.WorkRow{StepID: "call", WorkItemID: "w_6", Kind: store.WorkApprove, ReadySince: t0.Add(5 * time.Minute),
			AssignedGroup: "g_finance_leads", AlsoGroups: []string{"g_cfo", "g_legal"}})

	cases := []struct {
		name   string
		email  string
		groups []string
		want   []string
	}{
		{"by email and group", "mira@example.com", []string{"g_finance"}, []string{"r_1/sign", "r_1/approve", "r_2/both"}},
		{"by email only", "mira@example.com", nil, []string{"r_1/sign", "r_2/both"}},
		{"by groups only", "nobody@example.com", []string{"g_legal", "g_finance"}, []string{"r_1/approve", "r_2/approve", "r_2/both", "r_2/call"}},
		{"nothing", "nobody@example.com", []string{"g_none"}, nil},
		{"repeated group", "nobody@example.com", []string{"g_finance", "g_finance"}, []string{"r_1/approve", "r_2/both"}},
		{"by the first of several groups", "nobody@example.com", []string{"g_finance_leads"}, []string{"r_2/call"}},
		{"by a further group", "nobody@example.com", []string{"g_cfo"}, []string{"r_2/call"}},
		{"by the first and a further group", "nobody@example.com", []string{"g_cfo", "g_finance_leads"}, []string{"r_2/call"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			cursor := ""
			for {
				items, next, err := b.store.ListPersonWork(b.ctx, org, c.email, c.groups, store.WorkFilter{}, 2, cursor)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, stepIDs(items)...)
				if next == "" {
					break
				}
				cursor = next
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
	items, _, err := b.store.ListPersonWork(b.ctx, org, "mira@example.com", []string{"g_finance"}, store.WorkFilter{Process: "other"}, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stepIDs(items), []string{"r_2/both"}; !slices.Equal(got, want) {
		t.Fatalf("process filter: got %v, want %v", got, want)
	}
	work, err := b.store.RunWork(b.ctx, org, "r_2")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range work {
		if want := map[string][]string{"call": {"g_cfo", "g_legal"}}[w.StepID]; !slices.Equal(w.AlsoGroups, want) {
			t.Errorf("%s: also groups %v, want %v", w.StepID, w.AlsoGroups, want)
		}
	}
}

func TestListRunsPagingAndFilters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 8 {
		r := run(fmt.Sprintf("r_%d", i), 1, t0.Add(time.Duration(i%4)*time.Minute), `{}`)
		if i%2 == 1 {
			r.State = "waiting"
		}
		if i >= 6 {
			r.Process = "other"
		}
		upsert(t, b, r)
	}
	list := func(f store.RunFilter, limit int) (ids []string, pages int) {
		cursor := ""
		for {
			items, next, err := b.store.ListRuns(b.ctx, org, f, limit, cursor)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			ids = append(ids, runIDs(items)...)
			if next == "" {
				return ids, pages
			}
			cursor = next
		}
	}
	// Started at minute i%4: ties broken by run id.
	if got, pages := list(store.RunFilter{}, 3); !slices.Equal(got, []string{"r_0", "r_4", "r_1", "r_5", "r_2", "r_6", "r_3", "r_7"}) || pages != 3 {
		t.Fatalf("all runs over %d pages: %v", pages, got)
	}
	if got, _ := list(store.RunFilter{State: "waiting"}, 3); !slices.Equal(got, []string{"r_1", "r_5", "r_3", "r_7"}) {
		t.Fatalf("waiting: %v", got)
	}
	if got, _ := list(store.RunFilter{Process: "other"}, 3); !slices.Equal(got, []string{"r_6", "r_7"}) {
		t.Fatalf("process other: %v", got)
	}
	if got, _ := list(store.RunFilter{Process: "supplier-onboarding", State: "waiting"}, 1); !slices.Equal(got, []string{"r_1", "r_5", "r_3"}) {
		t.Fatalf("process and state: %v", got)
	}
}

func TestListRunsInputsEquality(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inputs := map[string]string{
		"r_int":    `{"vendorName": "Acme", "amount": 48000}`,
		"r_float":  `{"vendorName": "Acme", "amount": 48000.0}`,
		"r_other":  `{"vendorName": "Acme Ltd", "amount": 48000}`,
		"r_nested": `{"vendorName": "Beta", "tags": ["a", "b"], "address": {"city": "Oslo", "zip": "0150"}}`,
		"r_null":   `{"vendorName": null}`,
		"r_none":   `{}`,
	}
	i := 0
	for id, in := range inputs {
		upsert(t, b, run(id, 1, t0.Add(time.Duration(i)*time.Second), in))
		i++
	}
	cases := []struct {
		name   string
		filter string
		want   []string
	}{
		{"string", `{"vendorName": "Acme"}`, []string{"r_float", "r_int"}},
		{"string is exact, not prefix or case-folded", `{"vendorName": "acme"}`, nil},
		// JSONB compares numbers by value: 48000, 48000.0 and 4.8e4 are equal.
		{"number", `{"amount": 48000}`, []string{"r_float", "r_int", "r_other"}},
		{"number written as float", `{"amount": 48000.0}`, []string{"r_float", "r_int", "r_other"}},
		{"number in exponent form", `{"amount": 4.8e4}`, []string{"r_float", "r_int", "r_other"}},
		{"number is not a string", `{"amount": "48000"}`, nil},
		{"two fields", `{"vendorName": "Acme Ltd", "amount": 48000}`, []string{"r_other"}},
		{"array equal", `{"tags": ["a", "b"]}`, []string{"r_nested"}},
		// Containment would match these; equality does not.
		{"array subset", `{"tags": ["a"]}`, nil},
		{"array reordered", `{"tags": ["b", "a"]}`, nil},
		{"object subset", `{"address": {"city": "Oslo"}}`, nil},
		{"object equal, keys reordered", `{"address": {"zip": "0150", "city": "Oslo"}}`, []string{"r_nested"}},
		{"null matches null, not absent", `{"vendorName": null}`, []string{"r_null"}},
		{"empty filter", `{}`, []string{"r_float", "r_int", "r_nested", "r_none", "r_null", "r_other"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			items, _, err := b.store.ListRuns(b.ctx, org, store.RunFilter{Inputs: json.RawMessage(c.filter)}, 100, "")
			if err != nil {
				t.Fatal(err)
			}
			got := runIDs(items)
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("filter %s: got %v, want %v", c.filter, got, c.want)
			}
		})
	}
	if _, _, err := b.store.ListRuns(b.ctx, org, store.RunFilter{Inputs: json.RawMessage(`[1]`)}, 10, ""); err == nil {
		t.Fatal("a non-object inputs filter was accepted")
	}
}

// A filter on inputs finds runs whatever their state has become since they
// started, pages oldest first, and combines with the process and state
// filters, with and without a page cut before the state is read.
func TestListRunsInputsAcrossStateChanges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 8 {
		in := `{"vendorName": "Acme", "region": "eu"}`
		if i%4 == 3 {
			in = `{"vendorName": "Beta", "region": "eu"}`
		}
		if i == 7 {
			in = `{}`
		}
		r := run(fmt.Sprintf("r_%d", i), 1, t0.Add(time.Duration(i)*time.Minute), in)
		if i >= 4 {
			r.Process = "other"
		}
		upsert(t, b, r)
		// Every other run moves on to waiting, and r_3 on to ended.
		var states []string
		if i%2 == 1 {
			states = append(states, "waiting")
		}
		if i == 3 {
			states = append(states, "ended")
		}
		for _, state := range states {
			r.Seq, r.State = r.Seq+1, state
			r.UpdatedAt = r.UpdatedAt.Add(time.Second)
			upsert(t, b, r)
		}
	}
	states := map[string]string{}
	all, _, err := b.store.ListRuns(b.ctx, org, store.RunFilter{}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		states[r.RunID] = r.State
	}
	list := func(f store.RunFilter, limit int) (ids []string) {
		t.Helper()
		cursor := ""
		for {
			items, next, err := b.store.ListRuns(b.ctx, org, f, limit, cursor)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range items {
				if r.State != states[r.RunID] || len(r.Inputs) == 0 {
					t.Errorf("%s listed as %s with inputs %s, want its row as stored (%s)", r.RunID, r.State, r.Inputs, states[r.RunID])
				}
			}
			ids = append(ids, runIDs(items)...)
			if next == "" {
				return ids
			}
			cursor = next
		}
	}
	acme := json.RawMessage(`{"vendorName": "Acme"}`)
	for _, c := range []struct {
		name string
		f    store.RunFilter
		want []string
	}{
		{"inputs", store.RunFilter{Inputs: acme}, []string{"r_0", "r_1", "r_2", "r_4", "r_5", "r_6"}},
		{"inputs and process", store.RunFilter{Inputs: acme, Process: "other"}, []string{"r_4", "r_5", "r_6"}},
		{"inputs and state", store.RunFilter{Inputs: acme, State: "waiting"}, []string{"r_1", "r_5"}},
		{"inputs, process and state", store.RunFilter{Inputs: acme, Process: "other", State: "active"}, []string{"r_4", "r_6"}},
		{"inputs of a run that ended", store.RunFilter{Inputs: json.RawMessage(`{"vendorName": "Beta"}`)}, []string{"r_3"}},
		{"region", store.RunFilter{Inputs: json.RawMessage(`{"region": "eu"}`)}, []string{"r_0", "r_1", "r_2", "r_3", "r_4", "r_5", "r_6"}},
	} {
		for _, limit := range []int{1, 2, 100} {
			if got := list(c.f, limit); !slices.Equal(got, c.want) {
				t.Errorf("%s, %d a page: %v, want %v", c.name, limit, got, c.want)
			}
		}
	}
	if states["r_3"] != "ended" || states["r_5"] != "waiting" {
		t.Fatalf("the runs did not move on as the test needs: %v", states)
	}
}

// A run's inputs are indexed once, when its row is first written: no
// index of runs covers them, and a later write, a state change too,
// leaves the run's row in run_inputs as it was.
func TestStateChangeLeavesInputsIndexAlone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var n int
	err := b.store.Pool().QueryRow(b.ctx, `
SELECT count(*) FROM pg_index x JOIN pg_attribute a ON a.attrelid = x.indrelid
WHERE x.indrelid = 'runs'::regclass AND a.attname = 'inputs'
  AND (a.attnum = ANY (x.indkey::int2[]) OR pg_get_indexdef(x.indexrelid) LIKE '%inputs%')`).Scan(&n)
	if err != nil || n != 0 {
		t.Fatalf("%d indexes of runs cover inputs (err %v), want none", n, err)
	}
	r := run("r_1", 1, t0, `{"vendorName": "Acme", "amount": 48000}`)
	upsert(t, b, r, agentStep("a", t0))
	upsert(t, b, run("r_empty", 1, t0, `{}`))
	version := func() (xmin string, rows int) {
		t.Helper()
		if err := b.store.Pool().QueryRow(b.ctx, `SELECT min(xmin::text), count(*) FROM run_inputs`).Scan(&xmin, &rows); err != nil {
			t.Fatal(err)
		}
		return xmin, rows
	}
	before, rows := version()
	if rows != 1 {
		t.Fatalf("run_inputs holds %d rows, want the one run with inputs", rows)
	}
	for seq, state := range []string{"waiting", "active", "ended"} {
		r.Seq, r.State = int64(seq+2), state
		upsert(t, b, r)
	}
	if after, rows := version(); after != before || rows != 1 {
		t.Errorf("run_inputs row version %s (%d rows) after the state changes, want %s (1)", after, rows, before)
	}
}

// Runs written before run_inputs existed are found by their inputs once
// the migration that adds it has run, and answers recorded before answers
// became json still replay.
func TestMigrateRunInputsBackfills(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := store.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	const before = 11 // the schema version before run_inputs
	_, err = s.Pool().Exec(ctx, `CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
	for _, m := range ms[:before] {
		if err == nil {
			_, err = s.Pool().Exec(ctx, m.SQL)
		}
		if err == nil {
			_, err = s.Pool().Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	// Written as a worker of that schema wrote them: today's UpsertRun
	// writes columns of later migrations.
	for i, in := range []string{`{"vendorName": "Acme"}`, `{}`, `{"vendorName": "Acme", "amount": 1}`} {
		r := run(fmt.Sprintf("r_%d", i), 1, t0.Add(time.Duration(i)*time.Minute), in)
		if _, err := s.Pool().Exec(ctx, `INSERT INTO runs (org, run_id, process, version, state, mode, inputs, started_by, started_at, updated_at, seq)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, r.Org, r.RunID, r.Process, r.Version, r.State, r.Mode, r.Inputs, r.StartedBy, r.StartedAt, r.UpdatedAt, r.Seq); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordAnswer(ctx, nil, store.Request{Org: org, RequestID: "q_1", Tool: "claim", Digest: "01", Result: json.RawMessage(`{"b":1,"a":[true]}`)}); err != nil {
		t.Fatal(err)
	}
	applied, err := s.Migrate(ctx)
	if err != nil || !slices.Contains(applied, before+1) {
		t.Fatalf("Migrate applied %v (err %v), want %d among them", applied, err, before+1)
	}
	items, _, err := s.ListRuns(ctx, org, store.RunFilter{Inputs: json.RawMessage(`{"vendorName": "Acme"}`)}, 10, "")
	if got := runIDs(items); err != nil || !slices.Equal(got, []string{"r_0", "r_2"}) {
		t.Fatalf("listed %v (err %v), want the two runs with that input", got, err)
	}
	q, err := s.GetRequest(ctx, org, "q_1")
	var answer map[string]any
	if err == nil {
		err = json.Unmarshal(q.Result, &answer)
	}
	if err != nil || !reflect.DeepEqual(answer, map[string]any{"a": []any{true}, "b": 1.0}) {
		t.Fatalf("the answer recorded before: %s (err %v)", q.Result, err)
	}
}

func TestBadCursor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 3 {
		upsert(t, b, run(fmt.Sprintf("r_%d", i), 1, t0, `{}`), agentStep("s", t0))
	}
	_, workNext, err := b.store.ListAgentWork(b.ctx, org, store.WorkFilter{}, 1, "")
	if err != nil || workNext == "" {
		t.Fatalf("first page: next %q, err %v", workNext, err)
	}
	_, runsNext, err := b.store.ListRuns(b.ctx, org, store.RunFilter{}, 1, "")
	if err != nil || runsNext == "" {
		t.Fatalf("first page: next %q, err %v", runsNext, err)
	}

	for _, c := range []string{"garbage!", "e30", "bm90IGpzb24", workNext[:len(workNext)-2], runsNext} {
		if _, _, err := b.store.ListAgentWork(b.ctx, org, store.WorkFilter{}, 1, c); !errors.Is(err, store.ErrBadCursor) {
			t.Errorf("ListAgentWork(cursor %q): err = %v, want ErrBadCursor", c, err)
		}
		if _, _, err := b.store.ListPersonWork(b.ctx, org, "x@example.com", nil, store.WorkFilter{}, 1, c); !errors.Is(err, store.ErrBadCursor) {
			t.Errorf("ListPersonWork(cursor %q): err = %v, want ErrBadCursor", c, err)
		}
	}
	if _, _, err := b.store.ListRuns(b.ctx, org, store.RunFilter{}, 1, workNext); !errors.Is(err, store.ErrBadCursor) {
		t.Errorf("ListRuns(work cursor): err = %v, want ErrBadCursor", err)
	}
	if _, _, err := b.store.ListRuns(b.ctx, org, store.RunFilter{}, 0, ""); err == nil {
		t.Error("limit 0 accepted")
	}
}

// Writers racing for one run, in any order, leave the highest seq's row and
// exactly its work: the run row's lock orders them, and the work statement
// sees what earlier writers committed.
func TestUpsertRunConcurrentWriters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const writers = 20
	errs := make(chan error, writers)
	for i := range writers {
		go func() {
			r := run("r_1", int64(i+1), t0, `{}`)
			r.State = fmt.Sprintf("s%d", i+1)
			// Each write has a step of its own, so a leftover row shows.
			_, err := b.store.UpsertRun(b.ctx, nil, r, []store.WorkRow{agentStep(fmt.Sprintf("step_%d", i+1), t0)})
			errs <- err
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.store.GetRun(b.ctx, org, "r_1")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("s%d", writers)
	if got.Seq != writers || got.State != want {
		t.Fatalf("run = seq %d state %s, want seq %d state %s", got.Seq, got.State, writers, want)
	}
	work, _ := b.store.RunWork(b.ctx, org, "r_1")
	if ids := stepIDs(work); !slices.Equal(ids, []string{fmt.Sprintf("r_1/step_%d", writers)}) {
		t.Fatalf("work = %v, want only the last writer's step", ids)
	}
}

func TestFinalView(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	r := run("r_final", 1, time.Now(), `{}`)
	upsert(t, b, r)
	if v, err := b.store.FinalView(ctx, org, "r_final"); err != nil || v != nil {
		t.Fatalf("final view of a running run: %s %v", v, err)
	}
	r.Seq, r.State, r.FinalView = 2, "ended", json.RawMessage(`{"run":{"state":"ended","b":1,"a":2}}`)
	upsert(t, b, r)
	v, err := b.store.FinalView(ctx, org, "r_final")
	if err != nil || string(v) != `{"run":{"state":"ended","b":1,"a":2}}` {
		t.Fatalf("final view %s %v, want it byte for byte", v, err)
	}
	if _, err := b.store.FinalView(ctx, org, "r_none"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing run: %v", err)
	}
}

// Sixteen writers racing to write a run first, in each of two
// organizations with the same run id and inputs, leave one run_inputs row
// a run, and a filter on inputs finds each organization's run alone.
func TestRunInputsRacingFirstWritesAndOrganizations(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const writers = 16
	errs := make(chan error, 2*writers)
	for _, o := range []string{org, "o_other"} {
		for i := range writers {
			go func() {
				r := run("r_1", int64(i+1), t0, `{"vendorName": "Acme"}`)
				r.Org = o
				_, err := b.store.UpsertRun(b.ctx, nil, r, nil)
				errs <- err
			}()
		}
	}
	for range 2 * writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var rows int
	if err := b.store.Pool().QueryRow(b.ctx, `SELECT count(*) FROM run_inputs`).Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("run_inputs holds %d rows (err %v), want one for each organization's run", rows, err)
	}
	for _, o := range []string{org, "o_other"} {
		for _, f := range []store.RunFilter{{Inputs: json.RawMessage(`{"vendorName": "Acme"}`)}, {Inputs: json.RawMessage(`{"vendorName": "Acme"}`), State: "active"}} {
			items, _, err := b.store.ListRuns(b.ctx, o, f, 10, "")
			if err != nil || len(items) != 1 || items[0].Org != o || items[0].Seq != writers {
				t.Fatalf("%s, state %q: %+v (err %v), want its own run at seq %d", o, f.State, items, err, writers)
			}
		}
	}
}

// A child run's row names its parent and step, which later writes keep;
// list_runs with parent lists a parent's children (in the caller's
// organization only), oldest first, paged, with the other filters.
func TestListRunsByParent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 6 {
		r := run(fmt.Sprintf("r_c%d", i), 1, t0.Add(time.Duration(i)*time.Minute), fmt.Sprintf(`{"n": %d}`, i%2))
		r.Process = "screening"
		r.Parent, r.ParentStep = "r_p", "screen_each"
		if i == 5 {
			r.Parent = "r_other"
		}
		if i%3 == 2 {
			r.State = "ended"
		}
		upsert(t, b, r)
	}
	upsert(t, b, run("r_p", 1, t0, `{}`))
	later := run("r_c0", 2, t0, `{"n": 0}`)
	later.Process, later.State = "screening", "waiting"
	upsert(t, b, later)
	other := run("r_c9", 1, t0, `{}`)
	other.Org, other.Parent = "o_other", "r_p"
	upsert(t, b, other)
	list := func(f store.RunFilter, limit int) []string {
		t.Helper()
		var ids []string
		cursor := ""
		for {
			items, next, err := b.store.ListRuns(b.ctx, org, f, limit, cursor)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, runIDs(items)...)
			if next == "" {
				return ids
			}
			cursor = next
		}
	}
	for _, c := range []struct {
		f    store.RunFilter
		want []string
	}{
		{store.RunFilter{Parent: "r_p"}, []string{"r_c0", "r_c1", "r_c2", "r_c3", "r_c4"}},
		{store.RunFilter{Parent: "r_p", State: "ended"}, []string{"r_c2"}},
		{store.RunFilter{Parent: "r_p", Inputs: json.RawMessage(`{"n": 1}`)}, []string{"r_c1", "r_c3"}},
		{store.RunFilter{Parent: "r_p", Process: "other"}, nil},
		{store.RunFilter{Parent: "r_c0"}, nil},
	} {
		if got := list(c.f, 2); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %v, want %v", c.f, got, c.want)
		}
	}
	row, err := b.store.GetRun(b.ctx, org, "r_c0")
	if err != nil || row.Parent != "r_p" || row.ParentStep != "screen_each" || row.State != "waiting" {
		t.Fatalf("r_c0 after a later write: %+v, %v", row, err)
	}
	if row, _ := b.store.GetRun(b.ctx, org, "r_p"); row.Parent != "" {
		t.Fatalf("a run start_run started has parent %q", row.Parent)
	}
}
