// Package drive walks runs of a process to their end through one layer of
// Baton: the run machine, the workflow on Temporal, or the gateway over MCP.
// The walks are written once, over the Driver interface, and every layer's
// tests run them; the load tool (baton bench) runs them too.
//
// A Driver reports a refusal as an *interpreter.Error, exactly as the tools
// do; any other error is the layer failing.
package drive

import (
	"context"

	"github.com/baton-run/baton/interpreter"
)

// Who is the identity making a call.
type Who = interpreter.Actor

// Work is what an agent submits, or what a person's completed decision
// carries.
type Work struct {
	Output   map[string]any
	Evidence []interpreter.Evidence
	Summary  *string
	Next     *string
	Reason   *string
}

// Decision is a person's decision on a work item.
type Decision struct {
	WorkItemID string
	Snapshot   string
	Decision   string
	Note       *string
	// Work is set on completed only.
	Work *Work
}

// Driver runs runs through one layer of Baton. Process names a published
// process; drivers below the registry resolve it themselves.
type Driver interface {
	Start(ctx context.Context, starter Who, process string, inputs map[string]any, mode string) (*interpreter.View, error)
	GetRun(ctx context.Context, who Who, runID string) (*interpreter.View, error)
	Claim(ctx context.Context, agent Who, runID, stepID string) (*interpreter.ClaimWire, error)
	Renew(ctx context.Context, agent Who, token, progress string) (*interpreter.RenewWire, error)
	Submit(ctx context.Context, agent Who, token string, w Work) (*interpreter.View, error)
	Escalate(ctx context.Context, agent Who, token, note string) (*interpreter.View, error)
	Decide(ctx context.Context, who Who, runID string, d Decision) (*interpreter.View, error)
	SendEvent(ctx context.Context, who Who, runID, name string, data map[string]any) (*interpreter.EventResult, error)
	Cancel(ctx context.Context, who Who, runID, reason string) (*interpreter.View, error)
	// Upload stores a file and returns its id, for file evidence.
	Upload(ctx context.Context, who Who, name string, content []byte) (string, error)
}
