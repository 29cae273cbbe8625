package workflows

import (
	"context"
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/converter"

	"github.com/baton-run/baton/interpreter"
)

// A run's views (its query, its writes' answers) name a child among a
// process step's running children (children.runningIds) only once
// Temporal has started the child's workflow: before, get_run of that id
// would find no run. A child asked for and not yet started is counted in
// children.total alone, like the children a concurrency bound holds back
// (docs/profile-subprocess.md §6).

// begun is what a run knows of the children it may name.
type begun struct {
	// asked are the children whose start this run performed; those still
	// in kids.starting are not started yet.
	asked map[string]bool
	// carried are the children running when this run continued another:
	// that run started them before it continued (settle).
	carried map[string]bool
}

// ask records that the run performs a child's start.
func (b *begun) ask(runID string) {
	if b.asked == nil {
		b.asked = map[string]bool{}
	}
	b.asked[runID] = true
}

// carry records the children a continued run carries as running.
func (b *begun) carry(ids []string) {
	b.carried = make(map[string]bool, len(ids))
	for _, id := range ids {
		b.carried[id] = true
	}
}

// childStarted reports whether Temporal has started a child of the run.
func (r *runner) childStarted(runID string) bool {
	return r.begun.carried[runID] || (r.begun.asked[runID] && !r.kids.starting[runID])
}

// named returns v with each process step's running children cut to
// those Temporal has started. v is the run's own fresh view; the counts
// are copied before they change.
func (r *runner) named(v *interpreter.View) *interpreter.View {
	for i := range v.Steps {
		c := v.Steps[i].Children
		if c == nil {
			continue
		}
		ids := make([]string, 0, len(c.RunningIDs))
		for _, id := range c.RunningIDs {
			if r.childStarted(id) {
				ids = append(ids, id)
			}
		}
		if len(ids) < len(c.RunningIDs) {
			cut := *c
			cut.RunningIDs, cut.Running = ids, len(ids)
			v.Steps[i].Children = &cut
		}
	}
	return v
}

// namedAnswer is named for a write's result when it is a run view.
func (r *runner) namedAnswer(res any) any {
	if v, ok := res.(*interpreter.View); ok {
		return r.named(v)
	}
	return res
}

// Begun reports whether a run's workflow runs in org while the read model
// has no row of it yet: a child its parent started, whose first write is
// on its way. The organization is the BatonOrg search attribute its start
// set, so a run of another organization is never reported.
func (c *Client) Begun(ctx context.Context, org, runID string) (bool, error) {
	d, err := c.c.DescribeWorkflowExecution(ctx, runID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || info.GetType().GetName() != WorkflowName {
		return false, nil
	}
	p := info.GetSearchAttributes().GetIndexedFields()[SearchOrg]
	if p == nil {
		return false, nil
	}
	var got string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &got); err != nil {
		return false, nil
	}
	return got == org, nil
}
