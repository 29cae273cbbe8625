package gateway

import (
	"context"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/store"
)

// familyChildren is how many children Family names at most; list_runs
// with parent pages through all of them.
const familyChildren = 100

// Family tells where a run stands among the runs of baton-subprocess-1,
// from the read model of the identity's organization: the run and process
// step that started it ("" for a run start_run started), and the first
// runs its own process steps started, oldest first, with more when there
// are others. A run's views stay core-2's; the inbox and the run resource
// show these links beside them.
func (g *Gateway) Family(ctx context.Context, id auth.Identity, runID string) (parent, step string, children []string, more bool, err error) {
	org := id.OrgOr(g.opts.Org)
	row, err := g.store.GetRun(ctx, org, runID)
	if err != nil {
		return "", "", nil, false, err
	}
	kids, next, err := g.store.ListRuns(ctx, org, store.RunFilter{Parent: runID}, familyChildren, "")
	if err != nil {
		return "", "", nil, false, err
	}
	for _, k := range kids {
		children = append(children, k.RunID)
	}
	return row.Parent, row.ParentStep, children, next != "", nil
}
