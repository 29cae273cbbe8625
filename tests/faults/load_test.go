package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/soak"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// benchProcess is examples/bench under another name: one agent step (claim,
// submit) and one approval (decide), so a run is four writes.
const benchProcess = `---
name: %s
description: One agent step and one approval.
steps:
  - id: work
    agent: Do the piece of work and say it is done.
    output: { done: boolean }
  - id: check
    person: reviewers
    approve: Check the piece of work.
    next: done
  - id: done
    finish: ok
---

# %[1]s

Runs of it are driven to their end while the deployment suffers faults.
`

// writesPerRun are the updates each run's workflow accepts, once each.
var writesPerRun = []string{workflows.UpdateStart, workflows.UpdateClaim, workflows.UpdateSubmit, workflows.UpdateDecide}

// publishBench publishes the bench process as name in an organization and
// returns it parsed.
func publishBench(t *testing.T, name, org string) *interpreter.Process {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(benchProcess, name)
	if err := os.WriteFile(filepath.Join(dir, "PROCESS.md"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dep.publish(dir, name, org); err != nil {
		t.Fatal(err)
	}
	p, err := interpreter.Parse([]byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// load is runs of a process driven to their end by concurrent clients,
// half of them starting at each gateway, with faults injected meanwhile.
type load struct {
	process     *interpreter.Process
	runs        int
	concurrency int
	// faultAfter is how many runs have ended when the faults begin.
	faultAfter int
	// faults injects the faults and says what it did, one line each.
	faults func(t *testing.T) []string
}

// outcome is what a load did and saw.
type outcome struct {
	journal  *journal
	ended    []*interpreter.View // the final view of every run that ended
	failed   []error             // walks that did not end
	injected []string
	elapsed  time.Duration
	// seen are the panic lines and unexpected exits of each process
	// before the load: only later ones are this load's.
	seen map[*soak.Process][2]int
}

// drive runs the load: every client walks runs until Runs have been
// started, and the faults run once faultAfter runs have ended.
func (l load) drive(t *testing.T) *outcome {
	t.Helper()
	out := &outcome{journal: newJournal(), seen: map[*soak.Process][2]int{}}
	for _, p := range dep.procs() {
		out.seen[p] = [2]int{len(p.Panics()), len(p.UnexpectedExits())}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var (
		next, ended atomic.Int64
		mu          sync.Mutex
		wg          sync.WaitGroup
		faultsDone  = make(chan struct{})
	)
	go func() {
		defer close(faultsDone)
		for ended.Load() < int64(l.faultAfter) && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		if ctx.Err() == nil {
			out.injected = l.faults(t)
		}
	}()
	observe := func(tool string, result []byte) {
		spectest.ValidateToolResult(t, tool, json.RawMessage(result))
	}
	begin := time.Now()
	for i := range l.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newRetrier(dep.gatewayURLs, i, dep.token, out.journal)
			c.observe = observe
			defer c.close()
			for next.Add(1) <= int64(l.runs) {
				w := drive.Walk{Process: l.process, Idle: func(context.Context) error {
					return errors.New("the run waits on time; the bench process never should")
				}}
				v, err := w.Run(ctx, c)
				mu.Lock()
				if err != nil {
					out.failed = append(out.failed, err)
				} else {
					out.ended = append(out.ended, v)
				}
				mu.Unlock()
				ended.Add(1)
			}
		}()
	}
	wg.Wait()
	out.elapsed = time.Since(begin)
	<-faultsDone
	return out
}

// verify checks what the issue asks of a load under faults, and returns
// the row of the table: runs lost, duplicates, panics.
func (o *outcome) verify(t *testing.T, l load) (lost, duplicates, panics int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, err := range o.failed {
		t.Errorf("a run did not end: %v", err)
	}
	if n := len(o.ended) + len(o.failed); n != l.runs {
		t.Errorf("%d runs walked, want %d", n, l.runs)
	}
	for k, n := range o.journal.refused {
		t.Errorf("%d refusals %s: a retried call must answer as the first time", n, k)
	}
	runIDs := map[string]bool{}
	for _, v := range o.ended {
		if v.Run.State != string(interpreter.RunEnded) || v.Run.Outcome == nil || *v.Run.Outcome != "ok" {
			t.Errorf("run %s ended %s with outcome %v, want ended ok", v.Run.ID, v.Run.State, v.Run.Outcome)
		}
		runIDs[v.Run.ID] = true
	}
	lost = l.runs - len(runIDs)

	tc, err := client.Dial(client.Options{HostPort: dep.temporalAddr})
	if err != nil {
		t.Fatalf("dial Temporal: %v", err)
	}
	defer tc.Close()

	// Nothing lost, nothing twice: the read model and Temporal each hold
	// exactly the runs started, all ended.
	listed := listRuns(ctx, t, l.process.Name)
	for id, state := range listed {
		if !runIDs[id] {
			t.Errorf("list_runs shows run %s (%s) that no client started", id, state)
			duplicates++
		} else if state != string(interpreter.RunEnded) {
			t.Errorf("list_runs shows run %s %s, want ended", id, state)
		}
	}
	for id := range runIDs {
		if _, ok := listed[id]; !ok {
			t.Errorf("run %s is missing from list_runs", id)
			lost++
		}
	}
	if n := countWorkflows(ctx, t, tc, l.process.Name, len(runIDs)); n != int64(len(runIDs)) {
		t.Errorf("Temporal holds %d workflows of %s, want %d", n, l.process.Name, len(runIDs))
		duplicates += max(0, int(n)-len(runIDs))
	}

	// No step done twice: each run's workflow accepted exactly the writes
	// of its walk, each once, under the requestIds the clients sent.
	sent := map[string][]string{}
	for _, w := range o.journal.writes {
		sent[w.runID] = append(sent[w.runID], w.args["requestId"].(string))
	}
	duplicates += checkHistories(ctx, t, tc, runIDs, sent)

	// Nothing half-written: a run's view read after its end is the view
	// its last write answered.
	o.checkFinalViews(ctx, t)

	// Every answer equals its replay.
	o.checkReplays(ctx, t)

	for _, p := range dep.procs() {
		for _, line := range p.Panics()[o.seen[p][0]:] {
			t.Errorf("%s panicked: %s", p.Name, line)
			panics++
		}
		for _, e := range p.UnexpectedExits()[o.seen[p][1]:] {
			t.Errorf("%s: %s", p.Name, e)
		}
	}
	return lost, duplicates, panics
}

// listRuns pages through list_runs of a process and returns each run's
// state.
func listRuns(ctx context.Context, t *testing.T, process string) map[string]string {
	t.Helper()
	c := newRetrier(dep.gatewayURLs, 0, dep.token, newJournal())
	defer c.close()
	out := map[string]string{}
	cursor := ""
	for {
		args := map[string]any{"process": process, "limit": 100}
		if cursor != "" {
			args["cursor"] = cursor
		}
		var page struct {
			Items []struct {
				ID    string `json:"id"`
				State string `json:"state"`
			} `json:"items"`
			NextCursor *string `json:"nextCursor"`
		}
		if err := c.call(ctx, drive.WalkOperator, "list_runs", args, "", &page); err != nil {
			t.Fatalf("list_runs: %v", err)
		}
		for _, it := range page.Items {
			out[it.ID] = it.State
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return out
		}
		cursor = *page.NextCursor
	}
}

// countWorkflows counts the process's workflows in Temporal's visibility,
// waiting (it lags) until it reaches want or stops moving.
func countWorkflows(ctx context.Context, t *testing.T, tc client.Client, process string, want int) int64 {
	t.Helper()
	query := fmt.Sprintf("%s = '%s'", workflows.SearchProcess, process)
	var n int64 = -1
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := tc.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
		if err != nil {
			t.Fatalf("count workflows %s: %v", query, err)
		}
		n = resp.GetCount()
		if n >= int64(want) || time.Now().After(deadline) {
			return n
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// checkHistories reads every run's workflow history and checks that it
// completed, and accepted each write of writesPerRun exactly once, with
// update ids among the requestIds sent to that run. It returns how many
// writes were accepted more than once.
func checkHistories(ctx context.Context, t *testing.T, tc client.Client, runIDs map[string]bool, sent map[string][]string) int {
	t.Helper()
	var mu sync.Mutex
	twice := 0
	ids := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				accepted, status, err := history(ctx, tc, id)
				mu.Lock()
				switch {
				case err != nil:
					t.Errorf("history of %s: %v", id, err)
				case status != enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
					t.Errorf("workflow %s is %v, want completed", id, status)
				}
				names := map[string]int{}
				for upd, name := range accepted {
					names[name]++
					if !slices.Contains(sent[id], upd) {
						t.Errorf("workflow %s accepted %s update %s, which no client sent to it", id, name, upd)
					}
				}
				for _, name := range writesPerRun {
					if names[name] != 1 {
						t.Errorf("workflow %s accepted %d %s updates, want 1", id, names[name], name)
					}
					twice += max(0, names[name]-1)
				}
				if len(accepted) != len(writesPerRun) {
					t.Errorf("workflow %s accepted %d updates %v, want %v", id, len(accepted), accepted, writesPerRun)
				}
				mu.Unlock()
			}
		}()
	}
	for id := range runIDs {
		ids <- id
	}
	close(ids)
	wg.Wait()
	return twice
}

// history returns the updates a workflow accepted (update id → name),
// counted per event so an id accepted twice shows, and its status.
func history(ctx context.Context, tc client.Client, id string) (map[string]string, enums.WorkflowExecutionStatus, error) {
	accepted := map[string]string{}
	it := tc.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, 0, err
		}
		if a := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil {
			upd := a.GetAcceptedRequest().GetMeta().GetUpdateId()
			if _, dup := accepted[upd]; dup {
				accepted[upd+" (again)"] = a.GetAcceptedRequest().GetInput().GetName()
				continue
			}
			accepted[upd] = a.GetAcceptedRequest().GetInput().GetName()
		}
	}
	desc, err := tc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return nil, 0, err
	}
	return accepted, desc.GetWorkflowExecutionInfo().GetStatus(), nil
}

// checkReplays sends every write again, exactly as first sent, and checks
// that the answer is the one the client got the first time.
func (o *outcome) checkReplays(ctx context.Context, t *testing.T) {
	t.Helper()
	writes := make(chan write)
	var wg sync.WaitGroup
	var differ atomic.Int64
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newRetrier(dep.gatewayURLs, i, dep.token, newJournal())
			defer c.close()
			for w := range writes {
				var again json.RawMessage
				if err := c.call(ctx, w.who, w.tool, w.args, w.runID, &again); err != nil {
					t.Errorf("replay of %s %v: %v", w.tool, w.args["requestId"], err)
					continue
				}
				if !sameJSON(w.answer, again) && differ.Add(1) <= 3 {
					t.Errorf("replay of %s %v answered\n%s\nthe first answer was\n%s", w.tool, w.args["requestId"], again, w.answer)
				}
			}
		}()
	}
	for _, w := range o.journal.writes {
		writes <- w
	}
	close(writes)
	wg.Wait()
	if n := differ.Load(); n > 0 {
		t.Errorf("%d of %d replays differ from the first answer", n, len(o.journal.writes))
	}
}

// checkFinalViews reads every ended run with get_run and compares it with
// its last write's answer, the view its walk ended on.
func (o *outcome) checkFinalViews(ctx context.Context, t *testing.T) {
	t.Helper()
	last := map[string]json.RawMessage{}
	for _, w := range o.journal.writes {
		last[w.runID] = w.answer // a run's writes are journaled in order
	}
	views := make(chan *interpreter.View)
	var wg sync.WaitGroup
	var differ atomic.Int64
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newRetrier(dep.gatewayURLs, i, dep.token, newJournal())
			defer c.close()
			for v := range views {
				var read json.RawMessage
				if err := c.call(ctx, drive.WalkAgent, "get_run", map[string]any{"runId": v.Run.ID}, v.Run.ID, &read); err != nil {
					t.Errorf("get_run %s: %v", v.Run.ID, err)
					continue
				}
				if !sameJSON(last[v.Run.ID], read) && differ.Add(1) <= 3 {
					t.Errorf("get_run of ended run %s shows\n%s\nits last write answered\n%s", v.Run.ID, read, last[v.Run.ID])
				}
			}
		}()
	}
	for _, v := range o.ended {
		views <- v
	}
	close(views)
	wg.Wait()
	if n := differ.Load(); n > 0 {
		t.Errorf("%d of %d ended runs read otherwise than their last write answered", n, len(o.ended))
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if decode(a, &x) != nil || decode(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// report logs the table row for a load.
func (o *outcome) report(t *testing.T, l load, lost, duplicates, panics int) {
	t.Helper()
	o.journal.mu.Lock()
	retried := fmt.Sprintf("retry answers %d, failed connections %d, slowest attempt %s",
		o.journal.retried["retry"], o.journal.retried["transport"], o.journal.slowest.Round(100*time.Millisecond))
	o.journal.mu.Unlock()
	t.Logf("| %d runs at concurrency %d, %d writes, %s, %s | %s | %d | %d | %d |",
		l.runs, l.concurrency, len(o.journal.writes), o.elapsed.Round(time.Second), retried,
		strings.Join(o.injected, "; "), lost, duplicates, panics)
}
