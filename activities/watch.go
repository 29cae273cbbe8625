package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// watchEvery is the longest wait between two looks at the children; the
// first looks come sooner (1 s, 2 s, 4 s, …), since a child closed near
// its parent's continue-as-new is the likeliest to have been missed.
const watchEvery = 30 * time.Second

// WatchChildren waits until one of a parent's children closed without
// ending its run (its workflow terminated, failed or timed out) and
// returns each such child, or returns nothing after q.For. One look is one
// visibility query for the parent's abnormally closed children, whatever
// their number (ParentWorkflowId and ExecutionStatus, which Temporal's SQL
// and Elasticsearch visibility stores both answer).
//
// Asked for Ends, it waits instead until some of the children closed,
// whether they ended their run or not (watchEnds).
func (a *Activities) WatchChildren(ctx context.Context, q workflows.WatchChildrenRequest) ([]workflows.ClosedChild, error) {
	if a.temporal == nil {
		return nil, errors.New("activities: watching children needs a Temporal client")
	}
	if q.Ends {
		return a.watchEnds(ctx, q)
	}
	until := time.Now().Add(q.For)
	wait := time.Second
	for {
		closed, err := a.closedChildren(ctx, q)
		if err != nil {
			return nil, err
		}
		if len(closed) > 0 || !time.Now().Before(until) {
			return closed, nil
		}
		activity.RecordHeartbeat(ctx)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, watchEvery)
	}
}

// closedChildren lists the parent's children whose workflow closed
// abnormally and keeps those q watches.
func (a *Activities) closedChildren(ctx context.Context, q workflows.WatchChildrenRequest) ([]workflows.ClosedChild, error) {
	query := fmt.Sprintf("ParentWorkflowId = '%s' AND ExecutionStatus IN ('Terminated', 'Failed', 'TimedOut')", strings.ReplaceAll(q.Parent, "'", ""))
	var out []workflows.ClosedChild
	err := a.eachExecution(ctx, query, func(e *workflowpb.WorkflowExecutionInfo) {
		id := e.GetExecution().GetWorkflowId()
		if slices.Contains(q.Children, id) && !slices.ContainsFunc(out, func(c workflows.ClosedChild) bool { return c.RunID == id }) {
			out = append(out, workflows.ClosedChild{RunID: id, Status: statusWord(e.GetStatus())})
		}
	})
	return out, err
}

// eachExecution calls f with each execution a visibility query lists,
// page by page.
func (a *Activities) eachExecution(ctx context.Context, query string, f func(*workflowpb.WorkflowExecutionInfo)) error {
	var token []byte
	for {
		res, err := a.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return err
		}
		for _, e := range res.GetExecutions() {
			f(e)
		}
		if token = res.GetNextPageToken(); len(token) == 0 {
			return nil
		}
	}
}

// statusWord is a closed workflow's status as a note says it.
func statusWord(s enums.WorkflowExecutionStatus) string {
	switch s {
	case enums.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enums.WORKFLOW_EXECUTION_STATUS_FAILED:
		return "failed"
	case enums.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed out"
	}
	return strings.ToLower(s.String())
}

// Waiting for the children's ends: at most endPolls of them are waited on
// at once, each for endPoll before it goes back behind the others, so
// that every child is looked at in turn however many there are; the ends
// that come within endMoment of the first are returned with it. With more
// children than endPolls, a visibility query every endScan also looks for
// those that closed, endScanIDs of them a query: a child that closes
// while it waits its turn is seen within endScan, not only after
// endPoll for every endPolls children ahead of it.
const (
	endPolls   = 64
	endPoll    = 20 * time.Second
	endScan    = 5 * time.Second
	endScanIDs = 100
	endMoment  = 200 * time.Millisecond
	// endRetry is the pause before a child whose look failed is looked at
	// again.
	endRetry = time.Second
	// endBeat is how often the activity heartbeats.
	endBeat = 10 * time.Second
)

// watchEnds waits until some of q's children closed and returns them: a
// child's look is a long poll for its workflow's result, which Temporal
// answers as the workflow closes (following its continue-as-new). It
// returns nothing after q.For.
func (a *Activities) watchEnds(ctx context.Context, q workflows.WatchChildrenRequest) ([]workflows.ClosedChild, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	queue := make(chan string, len(q.Children))
	for _, id := range q.Children {
		queue <- id
	}
	found := make(chan workflows.ClosedChild, len(q.Children))
	// Each child is found once, by its long poll or by the scan.
	var mu sync.Mutex
	seen := map[string]bool{}
	isSeen := func(id string) bool {
		mu.Lock()
		defer mu.Unlock()
		return seen[id]
	}
	report := func(c workflows.ClosedChild) {
		mu.Lock()
		first := !seen[c.RunID]
		seen[c.RunID] = true
		mu.Unlock()
		if first {
			found <- c
		}
	}
	var wg sync.WaitGroup
	if len(q.Children) > endPolls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.scanEnds(ctx, q.Children, isSeen, report)
		}()
	}
	for range min(endPolls, len(q.Children)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var id string
				select {
				case <-ctx.Done():
					return
				case id = <-queue:
				}
				if isSeen(id) {
					continue
				}
				c, closed, err := a.childEnd(ctx, id)
				switch {
				case closed:
					report(c)
					continue
				case ctx.Err() != nil:
					return
				case err != nil:
					select {
					case <-ctx.Done():
						return
					case <-time.After(endRetry):
					}
				}
				queue <- id
			}
		}()
	}
	beat := time.NewTicker(endBeat)
	defer beat.Stop()
	until := time.NewTimer(q.For)
	defer until.Stop()
	var moment <-chan time.Time
	var out []workflows.ClosedChild
wait:
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil, ctx.Err()
		case <-beat.C:
			activity.RecordHeartbeat(ctx)
		case <-until.C:
			break wait
		case <-moment:
			break wait
		case c := <-found:
			out = append(out, c)
			if moment == nil {
				moment = time.After(endMoment)
			}
		}
	}
	stop()
	wg.Wait()
	for len(found) > 0 {
		out = append(out, <-found)
	}
	order := map[string]int{}
	for i, id := range q.Children {
		order[id] = i
	}
	slices.SortFunc(out, func(x, y workflows.ClosedChild) int { return order[x.RunID] - order[y.RunID] })
	return out, nil
}

// scanEnds looks every endScan for the children whose workflow closed,
// with a visibility query for endScanIDs of them at a time, and reports
// each one not seen yet, as its long poll would have, until ctx is done.
// A query that fails is made again at the next scan.
func (a *Activities) scanEnds(ctx context.Context, children []string, isSeen func(string) bool, report func(workflows.ClosedChild)) {
	tick := time.NewTicker(endScan)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for ids := range slices.Chunk(children, endScanIDs) {
			closed, err := a.closedAmong(ctx, ids)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				continue
			}
			for _, id := range closed {
				if isSeen(id) {
					continue
				}
				if c, ok, _ := a.childEnd(ctx, id); ok {
					report(c)
				} else if ctx.Err() != nil {
					return
				}
			}
		}
	}
}

// closedAmong lists which of ids name a workflow whose latest run closed
// (not one that continued as new).
func (a *Activities) closedAmong(ctx context.Context, ids []string) ([]string, error) {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = "'" + strings.ReplaceAll(id, "'", "") + "'"
	}
	query := fmt.Sprintf("WorkflowId IN (%s) AND ExecutionStatus IN ('Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut')", strings.Join(quoted, ", "))
	var out []string
	err := a.eachExecution(ctx, query, func(e *workflowpb.WorkflowExecutionInfo) {
		if id := e.GetExecution().GetWorkflowId(); !slices.Contains(out, id) {
			out = append(out, id)
		}
	})
	return out, err
}

// childEnd waits up to endPoll for a child's workflow to close and says
// how: closed is false when it still runs, or when the look failed (err).
func (a *Activities) childEnd(ctx context.Context, id string) (c workflows.ClosedChild, closed bool, err error) {
	pctx, cancel := context.WithTimeout(ctx, endPoll)
	defer cancel()
	var out workflows.Outcome
	err = a.temporal.GetWorkflow(pctx, id, "").Get(pctx, &out)
	c = workflows.ClosedChild{RunID: id}
	var (
		cancelled  *temporal.CanceledError
		terminated *temporal.TerminatedError
		timedOut   *temporal.TimeoutError
		failed     *temporal.WorkflowExecutionError
	)
	switch {
	case err == nil:
		c.Ended, c.Status, c.Outcome = true, "completed", out.Outcome
		if out.Ended != nil {
			c.Note = out.Ended.Note
		}
	case errors.As(err, &cancelled):
		c.Ended, c.Status, c.Outcome = true, "canceled", interpreter.OutcomeCancelled
		var ended interpreter.Ended
		if cancelled.HasDetails() && cancelled.Details(&ended) == nil {
			c.Note = ended.Note
		}
	case errors.As(err, &terminated):
		c.Status = "terminated"
	case errors.As(err, &timedOut):
		c.Status = "timed out"
	case errors.As(err, &failed):
		c.Status = "failed"
	case pctx.Err() != nil && ctx.Err() == nil:
		// Still running after endPoll.
		return c, false, nil
	default:
		return c, false, err
	}
	return c, true, nil
}
