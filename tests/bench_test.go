package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// bareWorkflow accepts no-op updates until it is cancelled: the floor a
// Temporal update costs on this server.
func bareWorkflow(ctx workflow.Context) error {
	if err := workflow.SetUpdateHandler(ctx, "noop", func(ctx workflow.Context, n int) (int, error) { return n, nil }); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return false })
}

// bareClosingWorkflow answers one no-op update and ends in the task that
// answers it, as a run ends in the task that answers its last decide.
func bareClosingWorkflow(ctx workflow.Context) error {
	done := false
	if err := workflow.SetUpdateHandler(ctx, "noop", func(ctx workflow.Context, n int) (int, error) {
		done = true
		return n, nil
	}); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return done })
}

// latencies holds each timed call's durations by name, and, for the calls
// timed on a workflow, when they began and ended there (spans).
type latencies struct {
	d     map[string][]time.Duration
	spans map[string][]span
}

// span is one call's time on the workflow it wrote to.
type span struct {
	workflowID string
	begin, end time.Time
}

func newLatencies() *latencies {
	return &latencies{d: map[string][]time.Duration{}, spans: map[string][]span{}}
}

// call times one tool call's round trip, as an MCP client sees it, and
// then checks its result against the schemas outside the time: the
// checks are the test's work, not the server's. A call to a run
// (runID not empty) is also split into its legs (see legs).
func (l *latencies) call(u *user, name, tool, runID string, args map[string]any, out any) {
	u.t.Helper()
	var res *mcp.CallToolResult
	l.timeOn(name, runID, func() { res = u.send(tool, args) })
	u.succeeded(tool, u.check(tool, res), out)
}

// plainUser calls as a user through a second client: one plain JSON-RPC
// POST a call in the stateless protocol (drive's Plain mode), reading
// only the result's text, as baton bench's clients call. The MCP SDK's
// client session parses every result twice over, its structured content
// and its text, which is the client's time, not the server's.
type plainUser struct {
	u    *user
	d    *drive.MCP
	who  drive.Who
	text []byte // the last result's text
}

func (b *baton) connectPlain(u *user) *plainUser {
	b.t.Helper()
	tok := b.token(u.id)
	p := &plainUser{u: u, who: drive.Who{ID: u.id.ID, Kind: interpreter.ActorKind(u.id.Kind), Groups: u.id.Groups}}
	p.d = drive.NewMCP(b.url+"/mcp", func(drive.Who) (string, error) { return tok, nil }, &drive.MCPOptions{
		Plain:   true,
		Observe: func(_ string, result []byte) { p.text = result },
	})
	b.t.Cleanup(func() { _ = p.d.Close() })
	return p
}

// callPlain is call through a plain client: the call and the envelope's
// decoding are timed, the schema checks are not.
func (l *latencies) callPlain(p *plainUser, name, tool, runID string, args map[string]any, out any) {
	p.u.t.Helper()
	var err error
	p.text = nil
	l.timeOn(name, runID, func() { err = p.d.Call(context.Background(), p.who, tool, args, nil) })
	if err != nil {
		p.u.t.Fatalf("%s as %s: %v", tool, p.u.id.ID, err)
	}
	var r reply
	if err := interpreter.DecodeExact(p.text, &r); err != nil {
		p.u.t.Fatalf("%s: result is not JSON: %v", tool, err)
	}
	spectest.ValidateToolResult(p.u.t, tool, json.RawMessage(p.text))
	p.u.succeeded(tool, r, out)
}

func (l *latencies) time(name string, f func()) { l.timeOn(name, "", f) }

// timeOn times f, a call that writes to workflow workflowID (none when
// empty).
func (l *latencies) timeOn(name, workflowID string, f func()) {
	t0 := time.Now()
	f()
	t1 := time.Now()
	l.d[name] = append(l.d[name], t1.Sub(t0))
	if workflowID != "" {
		l.spans[name] = append(l.spans[name], span{workflowID, t0, t1})
	}
}

// ms is a duration in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// median is the middle of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[(len(ds)-1)/2]
}

func (l *latencies) report(b *testing.B) {
	p50 := map[string]float64{}
	for name, ds := range l.d {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		p := func(q float64) float64 { return ms(ds[int(q*float64(len(ds)-1))]) }
		p50[name] = p(0.5)
		b.ReportMetric(p(0.5), name+"-p50-ms")
		b.ReportMetric(p(0.99), name+"-p99-ms")
	}
	// The figures the write path is held to: each write's median over
	// the bare update's.
	if bare := p50["bare-update"]; bare > 0 {
		for _, name := range []string{"claim", "submit", "decide", "sdk-claim", "sdk-submit", "sdk-decide"} {
			if p, ok := p50[name]; ok {
				b.ReportMetric(p/bare, name+"/bare")
			}
		}
	}
	// The bare update's workflow lives through the whole benchmark, and
	// its updates slow as its history grows, while each write goes to a
	// run a few events old. A bare workflow started for one update, which
	// it ends in the task that answers it (as a decide ends its run), is
	// the like-for-like floor.
	if bare := p50["bare-close"]; bare > 0 {
		for _, name := range []string{"claim", "submit", "decide"} {
			if p, ok := p50[name]; ok {
				b.ReportMetric(p/bare, name+"/bare-close")
			}
		}
	}
}

// benchSrc is the benchmarks' process: one agent step and one approval.
const benchSrc = `---
name: bench
description: One agent step and one approval.
steps:
  - id: work
    agent: Do it.
    output: { done: boolean }
  - id: check
    person: reviewers
    approve: Check it.
    next: done
  - id: done
    finish: ok
---
`

// legs splits the named calls, each a write to one workflow, at the times
// Temporal's history gives the workflow task that carried the write, and
// reports each leg's median:
//
//   - in: from the call to the task's scheduling (for a tool call the
//     gateway, then Temporal admitting the update);
//   - match: until a worker's poll took the task;
//   - task: until the worker completed it (for a Baton write the
//     validator, the handler and the read-model write);
//   - out: until the caller had the answer (Temporal storing the task's
//     events and answering the update, then the gateway's answer).
//
// Event times are the server's clock, the calls' this process's: both
// run on this host.
func (l *latencies) legs(b *testing.B, c client.Client, names ...string) {
	b.Helper()
	tasks := map[string][][3]time.Time{}
	for _, name := range names {
		for _, s := range l.spans[name] {
			if _, ok := tasks[s.workflowID]; !ok {
				tasks[s.workflowID] = workflowTasks(b, c, s.workflowID)
			}
		}
	}
	for _, name := range names {
		var in, match, task, out []time.Duration
		for _, s := range l.spans[name] {
			for _, t := range tasks[s.workflowID] {
				if t[0].Before(s.begin) || t[2].After(s.end) {
					continue
				}
				in, match = append(in, t[0].Sub(s.begin)), append(match, t[1].Sub(t[0]))
				task, out = append(task, t[2].Sub(t[1])), append(out, s.end.Sub(t[2]))
				break
			}
		}
		if len(in) < len(l.spans[name])/2 {
			b.Errorf("%s: only %d of %d calls have a workflow task of their own in the history", name, len(in), len(l.spans[name]))
			continue
		}
		b.ReportMetric(ms(median(in)), name+"-in-ms")
		b.ReportMetric(ms(median(match)), name+"-match-ms")
		b.ReportMetric(ms(median(task)), name+"-task-ms")
		b.ReportMetric(ms(median(out)), name+"-out-ms")
	}
}

// workflowTasks returns the scheduled, started and completed times of
// every workflow task a workflow completed, in order.
func workflowTasks(b *testing.B, c client.Client, workflowID string) [][3]time.Time {
	b.Helper()
	var tasks [][3]time.Time
	var cur [3]time.Time
	it := c.GetWorkflowHistory(context.Background(), workflowID, "", false, 0)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			b.Fatalf("history of %s: %v", workflowID, err)
		}
		switch at := ev.EventTime.AsTime(); ev.EventType {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			cur = [3]time.Time{at}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			cur[1] = at
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			cur[2] = at
			tasks = append(tasks, cur)
		}
	}
	return tasks
}

// BenchmarkToolLatency measures claim, submit and decide over HTTP, each a
// full tool call (auth, schema check, idempotency record, Temporal update,
// read-model write), next to four reference points on the same server:
// describe (HTTP, MCP and auth only), a claim and a held event sent
// straight to a ProcessRun on Temporal (the workflow and its read-model
// write without the gateway: workflow-claim, workflow-update), and a bare
// workflow's no-op update (Temporal's floor), on a workflow that lives
// through the benchmark (bare-update) and on one started for that update
// and ended by it (bare-close). Claim, submit and decide go as a plain
// client sends them (one JSON-RPC POST a call, the result's text read
// once), and in every other iteration through the MCP SDK's client
// session instead (sdk-claim and so on; describe goes both ways each
// time), so that the figures the write path is held to are the server's
// and what that client adds shows beside them. Claim, submit, decide and
// both bare updates are also split into legs at their workflow tasks (see
// legs), to show where a write's time over the bare update's goes. Run it on a
// quiet machine; with -args -temporal-store=postgres Temporal keeps its
// state in PostgreSQL, as `baton dev` keeps it.
func BenchmarkToolLatency(b *testing.B) {
	bt := start(b, options{})
	bt.publish(benchSrc)
	agent := bt.connect(agentID)
	ann := bt.connect(personID("ann@example.com", "reviewers"))
	agentPlain, annPlain := bt.connectPlain(agent), bt.connectPlain(ann)

	ctx := context.Background()
	c, err := temporal.NewClient(ctx, client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	w := worker.New(c, "bare-bench", worker.Options{})
	w.RegisterWorkflow(bareWorkflow)
	w.RegisterWorkflow(bareClosingWorkflow)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("bare-%d", time.Now().UnixNano()), TaskQueue: "bare-bench"}, bareWorkflow)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.CancelWorkflow(ctx, run.GetID(), "") }()

	lat := newLatencies()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Started well before its update, so that its first task is done
		// when the update comes.
		closing, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("bare-closing-%d-%d", time.Now().UnixNano(), i), TaskQueue: "bare-bench"}, bareClosingWorkflow)
		if err != nil {
			b.Fatal(err)
		}
		var v interpreter.View
		lat.call(agent, "start", "start_run", "", map[string]any{"process": "bench", "inputs": map[string]any{}, "requestId": rid()}, &v)
		var v2 interpreter.View
		agent.ok("start_run", map[string]any{"process": "bench", "inputs": map[string]any{}, "requestId": rid()}, &v2)
		lat.timeOn("workflow-claim", v2.Run.ID, func() {
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
				WorkflowID: v2.Run.ID, UpdateID: rid(), UpdateName: workflows.UpdateClaim, WaitForStage: client.WorkflowUpdateStageCompleted,
				Args: []any{workflows.Write{Digest: "ab", Org: "o_test", Command: interpreter.Claim{StepID: "work", LeaseID: rid(), Lease: time.Minute, Actor: interpreter.Actor{ID: "a_x", Kind: interpreter.ActorAgent}}}},
			})
			if err == nil {
				err = h.Get(ctx, nil)
			}
			if err != nil {
				b.Fatal(err)
			}
		})
		// The writes go through a plain client, and every other
		// iteration through the SDK's client session instead, to show
		// what that client adds (sdk-claim and so on).
		write := func(u *user, p *plainUser, tool string, args map[string]any, out any) {
			if i%2 == 1 {
				lat.call(u, "sdk-"+tool, tool, v.Run.ID, args, out)
			} else {
				lat.callPlain(p, tool, tool, v.Run.ID, args, out)
			}
		}
		var cl interpreter.ClaimWire
		write(agent, agentPlain, "claim", map[string]any{"runId": v.Run.ID, "stepId": "work", "requestId": rid()}, &cl)
		write(agent, agentPlain, "submit", map[string]any{"token": cl.Token, "output": map[string]any{"done": true}, "summary": "Done.", "requestId": rid()}, &v)
		lat.call(agent, "describe", "describe", "", nil, nil)
		lat.callPlain(agentPlain, "describe-plain", "describe", "", nil, nil)
		lat.timeOn("workflow-update", v.Run.ID, func() {
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
				WorkflowID: v.Run.ID, UpdateID: rid(), UpdateName: workflows.UpdateSendEvent, WaitForStage: client.WorkflowUpdateStageCompleted,
				Args: []any{workflows.Write{Command: interpreter.SendEvent{Name: "nothing", Actor: interpreter.Actor{ID: "a", Kind: interpreter.ActorAgent}}}},
			})
			if err == nil {
				err = h.Get(ctx, nil)
			}
			if err != nil {
				b.Fatalf("update of run %s: %v\n%s", v.Run.ID, err, historyOf(c, v.Run.ID))
			}
		})
		wi := v.WorkItems[0]
		write(ann, annPlain, "decide", map[string]any{"runId": v.Run.ID, "workItemId": wi.ID, "snapshot": wi.Snapshot, "decision": "approved", "requestId": rid()}, nil)
		noop := func(workflowID string) func() {
			return func() {
				ctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
					WorkflowID: workflowID, UpdateID: rid(), UpdateName: "noop", Args: []any{i}, WaitForStage: client.WorkflowUpdateStageCompleted,
				})
				if err == nil {
					err = h.Get(ctx, nil)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		lat.timeOn("bare-update", run.GetID(), noop(run.GetID()))
		lat.timeOn("bare-close", closing.GetID(), noop(closing.GetID()))
		if err := closing.Get(ctx, nil); err != nil {
			b.Fatalf("bare closing workflow %s: %v", closing.GetID(), err)
		}
	}
	b.StopTimer()
	lat.report(b)
	lat.legs(b, c, "claim", "submit", "decide", "bare-update", "bare-close")
}

// BenchmarkRacingClaims measures how long 64 agents racing to claim one
// step take until every one has its answer (one token, 63
// claimed_by_other), and reports the slowest answer.
func BenchmarkRacingClaims(b *testing.B) {
	bt := start(b, options{})
	bt.publish(raceSrc)
	agents := racers(bt, 64)
	starter := bt.connect(personID("mira@example.com"))
	var slowest []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var v interpreter.View
		starter.ok("start_run", map[string]any{"process": "race", "inputs": map[string]any{}, "requestId": rid()}, &v)
		b.StartTimer()
		begin := time.Now()
		results := race(len(agents), func(i int) reply {
			return agents[i].call("claim", map[string]any{"runId": v.Run.ID, "stepId": "work", "requestId": rid()})
		})
		slowest = append(slowest, time.Since(begin))
		won := 0
		for _, r := range results {
			if r.OK {
				won++
			} else if r.Error.Code != interpreter.CodeConflict {
				b.Errorf("a racing claim got %+v", r.Error)
			}
		}
		if won != 1 {
			b.Fatalf("%d racing claims won", won)
		}
	}
	b.StopTimer()
	sort.Slice(slowest, func(i, j int) bool { return slowest[i] < slowest[j] })
	b.ReportMetric(float64(slowest[len(slowest)/2].Milliseconds()), "slowest-answer-p50-ms")
	b.ReportMetric(float64(slowest[len(slowest)-1].Milliseconds()), "slowest-answer-max-ms")
}

// historyOf lists a workflow's events, for a benchmark that fails.
func historyOf(c client.Client, id string) string {
	var sb strings.Builder
	it := c.GetWorkflowHistory(context.Background(), id, "", false, 0)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			fmt.Fprintf(&sb, "history: %v\n", err)
			break
		}
		fmt.Fprintf(&sb, "%d %s %s\n", ev.EventId, ev.EventType, ev.GetWorkflowTaskFailedEventAttributes().GetFailure().GetMessage())
	}
	return sb.String()
}
