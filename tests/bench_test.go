package tests

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

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

type latencies map[string][]time.Duration

// call times one tool call's round trip, as an MCP client sees it, and
// then checks its result against the schemas outside the time: the
// checks are the test's work, not the server's.
func (l latencies) call(u *user, name, tool string, args map[string]any, out any) {
	u.t.Helper()
	var res *mcp.CallToolResult
	l.time(name, func() { res = u.send(tool, args) })
	u.succeeded(tool, u.check(tool, res), out)
}

func (l latencies) time(name string, f func()) {
	t0 := time.Now()
	f()
	l[name] = append(l[name], time.Since(t0))
}

func (l latencies) report(b *testing.B) {
	p50 := map[string]float64{}
	for name, ds := range l {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		p := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Microseconds()) / 1000 }
		p50[name] = p(0.5)
		b.ReportMetric(p(0.5), name+"-p50-ms")
		b.ReportMetric(p(0.99), name+"-p99-ms")
	}
	// The figures the write path is held to: each write's median over
	// the bare update's.
	if bare := p50["bare-update"]; bare > 0 {
		for _, name := range []string{"claim", "submit", "decide"} {
			if p, ok := p50[name]; ok {
				b.ReportMetric(p/bare, name+"/bare")
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

// BenchmarkToolLatency measures claim, submit and decide over HTTP, each a
// full tool call (auth, schema check, idempotency record, Temporal update,
// read-model write), next to four reference points on the same server:
// describe (HTTP, MCP and auth only), a claim and a held event sent
// straight to a ProcessRun on Temporal (the workflow and its read-model
// write without the gateway: workflow-claim, workflow-update), and a bare
// workflow's no-op update (Temporal's floor). Run it on a quiet machine.
func BenchmarkToolLatency(b *testing.B) {
	bt := start(b, options{})
	bt.publish(benchSrc)
	agent := bt.connect(agentID)
	ann := bt.connect(personID("ann@example.com", "reviewers"))

	ctx := context.Background()
	c, err := temporal.NewClient(ctx, client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	w := worker.New(c, "bare-bench", worker.Options{})
	w.RegisterWorkflow(bareWorkflow)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("bare-%d", time.Now().UnixNano()), TaskQueue: "bare-bench"}, bareWorkflow)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.CancelWorkflow(ctx, run.GetID(), "") }()

	lat := latencies{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var v interpreter.View
		lat.call(agent, "start", "start_run", map[string]any{"process": "bench", "inputs": map[string]any{}, "requestId": rid()}, &v)
		var v2 interpreter.View
		agent.ok("start_run", map[string]any{"process": "bench", "inputs": map[string]any{}, "requestId": rid()}, &v2)
		lat.time("workflow-claim", func() {
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
		var cl interpreter.ClaimWire
		lat.call(agent, "claim", "claim", map[string]any{"runId": v.Run.ID, "stepId": "work", "requestId": rid()}, &cl)
		lat.call(agent, "submit", "submit", map[string]any{"token": cl.Token, "output": map[string]any{"done": true}, "summary": "Done.", "requestId": rid()}, &v)
		lat.call(agent, "describe", "describe", nil, nil)
		lat.time("workflow-update", func() {
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
		lat.call(ann, "decide", "decide", map[string]any{"runId": v.Run.ID, "workItemId": wi.ID, "snapshot": wi.Snapshot, "decision": "approved", "requestId": rid()}, nil)
		lat.time("bare-update", func() {
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
				WorkflowID: run.GetID(), UpdateID: rid(), UpdateName: "noop", Args: []any{i}, WaitForStage: client.WorkflowUpdateStageCompleted,
			})
			if err == nil {
				err = h.Get(ctx, nil)
			}
			if err != nil {
				b.Fatal(err)
			}
		})
	}
	b.StopTimer()
	lat.report(b)
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
