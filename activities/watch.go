package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"

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
func (a *Activities) WatchChildren(ctx context.Context, q workflows.WatchChildrenRequest) ([]workflows.ClosedChild, error) {
	if a.temporal == nil {
		return nil, errors.New("activities: watching children needs a Temporal client")
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
	var token []byte
	for {
		res, err := a.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return nil, err
		}
		for _, e := range res.GetExecutions() {
			id := e.GetExecution().GetWorkflowId()
			if slices.Contains(q.Children, id) && !slices.ContainsFunc(out, func(c workflows.ClosedChild) bool { return c.RunID == id }) {
				out = append(out, workflows.ClosedChild{RunID: id, Status: statusWord(e.GetStatus())})
			}
		}
		if token = res.GetNextPageToken(); len(token) == 0 {
			return out, nil
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
