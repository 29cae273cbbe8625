package soak

import (
	"context"
	"errors"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/interpreter"
)

// temporalNamespace is the namespace of the deployment's runs: `baton
// temporal`'s default, which its workers and gateways use too.
const temporalNamespace = "default"

// recordRuns bounds how many ended runs the records check takes from
// Temporal.
const recordRuns = 100

// forgotten picks the ended runs whose workflows the records check deletes
// (at most recordRuns, in id order) and the writes to them the clients had
// answered.
func forgotten(runs []*scriptRun, s *settled, writes []Write) (ids []string, theirs []Write) {
	picked := map[string]bool{}
	for _, r := range runs {
		if len(ids) == recordRuns {
			break
		}
		if v := s.views[r.ID]; v != nil && interpreter.RunState(v.Run.State).Over() {
			ids = append(ids, r.ID)
			picked[r.ID] = true
		}
	}
	for _, w := range writes {
		if picked[w.RunID] {
			theirs = append(theirs, w)
		}
	}
	return ids, theirs
}

// checkRecords: a requestId replays to its first answer once Temporal has
// forgotten its run, as after the namespace's retention. Temporal answers
// every other replay of a soak itself (no run continues as new, no closed
// workflow is past its retention), so this is where Baton's record of
// answers is read. It deletes the workflows of some ended runs, waits
// until Temporal no longer knows them, and replays every write to them.
func checkRecords(ctx context.Context, c0 *Client, temporalAddr string, runs []*scriptRun, s *settled, writes []Write) Check {
	c := Check{Name: "records"}
	ids, theirs := forgotten(runs, s, writes)
	c.Detail = fmt.Sprintf("%d requestIds of %d ended runs replayed from the record, their workflows deleted", len(theirs), len(ids))
	if len(ids) == 0 {
		return c
	}
	tc, err := client.Dial(client.Options{HostPort: temporalAddr, Namespace: temporalNamespace})
	if err != nil {
		c.breakf("reach Temporal: %v", err)
		return c
	}
	defer tc.Close()
	for _, id := range ids {
		_, err := tc.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
			Namespace: temporalNamespace, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id},
		})
		if err != nil {
			c.breakf("delete the workflow of run %s: %v", id, err)
			return c
		}
	}
	// Temporal deletes in the background: wait until it knows none of them.
	deadline := time.Now().Add(3 * time.Minute)
	for _, id := range ids {
		for {
			_, err := tc.DescribeWorkflowExecution(ctx, id, "")
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				break
			}
			if time.Now().After(deadline) {
				c.breakf("Temporal still knows run %s 3 minutes after its workflow was deleted (%v)", id, err)
				return c
			}
			select {
			case <-ctx.Done():
				c.breakf("waiting for run %s to be deleted: %v", id, ctx.Err())
				return c
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	r := checkReplays(ctx, c0, theirs)
	c.Broken = r.Broken
	return c
}
