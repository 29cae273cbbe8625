package workflows_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/baton-run/baton/activities"
	"github.com/baton-run/baton/gateway/store"
	"github.com/baton-run/baton/internal/pgtest"
	"github.com/baton-run/baton/internal/spectest"
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
// model database.
type harness struct {
	t     testing.TB
	c     client.Client
	store *store.Store
	queue string
}

// setup starts a worker for ProcessRun and its activities, plus whatever
// extra registers, on a fresh task queue.
func setup(tb testing.TB, extra ...func(worker.Registry)) *harness {
	tb.Helper()
	c := temporalClient(tb)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := store.Open(ctx, pgtest.NewDatabase(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	if _, err := s.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	acts, err := activities.New(s, c, nil)
	if err != nil {
		tb.Fatal(err)
	}
	queue := "q-" + randomHex(6)
	w := worker.New(c, queue, worker.Options{})
	workflows.Register(w)
	acts.Register(w)
	for _, f := range extra {
		f(w)
	}
	if err := w.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(w.Stop)
	return &harness{t: tb, c: c, store: s, queue: queue}
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

func fixture(tb testing.TB, name string) *interpreter.Process {
	tb.Helper()
	o := interpreter.DefaultOffer()
	o.Profiles = []string{interpreter.ProfileParallel, interpreter.ProfileCheck}
	p, err := interpreter.Parse(spectest.Fixture(tb, name), &interpreter.ParseOptions{Folder: name, Offer: &o})
	if err != nil {
		tb.Fatalf("parse %s: %v", name, err)
	}
	return p
}

// run is one workflow run driven through the Temporal client.
type run struct {
	h        *harness
	id       string
	firstRun string
	p        *interpreter.Process
	n        int   // update ids handed out
	seq      int64 // the read model's seq after the last write

	// routes chooses the next step of an agent step with a next list
	// (default: the first); signal delivers awaited events by the event
	// signal rather than the send_event update.
	routes map[string]string
	signal bool
}

var starter = interpreter.Actor{ID: "mira@example.com", Kind: interpreter.ActorPerson}

// start starts a run the way the gateway does: update-with-start, with the
// start update answering the first view.
func (h *harness) start(p *interpreter.Process, inputs interpreter.Values) *run {
	h.t.Helper()
	r := &run{h: h, id: "r_" + randomHex(8), p: p}
	in := workflows.Input{
		Org: org, RunID: r.id, Process: p, Version: 1, Inputs: inputs,
		Mode: interpreter.ModeLive, Starter: starter,
	}
	ctx := ctxFor(h.t)
	op := h.c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID:                       r.id,
		TaskQueue:                h.queue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		StaticSummary:            fmt.Sprintf("%s v1 (live)", p.Name),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword(workflows.SearchProcess).ValueSet(p.Name),
			temporal.NewSearchAttributeKeyInt64(workflows.SearchVersion).ValueSet(1),
			temporal.NewSearchAttributeKeyKeyword(workflows.SearchMode).ValueSet(interpreter.ModeLive),
			temporal.NewSearchAttributeKeyKeyword(workflows.SearchState).ValueSet("active"),
		),
	}, workflows.WorkflowName, in)
	uh, err := h.c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateID: "start-" + r.id, UpdateName: workflows.UpdateStart,
			WaitForStage: client.WorkflowUpdateStageCompleted,
			Args:         []any{workflows.StartRequest{Digest: "start"}},
		},
	})
	if err != nil {
		h.t.Fatalf("start %s: %v", p.Name, err)
	}
	var res workflows.Result
	if err := uh.Get(ctx, &res); err != nil {
		h.t.Fatalf("start %s: %v", p.Name, err)
	}
	if res.Digest != "start" {
		h.t.Fatalf("start answered digest %q", res.Digest)
	}
	spectest.Validate(h.t, "run-view.json", res.Value)
	wr, err := op.Get(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	r.firstRun = wr.GetRunID()
	r.checkReadModel(decodeView(h.t, res.Value), false)
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

func (r *run) nextID() string {
	r.n++
	return fmt.Sprintf("u%d", r.n)
}

// must sends an update that has to succeed, then checks that the read
// model already shows the write.
func (r *run) must(name string, arg any) workflows.Result {
	r.h.t.Helper()
	res, err := r.update(name, r.nextID(), arg)
	if err != nil {
		r.h.t.Fatalf("%s %+v: %v", name, arg, err)
	}
	// A renew and a held event change nothing the read model shows.
	quiet := name == workflows.UpdateRenew || (name == workflows.UpdateSendEvent && string(res.Value) == `{"consumedBy":null}`)
	r.checkReadModel(r.view(), !quiet)
	return res
}

// view queries the run view and validates it against the schema.
func (r *run) view() *interpreter.View {
	r.h.t.Helper()
	q, err := r.h.c.QueryWorkflow(ctxFor(r.h.t), r.id, "", workflows.QueryView)
	if err != nil {
		r.h.t.Fatalf("query %s: %v", r.id, err)
	}
	var raw json.RawMessage
	if err := q.Get(&raw); err != nil {
		r.h.t.Fatal(err)
	}
	spectest.Validate(r.h.t, "run-view.json", raw)
	return decodeView(r.h.t, raw)
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

// checkReadModel asserts read-your-writes: the run's row and its work rows
// match the view, and (after a write) seq went up.
func (r *run) checkReadModel(v *interpreter.View, wrote bool) {
	t := r.h.t
	t.Helper()
	ctx := ctxFor(t)
	row, err := r.h.store.GetRun(ctx, org, r.id)
	if err != nil {
		t.Fatalf("read model of %s: %v", r.id, err)
	}
	if row.State != v.Run.State {
		t.Fatalf("read model state %s, view %s", row.State, v.Run.State)
	}
	if wrote && row.Seq <= r.seq {
		t.Fatalf("read model seq %d after a write, was %d", row.Seq, r.seq)
	}
	r.seq = row.Seq
	work, err := r.h.store.RunWork(ctx, org, r.id)
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

// sampleValue returns a value that satisfies f.
func sampleValue(f *interpreter.Field, name string) any {
	if len(f.OneOf) > 0 {
		return f.OneOf[0]
	}
	switch f.Type {
	case interpreter.TypeString:
		return "some " + name
	case interpreter.TypeNumber:
		return json.Number("4800.50")
	case interpreter.TypeBoolean:
		return true
	case interpreter.TypeDate:
		return "2026-10-07"
	case interpreter.TypeDatetime:
		return "2026-10-06T10:00:00Z"
	case interpreter.TypeList:
		if f.Items != nil {
			return []any{sampleValue(f.Items, name)}
		}
		return []any{"one"}
	case interpreter.TypeObject:
		return map[string]any{"k": "v"}
	case interpreter.TypePerson:
		return name + "@example.com"
	}
	return nil
}

func sampleValues(fs interpreter.Fields) interpreter.Values {
	out := interpreter.Values{}
	for _, f := range fs {
		out[f.Name] = sampleValue(f, f.Name)
	}
	return out
}

// sampleSubmission satisfies every rule of an agent or task step (link
// evidence only).
func sampleSubmission(s *interpreter.Step) interpreter.Submission {
	summary := "Did the work and checked it."
	sub := interpreter.Submission{Output: sampleValues(s.Output), Summary: &summary}
	for _, k := range s.Evidence {
		sub.Evidence = append(sub.Evidence, interpreter.Evidence{Kind: k, Ref: "https://example.com/doc"})
	}
	if s.NextList {
		next, reason := s.Next[0].To, "It fits."
		sub.Next, sub.Reason = &next, &reason
	}
	return sub
}

var agent = interpreter.Actor{ID: "a_worker", Kind: interpreter.ActorAgent}

func member(w interpreter.WorkItem) interpreter.Actor {
	if w.AssignedTo.Person != "" {
		return interpreter.Actor{ID: w.AssignedTo.Person, Kind: interpreter.ActorPerson}
	}
	return interpreter.Actor{ID: "member@example.com", Kind: interpreter.ActorPerson, Groups: []string{w.AssignedTo.Group}}
}

func claimReq(step, lease string) workflows.Write {
	return workflows.Write{Digest: "claim " + lease, Command: interpreter.Claim{StepID: step, Actor: agent, LeaseID: lease, Lease: 10 * time.Minute}}
}

// play drives a run to its end as agents and people would, through the
// Temporal client alone: claim and submit every ready agent step, decide
// every work item (rejecting each approval with on_reject once when
// rework is set), send every awaited event, and wait out timers.
func (r *run) play(rework bool) *interpreter.View {
	t := r.h.t
	t.Helper()
	rejected := map[string]bool{}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		v := r.view()
		if interpreter.RunState(v.Run.State).Over() {
			return v
		}
		acted := false
		for _, sv := range v.Steps {
			s := r.p.Step(sv.ID)
			if sv.State == nil {
				continue
			}
			switch {
			case s.Kind == interpreter.KindAgent && *sv.State == "ready":
				lease := "l_" + randomHex(4)
				res := r.must(workflows.UpdateClaim, claimReq(s.ID, lease))
				var c interpreter.ClaimResult
				if err := json.Unmarshal(res.Value, &c); err != nil {
					t.Fatal(err)
				}
				spectest.Validate(t, "tools/claim.result.json", c.Wire("tok"))
				sub := sampleSubmission(s)
				if to, ok := r.routes[s.ID]; ok {
					sub.Next = &to
				}
				res = r.must(workflows.UpdateSubmit, workflows.Write{Digest: "submit " + lease,
					Command: interpreter.Submit{StepID: s.ID, LeaseID: lease, Actor: agent, Submission: sub}})
				spectest.Validate(t, "tools/submit.result.json", res.Value)
				acted = true
			case s.Kind == interpreter.KindWaitFor && *sv.State == "waiting" && r.signal:
				err := r.h.c.SignalWorkflow(ctxFor(t), r.id, "", workflows.SignalEvent,
					workflows.EventSignal{Name: s.Text, Data: interpreter.Values{"ok": true}, Sender: "billing"})
				if err != nil {
					t.Fatal(err)
				}
				r.awaitStep(s.ID, "done")
				acted = true
			case s.Kind == interpreter.KindWaitFor && *sv.State == "waiting":
				r.must(workflows.UpdateSendEvent, workflows.Write{Digest: "event",
					Command: interpreter.SendEvent{Name: s.Text, Data: interpreter.Values{"ok": true}, Actor: agent}})
				acted = true
			}
			if acted {
				break
			}
		}
		if !acted && len(v.WorkItems) > 0 {
			w := v.WorkItems[0]
			s := r.p.Step(w.StepID)
			d := interpreter.Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Actor: member(w)}
			switch {
			case s.Kind == interpreter.KindTask:
				d.Decision, d.Submission = interpreter.DecisionCompleted, sampleSubmission(s)
			case rework && s.OnReject != "" && !rejected[s.ID]:
				rejected[s.ID] = true
				note := "Needs another pass."
				d.Decision, d.Note = interpreter.DecisionRejected, &note
			default:
				d.Decision = interpreter.DecisionApproved
			}
			res := r.must(workflows.UpdateDecide, workflows.Write{Digest: "decide " + w.ID, Command: d})
			spectest.Validate(t, "run-view.json", res.Value)
			acted = true
		}
		if !acted {
			// a wait or wait_until step: its timer ends it
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Fatalf("run %s of %s did not end within a minute", r.id, r.p.Name)
	return nil
}

// awaitStep polls the view until a step reaches a state (a signal has no
// answer to wait for).
func (r *run) awaitStep(id, state string) *interpreter.View {
	r.h.t.Helper()
	for range 100 {
		v := r.view()
		for _, sv := range v.Steps {
			if sv.ID == id && sv.State != nil && *sv.State == state {
				return v
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.h.t.Fatalf("step %s never became %s", id, state)
	return nil
}

// history reads a run's history.
func (r *run) history(runID string) *historypb.History {
	r.h.t.Helper()
	it := r.h.c.GetWorkflowHistory(ctxFor(r.h.t), r.id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			r.h.t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	return h
}

// save writes the run's history to testdata/<name>.json under -record, in
// the format WorkflowReplayer.ReplayWorkflowHistoryFromJSONFile reads.
func (r *run) save(name string) {
	if !*record {
		return
	}
	t := r.h.t
	b, err := protojson.Marshal(r.history(""))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded testdata/%s.json (%d bytes)", name, len(b))
}

func (r *run) describe(runID string) (enumspb.WorkflowExecutionStatus, map[string]any) {
	r.h.t.Helper()
	d, err := r.h.c.DescribeWorkflowExecution(ctxFor(r.h.t), r.id, runID)
	if err != nil {
		r.h.t.Fatal(err)
	}
	info := d.GetWorkflowExecutionInfo()
	attrs := map[string]any{}
	for k, p := range info.GetSearchAttributes().GetIndexedFields() {
		var v any
		if err := converter.GetDefaultDataConverter().FromPayload(p, &v); err != nil {
			r.h.t.Fatal(err)
		}
		attrs[k] = v
	}
	return info.GetStatus(), attrs
}

// wait waits for the workflow to close and returns its error.
func (r *run) wait() error {
	return r.h.c.GetWorkflow(ctxFor(r.h.t), r.id, "").Get(ctxFor(r.h.t), nil)
}

func TestFixturesEndToEnd(t *testing.T) {
	cases := []struct {
		fixture string
		inputs  func() interpreter.Values
		rework  bool
		routes  map[string]string
		signal  bool
		outcome string
		record  string
	}{
		{fixture: "customer-offboarding", outcome: "offboarded", signal: true, record: "customer-offboarding-signal",
			routes: map[string]string{"final_invoice": "settlement_event"},
			inputs: func() interpreter.Values {
				return interpreter.Values{"effectiveAt": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}
			}},
		{fixture: "invoice-approval", outcome: "approved", record: "invoice-approval"},
		{fixture: "support-escalation", outcome: "resolved"},
		{fixture: "major-incident", outcome: "stabilized", record: "major-incident"},
		{fixture: "blog-publication", rework: true, outcome: "published", inputs: func() interpreter.Values {
			// publish two seconds from now: the wait_until is a real timer
			return interpreter.Values{"publishAt": time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			h := setup(t)
			p := fixture(t, tc.fixture)
			inputs := sampleValues(p.Inputs)
			if tc.inputs != nil {
				for k, v := range tc.inputs() {
					inputs[k] = v
				}
			}
			r := h.start(p, inputs)
			r.routes, r.signal = tc.routes, tc.signal
			v := r.play(tc.rework)
			if v.Run.State != "ended" || v.Run.Outcome == nil || *v.Run.Outcome != tc.outcome {
				t.Fatalf("run ended %s with outcome %v, want ended %s", v.Run.State, v.Run.Outcome, tc.outcome)
			}
			if tc.signal {
				for id, d := range v.Data.Steps {
					if p.Step(id).Kind == interpreter.KindWaitFor && (d.Record == nil || d.By != "billing") {
						t.Fatalf("event step %s recorded %+v, want by billing", id, d.Record)
					}
				}
			}
			if err := r.wait(); err != nil {
				t.Fatalf("workflow result: %v", err)
			}
			var out workflows.Outcome
			if err := h.c.GetWorkflow(ctxFor(t), r.id, "").Get(ctxFor(t), &out); err != nil || out.Outcome != tc.outcome {
				t.Fatalf("workflow result %+v, %v", out, err)
			}
			status, attrs := r.describe("")
			if status != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
				t.Fatalf("status %s", status)
			}
			if attrs[workflows.SearchState] != "ended" || attrs[workflows.SearchOutcome] != tc.outcome || attrs[workflows.SearchProcess] != p.Name {
				t.Fatalf("search attributes %v", attrs)
			}
			// the view of the closed run, by replay
			v = r.view()
			if v.Run.State != "ended" || v.Run.Ended == nil || v.Run.Ended.By != "server" {
				t.Fatalf("view after close: %+v", v.Run)
			}
			row, err := h.store.GetRun(ctxFor(t), org, r.id)
			if err != nil || row.State != "ended" || row.Outcome != tc.outcome {
				t.Fatalf("read model %+v %v", row, err)
			}
			if tc.record != "" {
				r.save(tc.record)
			}
		})
	}
}

// updateEvents returns the Accepted and Completed events of an update id.
func updateEvents(h *historypb.History, updateID string) []string {
	var out []string
	for _, ev := range h.Events {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			if ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetMeta().GetUpdateId() == updateID {
				out = append(out, ev.GetEventType().String())
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
			if ev.GetWorkflowExecutionUpdateCompletedEventAttributes().GetMeta().GetUpdateId() == updateID {
				out = append(out, ev.GetEventType().String())
			}
		}
	}
	return out
}

func TestRefusedUpdateRecordsNothing(t *testing.T) {
	h := setup(t)
	p := fixture(t, "invoice-approval")
	r := h.start(p, sampleValues(p.Inputs))
	r.must(workflows.UpdateClaim, claimReq("validate", "l1"))
	before := len(r.history("").Events)

	// a claim of a person step, and a submit whose output breaks the
	// declaration: both refused by the validator
	_, err := r.update(workflows.UpdateClaim, "claim-person", claimReq("manager_review", "l2"))
	if e, ok := workflows.AsRefusal(err); !ok || e.Code != interpreter.CodeForbidden {
		t.Fatalf("claim of a person step: %v", err)
	}
	good := sampleSubmission(p.Step("validate"))
	bad := sampleSubmission(p.Step("validate"))
	bad.Output = interpreter.Values{"totalUsd": "a lot", "supplier": "Acme", "matchSummary": "ok"}
	_, err = r.update(workflows.UpdateSubmit, "submit-1", workflows.Write{Digest: "bad",
		Command: interpreter.Submit{StepID: "validate", LeaseID: "l1", Actor: agent, Submission: bad}})
	if e, ok := workflows.AsRefusal(err); !ok || e.Code != interpreter.CodeNotAccepted {
		t.Fatalf("bad submit: %v", err)
	}
	hist := r.history("")
	for _, id := range []string{"claim-person", "submit-1"} {
		if evs := updateEvents(hist, id); len(evs) != 0 {
			t.Fatalf("refused update %s left %v in history", id, evs)
		}
	}
	if len(hist.Events) != before {
		t.Fatalf("history grew from %d to %d events over two refusals", before, len(hist.Events))
	}
	r.checkReadModel(r.view(), false)

	// the same update id succeeds once the request is right
	res, err := r.update(workflows.UpdateSubmit, "submit-1", workflows.Write{Digest: "good",
		Command: interpreter.Submit{StepID: "validate", LeaseID: "l1", Actor: agent, Submission: good}})
	if err != nil || res.Digest != "good" {
		t.Fatalf("submit after the refusal: %+v %v", res, err)
	}
	if evs := updateEvents(r.history(""), "submit-1"); len(evs) != 2 {
		t.Fatalf("accepted update submit-1 has events %v", evs)
	}
	r.checkReadModel(r.view(), true)
}

func TestRepeatedUpdateIDAnswersFirst(t *testing.T) {
	h := setup(t)
	p := fixture(t, "invoice-approval")
	r := h.start(p, sampleValues(p.Inputs))
	first, err := r.update(workflows.UpdateClaim, "claim-1", claimReq("validate", "l1"))
	if err != nil {
		t.Fatal(err)
	}
	r.checkReadModel(r.view(), true)
	// the same id, other arguments: Temporal answers the first call, and
	// the digest tells the caller so
	again, err := r.update(workflows.UpdateClaim, "claim-1", claimReq("validate", "l2"))
	if err != nil {
		t.Fatalf("repeated update: %v", err)
	}
	if again.Digest != first.Digest || again.Digest == claimReq("validate", "l2").Digest || !bytes.Equal(again.Value, first.Value) {
		t.Fatalf("repeat answered %+v, first %+v", again, first)
	}
	if evs := updateEvents(r.history(""), "claim-1"); len(evs) != 2 {
		t.Fatalf("update claim-1 has events %v, want one accepted and one completed", evs)
	}
	// nothing changed: the first lease still holds
	r.checkReadModel(r.view(), false)
	r.must(workflows.UpdateSubmit, workflows.Write{Digest: "s",
		Command: interpreter.Submit{StepID: "validate", LeaseID: "l1", Actor: agent, Submission: sampleSubmission(p.Step("validate"))}})
}

func TestTemporalCancellation(t *testing.T) {
	cases := []struct {
		name     string
		cancel   func(c client.Client, id string) error
		wantNote string
	}{
		{"with reason", func(c client.Client, id string) error {
			return c.CancelWorkflowWithOptions(context.Background(), client.CancelWorkflowOptions{WorkflowID: id, Reason: "duplicate run"})
		}, "duplicate run"},
		{"plain", func(c client.Client, id string) error {
			return c.CancelWorkflow(context.Background(), id, "")
		}, "Cancelled in Temporal."},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := setup(t)
			p := fixture(t, "invoice-approval")
			r := h.start(p, sampleValues(p.Inputs))
			r.must(workflows.UpdateClaim, claimReq("validate", "l1"))
			if err := tc.cancel(h.c, r.id); err != nil {
				t.Fatal(err)
			}
			var ce *temporal.CanceledError
			if err := r.wait(); !errors.As(err, &ce) {
				t.Fatalf("workflow error %v, want Canceled", err)
			}
			var ended interpreter.Ended
			if err := ce.Details(&ended); err != nil || ended.By != identity || ended.Note == nil || *ended.Note != tc.wantNote {
				t.Fatalf("cancel details %+v %v", ended, err)
			}
			status, attrs := r.describe("")
			if status != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
				t.Fatalf("status %s, want Canceled", status)
			}
			if attrs[workflows.SearchState] != "cancelled" {
				t.Fatalf("search attributes %v", attrs)
			}
			v := r.view()
			if v.Run.State != "cancelled" || v.Run.Ended == nil || v.Run.Ended.By != identity || v.Run.Ended.Note == nil || *v.Run.Ended.Note != tc.wantNote {
				t.Fatalf("view after cancel: %+v %+v", v.Run, v.Run.Ended)
			}
			row, err := h.store.GetRun(ctxFor(t), org, r.id)
			if err != nil || row.State != "cancelled" {
				t.Fatalf("read model %+v %v", row, err)
			}
			if work, err := h.store.RunWork(ctxFor(t), org, r.id); err != nil || len(work) != 0 {
				t.Fatalf("work after cancel %+v %v", work, err)
			}
			if i == 0 {
				r.save("cancel-in-temporal")
			}
		})
	}
}

func TestCancelUpdateEndsCanceled(t *testing.T) {
	h := setup(t)
	p := fixture(t, "support-escalation")
	r := h.start(p, sampleValues(p.Inputs))
	operator := interpreter.Actor{ID: "u_ops", Kind: interpreter.ActorOperator}
	res := r.must(workflows.UpdateCancel, workflows.Write{Digest: "c", Command: interpreter.Cancel{Actor: operator, Reason: "Customer withdrew."}})
	spectest.Validate(t, "run-view.json", res.Value)
	var ce *temporal.CanceledError
	if err := r.wait(); !errors.As(err, &ce) {
		t.Fatalf("workflow error %v, want Canceled", err)
	}
	status, attrs := r.describe("")
	if status != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED || attrs[workflows.SearchState] != "cancelled" {
		t.Fatalf("status %s, attributes %v", status, attrs)
	}
	v := r.view()
	if v.Run.Ended == nil || v.Run.Ended.By != operator.ID || *v.Run.Ended.Note != "Customer withdrew." {
		t.Fatalf("view %+v", v.Run)
	}
}

// TestContinueAsNewPastUpdateLimit renews one lease more times than
// Temporal allows updates in one run: the workflow continues as new on the
// way, the lease stays live, and the run ends normally.
func TestContinueAsNewPastUpdateLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	h := setup(t)
	p := fixture(t, "invoice-approval")
	r := h.start(p, sampleValues(p.Inputs))
	begin := time.Now()
	lease := "l0"
	r.must(workflows.UpdateClaim, claimReq("validate", lease))
	const renews = 2100
	for i := 1; i <= renews; i++ {
		next := fmt.Sprintf("l%d", i)
		res, err := r.update(workflows.UpdateRenew, next, workflows.Write{Digest: next,
			Command: interpreter.Renew{StepID: "validate", LeaseID: lease, NewLeaseID: next, Lease: 10 * time.Minute, Progress: next}})
		if err != nil {
			t.Fatalf("renew %d: %v", i, err)
		}
		var rr interpreter.RenewResult
		if err := json.Unmarshal(res.Value, &rr); err != nil || rr.LeaseID != next {
			t.Fatalf("renew %d answered %s (%v)", i, res.Value, err)
		}
		lease = next
	}
	t.Logf("%d renews in %s (%.0f/s)", renews, time.Since(begin).Round(time.Millisecond), renews/time.Since(begin).Seconds())
	r.must(workflows.UpdateSubmit, workflows.Write{Digest: "s",
		Command: interpreter.Submit{StepID: "validate", LeaseID: lease, Actor: agent, Submission: sampleSubmission(p.Step("validate"))}})
	v := r.play(false)
	if v.Run.State != "ended" || *v.Run.Outcome != "approved" {
		t.Fatalf("run %+v", v.Run)
	}
	if err := r.wait(); err != nil {
		t.Fatal(err)
	}
	if status, _ := r.describe(r.firstRun); status != enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
		t.Fatalf("first run status %s, want ContinuedAsNew", status)
	}
	d, err := h.c.DescribeWorkflowExecution(ctxFor(t), r.id, "")
	if err != nil {
		t.Fatal(err)
	}
	if last := d.GetWorkflowExecutionInfo().GetExecution().GetRunId(); last == r.firstRun {
		t.Fatal("one run took every update")
	}
	runs := 1
	for id := r.firstRun; ; runs++ {
		hist := r.history(id)
		lastEv := hist.Events[len(hist.Events)-1]
		if lastEv.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW {
			break
		}
		id = lastEv.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
	}
	t.Logf("the run took %d executions, %s in all", runs, time.Since(begin).Round(time.Millisecond))
}
