package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// The processes the fan-out measurement runs, as examples/bench-fanout
// publishes them: a parent whose first step runs the child once per item
// of its input list, then an agent step; a child that is one finish step.
const (
	FanoutParent = "bench-fanout"
	FanoutChild  = "bench-child"
	// fanoutStep is the parent's process step, fanoutNext the step it
	// continues at.
	fanoutStep = "fan"
	fanoutNext = "after"
	// fanoutPoll is how often the parent's view is read while it fans
	// out. The figure comes from the run's own record, not from when the
	// join is seen, and a view of a running run is a Temporal query of the
	// parent, which waits for the parent's workflow lock among the
	// children's starts and ends: reading it ten times a second slowed
	// the fan-out it measures.
	fanoutPoll = time.Second
)

// FanoutOptions configure a fan-out measurement (baton bench --fanout).
type FanoutOptions struct {
	// URL is the MCP endpoint. Required.
	URL string
	// Token returns the bearer token of an identity. Required.
	Token func(drive.Who) (string, error)
	// Items is how many items the parent's for_each runs over, and how
	// many start_run calls of the child are timed. Default 1000.
	Items int
	// Concurrency is how many start_run calls are in flight at once.
	// Default 32.
	Concurrency int
	// Temporal, when set, is the deployment's Temporal client: the
	// parent's history is counted there.
	Temporal client.Client
	// Out receives the report. Default os.Stdout.
	Out io.Writer
}

// FanoutResult is what Fanout measured.
type FanoutResult struct {
	// FanOut is the parent's process step from ready to done: the
	// children started, ended and joined, and the next step ready, by the
	// run's own record (run.startedAt to steps.fan.at).
	FanOut time.Duration
	// Calls is the wall time of Items start_run calls of the child.
	Calls time.Duration
	// Retried counts the start_run calls answered retry and made again;
	// each waited for the server's call wait first.
	Retried int
	// HistoryEvents is the parent's Temporal history length, summed over
	// its continued runs; 0 when not counted.
	HistoryEvents int64
	// Executions is how many Temporal runs the parent's history spans.
	Executions int
	// WorkflowTasks and Writes count the parent's workflow tasks and its
	// read-model writes (PublishRun local activities) in that history;
	// ChildStarts the child starts it initiated.
	WorkflowTasks, Writes, ChildStarts int
}

// Ratio is FanOut as a share of Calls.
func (r FanoutResult) Ratio() float64 { return r.FanOut.Seconds() / r.Calls.Seconds() }

// Fanout measures a for_each over Items children, each of which ends at
// once, from the step becoming ready to the parent's next step ready;
// then Items start_run calls of the same child over MCP, Concurrency at
// once; and reports both, their ratio and the parent's history size.
func Fanout(ctx context.Context, o FanoutOptions) (FanoutResult, error) {
	if o.Items <= 0 {
		o.Items = 1000
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 32
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	d := drive.NewMCP(o.URL, o.Token, &drive.MCPOptions{Plain: true})
	defer d.Close()
	agent := drive.Who{ID: "a_bench", Kind: interpreter.ActorAgent}

	var res FanoutResult
	items := make([]any, o.Items)
	for i := range items {
		items[i] = "item-" + strconv.Itoa(i)
	}
	begin := time.Now()
	v, err := d.Start(ctx, agent, FanoutParent, map[string]any{"items": items}, "")
	if err != nil {
		return res, fmt.Errorf("start %s: %w", FanoutParent, err)
	}
	runID := v.Run.ID
	for !joined(v) {
		if v.Run.State == string(interpreter.RunEnded) || v.Run.State == string(interpreter.RunCancelled) {
			return res, fmt.Errorf("run %s of %s ended %s before its next step was ready", runID, FanoutParent, v.Run.State)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(fanoutPoll):
		}
		next, err := d.GetRun(ctx, agent, runID)
		var refusal *interpreter.Error
		switch {
		case errors.As(err, &refusal) && refusal.Code == interpreter.CodeRetry:
			// The parent is busy starting or joining children; read again.
		case err != nil:
			return res, err
		default:
			v = next
		}
	}
	seen := time.Since(begin)
	if res.FanOut, err = recorded(v); err != nil {
		return res, err
	}
	if o.Temporal != nil {
		if err := res.countHistory(ctx, o.Temporal, runID); err != nil {
			return res, err
		}
	}
	fmt.Fprintf(o.Out, "fan-out   %d children of %s: %s from the step ready to %s ready (the run's record; %s as this client saw it), run %s\n",
		o.Items, FanoutChild, res.FanOut.Round(time.Millisecond), fanoutNext, seen.Round(time.Millisecond), runID)

	if res.Calls, res.Retried, err = startCalls(ctx, d, agent, o.Items, o.Concurrency); err != nil {
		return res, err
	}
	fmt.Fprintf(o.Out, "start_run %d runs of %s over MCP, %d at once: %s (%d answered retry and were made again)\n",
		o.Items, FanoutChild, o.Concurrency, res.Calls.Round(time.Millisecond), res.Retried)
	fmt.Fprintf(o.Out, "ratio     fan-out / start_run calls = %.2f (goal at most 0.50)\n", res.Ratio())
	if o.Temporal != nil {
		fmt.Fprintf(o.Out, "history   the parent's Temporal history: %d events in %d run(s): %d child starts, %d workflow tasks, %d read-model writes\n",
			res.HistoryEvents, res.Executions, res.ChildStarts, res.WorkflowTasks, res.Writes)
	} else {
		fmt.Fprintln(o.Out, "history   not counted (give --temporal-address)")
	}
	return res, nil
}

// joined reports whether the parent's process step is done and its next
// step ready.
func joined(v *interpreter.View) bool {
	var fan, next bool
	for _, s := range v.Steps {
		if s.State == nil {
			continue
		}
		fan = fan || (s.ID == fanoutStep && *s.State == string(interpreter.StepDone))
		next = next || (s.ID == fanoutNext && *s.State == string(interpreter.StepReady))
	}
	return fan && next
}

// recorded is the process step's time from ready to done by the run's
// record: the run started with it ready, and its completion's at is the
// moment the next step became ready, in the same write.
func recorded(v *interpreter.View) (time.Duration, error) {
	started, err := time.Parse(time.RFC3339Nano, v.Run.StartedAt)
	if err != nil {
		return 0, fmt.Errorf("run.startedAt %q: %w", v.Run.StartedAt, err)
	}
	d := v.Data.Steps[fanoutStep]
	if d == nil || d.Record == nil {
		return 0, errors.New("the process step has no record")
	}
	done, err := time.Parse(time.RFC3339Nano, d.At)
	if err != nil {
		return 0, fmt.Errorf("steps.%s.at %q: %w", fanoutStep, d.At, err)
	}
	return done.Sub(started), nil
}

// startCalls times n start_run calls of the child, c at once, and counts
// the calls answered retry.
func startCalls(ctx context.Context, d *drive.MCP, agent drive.Who, n, c int) (time.Duration, int, error) {
	var next, retried atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, c)
	begin := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				v, err := d.Start(ctx, agent, FanoutChild, map[string]any{"item": "call-" + strconv.FormatInt(i, 10)}, "")
				var refusal *interpreter.Error
				for errors.As(err, &refusal) && refusal.Code == interpreter.CodeRetry && ctx.Err() == nil {
					// An overloaded server asks for the call again.
					retried.Add(1)
					v, err = d.Start(ctx, agent, FanoutChild, map[string]any{"item": "call-" + strconv.FormatInt(i, 10)}, "")
				}
				if err == nil && v.Run.State != string(interpreter.RunEnded) {
					err = fmt.Errorf("run %s of %s is %s after start_run, not ended", v.Run.ID, FanoutChild, v.Run.State)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(begin)
	close(errs)
	for err := range errs {
		return 0, 0, err
	}
	return took, int(retried.Load()), nil
}

// countHistory reads the parent's Temporal history, every run of it, and
// counts its events, child starts, workflow tasks and read-model writes.
func (r *FanoutResult) countHistory(ctx context.Context, c client.Client, runID string) error {
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowId = %q", runID), NextPageToken: token,
		})
		if err != nil {
			return fmt.Errorf("list the workflow runs of %s: %w", runID, err)
		}
		for _, e := range resp.Executions {
			it := c.GetWorkflowHistory(ctx, runID, e.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				ev, err := it.Next()
				if err != nil {
					return fmt.Errorf("history of workflow %s: %w", runID, err)
				}
				r.HistoryEvents++
				switch {
				case ev.GetWorkflowTaskCompletedEventAttributes() != nil:
					r.WorkflowTasks++
				case ev.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil:
					r.ChildStarts++
				case isWrite(ev.GetMarkerRecordedEventAttributes()):
					r.Writes++
				}
			}
			r.Executions++
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return nil
		}
	}
}

// isWrite reports whether a marker records a PublishRun local activity.
func isWrite(m *historypb.MarkerRecordedEventAttributes) bool {
	if m.GetMarkerName() != "LocalActivity" {
		return false
	}
	for _, p := range m.GetDetails()["data"].GetPayloads() {
		if bytes.Contains(p.GetData(), []byte(`"`+workflows.ActivityPublishRun+`"`)) {
			return true
		}
	}
	return false
}
