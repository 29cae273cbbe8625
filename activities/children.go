package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// LoadChild reads the published version a process step's children run
// (baton-subprocess-1): its definition, role bindings and own child
// bindings, as a start_run of it would.
func (a *Activities) LoadChild(ctx context.Context, org string, b interpreter.ChildBinding) (*workflows.ChildVersion, error) {
	v, err := a.store.GetVersion(ctx, org, b.Process, b.Version)
	if errors.Is(err, store.ErrNotFound) {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), workflows.ChildVersionGone, err)
	}
	if err != nil {
		return nil, err
	}
	p := &interpreter.Process{}
	if err := json.Unmarshal(v.Definition, p); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("process %s v%d: %v", b.Process, b.Version, err), workflows.ChildVersionGone, err)
	}
	// A run never reads its process's canonical frontmatter (see
	// workflows.Client.StartRun).
	p.Frontmatter = nil
	return &workflows.ChildVersion{Process: p, Roles: v.Roles, Children: v.Children}, nil
}
