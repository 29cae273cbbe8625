// Package drive walks runs of a process to their end through one layer of
// Baton: the run machine in process (Machine), the workflow on Temporal
// through the workflows client (Temporal), or the gateway over MCP (MCP).
// The walk (Walk) is written once, over the Driver interface; every
// layer's tests run it through drivetest, and the load tool (baton bench)
// runs it too.
//
// A Driver reports a refusal as an *interpreter.Error, exactly as the tools
// do; any other error is the layer failing.
package drive

import (
	"context"
	"time"

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

// A WorkLister lists the work open to an identity, as get_work does. The
// machine and the gateway list work; the workflow alone does not (its
// listing is the read model the gateway reads).
type WorkLister interface {
	// GetWork returns every page of get_work for who, limited to runs of
	// process when it is not empty.
	GetWork(ctx context.Context, who Who, process string) (*WorkList, error)
}

// WorkList is get_work's answer: ready agent steps for an agent, open work
// items for a person or operator.
type WorkList struct {
	Agent  []interpreter.AgentWork
	Person []interpreter.PersonWork
}

// A Clock is a driver whose time the caller moves: the machine's, which
// takes time as a parameter. Drivers on the wall clock are not Clocks, and
// walks that need to move time (a lease running out) run only on Clocks.
type Clock interface {
	// Now is the driver's time.
	Now() time.Time
	// Next returns the earliest time at which time alone changes a run the
	// driver holds (a lease ending, a due time, a wait), and false when
	// nothing is scheduled.
	Next() (time.Time, bool)
	// Advance moves the driver's time to t, never back, and applies
	// everything that falls due by then.
	Advance(ctx context.Context, t time.Time) error
}
