package workflows_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/internal/testing/workertest"
	"github.com/baton-run/baton/interpreter"
	temporaldev "github.com/baton-run/baton/temporal-dev"
	"github.com/baton-run/baton/workflows"
)

var record = flag.Bool("record", false, "write the histories of the integration runs to testdata/")

const (
	org = "o_test"
	// identity is the integration client's identity, which Temporal records
	// on the cancellation requests it sends.
	identity = "sre@baton-test"
)

var (
	starter = interpreter.Actor{ID: "mira@example.com", Kind: interpreter.ActorPerson}
	agent   = interpreter.Actor{ID: "a_worker", Kind: interpreter.ActorAgent}
)

// dev is the test binary's one Temporal server, started on first use so
// that tests without it (replay, unit tests) never pay for it.
var dev struct {
	once sync.Once
	srv  *temporaldev.Server
	c    client.Client
	err  error
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if dev.c != nil {
		dev.c.Close()
	}
	if dev.srv != nil {
		_ = dev.srv.Stop()
	}
	pgtest.StopShared()
	os.Exit(code)
}

func temporalClient(tb testing.TB) client.Client {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: needs the embedded Temporal server and PostgreSQL")
	}
	dev.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		dev.srv, dev.err = temporaldev.Start(ctx, &temporaldev.Options{SearchAttributes: workflows.SearchAttributes})
		if dev.err != nil {
			return
		}
		dev.c, dev.err = dev.srv.NewClient(ctx, client.Options{Identity: identity, DataConverter: workflows.DataConverter})
	})
	if dev.err != nil {
		tb.Fatalf("start temporal-dev: %v", dev.err)
	}
	return dev.c
}

// harness is one test's worker on a fresh task queue, over a fresh read
// model database, and the workflows client that starts runs there.
type harness struct {
	t     testing.TB
	c     client.Client
	runs  *workflows.Client
	store *store.Store
	queue string
}

// setup starts a worker for ProcessRun and its activities on a fresh task
// queue over a fresh read model.
func setup(tb testing.TB) *harness {
	tb.Helper()
	return setupWith(tb, nil)
}

// setupWith is setup with the worker's options: an evaluator, more
// registrations. Nil options mean workertest's defaults.
func setupWith(tb testing.TB, o *workertest.Options) *harness {
	tb.Helper()
	return setupOn(tb, temporalClient(tb), o)
}

// setupOn is setupWith on the Temporal server c speaks to.
func setupOn(tb testing.TB, c client.Client, o *workertest.Options) *harness {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dbURL := pgtest.NewDatabase(tb)
	s, err := store.Open(ctx, dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	if _, err := s.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	w := workertest.New(tb, c, dbURL, o)
	return &harness{t: tb, c: c, runs: w.Runs, store: s, queue: w.Queue}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func ctxFor(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// driver returns a driver of runs of procs on the harness's worker that
// checks, after every write the run accepts, that the read model already
// shows it (read-your-writes).
func (h *harness) driver(t testing.TB, procs drive.Processes) *drive.Temporal {
	var mu sync.Mutex
	seqs := map[string]int64{}
	return drive.NewTemporal(h.runs, procs, &drive.TemporalOptions{Org: org, Wrote: func(ctx context.Context, runID, tool string, res json.RawMessage) {
		t.Helper()
		var v *interpreter.View
		switch tool {
		case "claim", "renew", "send_event":
			raw, err := h.runs.View(ctx, runID)
			if err != nil {
				t.Fatalf("view of %s: %v", runID, err)
			}
			v = decodeView(t, raw)
		default:
			v = decodeView(t, res)
		}
		// A renew and a held event change nothing the read model shows.
		quiet := tool == "renew" || (tool == "send_event" && string(res) == `{"consumedBy":null}`)
		mu.Lock()
		defer mu.Unlock()
		seq := seqs[runID]
		h.checkReadModel(t, runID, v, !quiet, &seq)
		seqs[runID] = seq
	}})
}

// checkReadModel asserts read-your-writes: the run's row and its work rows
// match the view, and (after a write) seq went up from *seq, which it
// updates.
func (h *harness) checkReadModel(t testing.TB, runID string, v *interpreter.View, wrote bool, seq *int64) {
	t.Helper()
	ctx := ctxFor(t)
	row, err := h.store.GetRun(ctx, org, runID)
	if err != nil {
		t.Fatalf("read model of %s: %v", runID, err)
	}
	if row.State != v.Run.State {
		t.Fatalf("read model state %s, view %s", row.State, v.Run.State)
	}
	if wrote && row.Seq <= *seq {
		t.Fatalf("read model seq %d after a write, was %d", row.Seq, *seq)
	}
	*seq = row.Seq
	work, err := h.store.RunWork(ctx, org, runID)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, w := range work {
		got = append(got, w.StepID+"/"+w.WorkItemID)
	}
	for _, s := range v.Steps {
		if s.Kind == interpreter.KindAgent && s.State != nil && *s.State == "ready" {
			want = append(want, s.ID+"/")
		}
	}
	for _, w := range v.WorkItems {
		want = append(want, w.StepID+"/"+w.ID)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("read model work %v, view %v", got, want)
	}
}

func decodeView(tb testing.TB, raw []byte) *interpreter.View {
	tb.Helper()
	var v interpreter.View
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		tb.Fatal(err)
	}
	return &v
}

// run is one workflow run, for tests that send updates of their own
// making through the Temporal client (update ids, histories).
type run struct {
	h        *harness
	id       string
	firstRun string
	p        *interpreter.Process
	n        int   // update ids handed out
	seq      int64 // the read model's seq after the last write
}

// start starts a run the way the gateway does, through the workflows
// client.
func (h *harness) start(p *interpreter.Process, inputs interpreter.Values) *run {
	h.t.Helper()
	ctx := ctxFor(h.t)
	rid := "req-" + randomHex(8)
	res, err := h.runs.StartRun(ctx, workflows.Input{Org: org, RequestID: rid, Digest: rid, Start: interpreter.Start{Process: p, Version: 1, Inputs: inputs, Starter: starter}})
	if err != nil {
		h.t.Fatalf("start %s: %v", p.Name, err)
	}
	spectest.Validate(h.t, "run-view.json", res)
	r := &run{h: h, id: workflows.RunID(org, rid), p: p}
	d, err := h.c.DescribeWorkflowExecution(ctx, r.id, "")
	if err != nil {
		h.t.Fatal(err)
	}
	r.firstRun = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	h.checkReadModel(h.t, r.id, decodeView(h.t, res), false, &r.seq)
	return r
}

// update sends one update and returns its answer or its failure.
func (r *run) update(name, updateID string, arg any) (workflows.Result, error) {
	ctx := ctxFor(r.h.t)
	uh, err := r.h.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: r.id, UpdateID: updateID, UpdateName: name, Args: []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return workflows.Result{}, err
	}
	var res workflows.Result
	err = uh.Get(ctx, &res)
	return res, err
}

// must sends an update that has to succeed, then checks that the read
// model already shows the write.
func (r *run) must(name string, arg any) workflows.Result {
	r.h.t.Helper()
	r.n++
	res, err := r.update(name, fmt.Sprintf("u%d", r.n), arg)
	if err != nil {
		r.h.t.Fatalf("%s %+v: %v", name, arg, err)
	}
	// A renew and a held event change nothing the read model shows.
	quiet := name == workflows.UpdateRenew || (name == workflows.UpdateSendEvent && string(res.Value) == `{"consumedBy":null}`)
	r.checkReadModel(r.view(), !quiet)
	return res
}

// checkReadModel checks the read model of the run against v (see
// harness.checkReadModel).
func (r *run) checkReadModel(v *interpreter.View, wrote bool) {
	r.h.t.Helper()
	r.h.checkReadModel(r.h.t, r.id, v, wrote, &r.seq)
}

// view queries the run view and validates it against the schema.
func (r *run) view() *interpreter.View {
	r.h.t.Helper()
	raw, err := r.h.runs.View(ctxFor(r.h.t), r.id)
	if err != nil {
		r.h.t.Fatalf("view of %s: %v", r.id, err)
	}
	spectest.Validate(r.h.t, "run-view.json", raw)
	return decodeView(r.h.t, raw)
}

func claimReq(step, lease string) workflows.Write {
	return workflows.Write{Digest: "claim " + lease, Command: interpreter.Claim{StepID: step, Actor: agent, LeaseID: lease, Lease: 10 * time.Minute}}
}

// submission satisfies an agent step that asks for link evidence at most.
func submission(s *interpreter.Step) interpreter.Submission {
	summary := "Did the work and checked it."
	sub := interpreter.Submission{Output: interpreter.Samples(s.Output), Summary: &summary}
	for _, k := range s.Evidence {
		sub.Evidence = append(sub.Evidence, interpreter.Evidence{Kind: k, Ref: "https://example.com/doc"})
	}
	if s.NextList {
		next, reason := s.Next[0].To, "It fits."
		sub.Next, sub.Reason = &next, &reason
	}
	return sub
}

// history reads the history of a run of a workflow.
func (h *harness) history(tb testing.TB, id, runID string) *historypb.History {
	tb.Helper()
	it := h.c.GetWorkflowHistory(ctxFor(tb), id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			tb.Fatal(err)
		}
		hist.Events = append(hist.Events, ev)
	}
	return hist
}

func (r *run) history(runID string) *historypb.History { return r.h.history(r.h.t, r.id, runID) }

// save writes a workflow's history to testdata/<name>.json under -record,
// in the format WorkflowReplayer.ReplayWorkflowHistoryFromJSONFile reads.
func (h *harness) save(tb testing.TB, id, name string) {
	h.saveRun(tb, id, "", name)
}

// saveRun is save for one run of the workflow ("" for its latest).
func (h *harness) saveRun(tb testing.TB, id, runID, name string) {
	if !*record {
		return
	}
	b, err := protojson.Marshal(h.history(tb, id, runID))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name+".json"), b, 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("recorded testdata/%s.json (%d bytes)", name, len(b))
}

// describe returns a workflow's status and search attributes.
func (h *harness) describe(tb testing.TB, id, runID string) (enumspb.WorkflowExecutionStatus, map[string]any) {
	tb.Helper()
	d, err := h.c.DescribeWorkflowExecution(ctxFor(tb), id, runID)
	if err != nil {
		tb.Fatal(err)
	}
	info := d.GetWorkflowExecutionInfo()
	attrs := map[string]any{}
	for k, p := range info.GetSearchAttributes().GetIndexedFields() {
		var v any
		if err := converter.GetDefaultDataConverter().FromPayload(p, &v); err != nil {
			tb.Fatal(err)
		}
		attrs[k] = v
	}
	return info.GetStatus(), attrs
}

func (r *run) describe(runID string) (enumspb.WorkflowExecutionStatus, map[string]any) {
	return r.h.describe(r.h.t, r.id, runID)
}

// wait waits for the workflow to close and returns its error.
func (r *run) wait() error {
	return r.h.c.GetWorkflow(ctxFor(r.h.t), r.id, "").Get(ctxFor(r.h.t), nil)
}
