package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/baton-run/baton/activities/downstream"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// CallTool sends one call to a downstream tool server (profile-tools
// §6.3), with the call's idempotency key, to the endpoint the registration
// names as it stands now (the test endpoint in a test run). The tool's
// answer is the result, isError or not; a JSON-RPC refusal is a failed
// result. Otherwise it fails with type workflows.CallNotSent when the call
// surely did not reach the tool, or workflows.CallNoAnswer when it may
// have: the workflow retries or journals accordingly. The secret is read
// here, at the moment of the call, and never leaves this process.
func (a *Activities) CallTool(ctx context.Context, org string, need *interpreter.CallNeeded) (*workflows.CallOutput, error) {
	server, tool, ok := interpreter.SplitToolRef(need.Tool)
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%q is not server/tool", need.Tool), workflows.CallNotSent, nil)
	}
	reg, err := a.store.GetToolServer(ctx, org, server)
	if errors.Is(err, store.ErrNotFound) {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("tool server %s is no longer registered; nothing was sent", server), workflows.CallNotSent, nil)
	}
	if err != nil {
		return nil, temporal.NewApplicationError(err.Error(), workflows.CallNotSent)
	}
	ep, send := downstream.EndpointFor(reg, need.Test, need.Policy)
	if !send {
		return &workflows.CallOutput{Result: interpreter.TestRunResult(need.Tool)}, nil
	}
	if need.Timeout > 0 {
		ep.Timeout = need.Timeout
	}
	res, err := a.downstream.Call(ctx, downstream.Call{Endpoint: ep, Tool: tool, Arguments: need.Arguments, IdempotencyKey: need.Key})
	if err == nil {
		return &workflows.CallOutput{Result: res.JSON, IsError: res.IsError}, nil
	}
	var ce *downstream.CallError
	if !errors.As(err, &ce) {
		return nil, temporal.NewApplicationError(err.Error(), workflows.CallNoAnswer)
	}
	switch ce.Kind {
	case downstream.Refused:
		return &workflows.CallOutput{Result: ce.Result(), IsError: true}, nil
	case downstream.NotSent:
		a.opts.Logger.Warn("downstream call not sent", "tool", need.Tool, "error", err)
		return nil, temporal.NewApplicationError(err.Error(), workflows.CallNotSent)
	default:
		a.opts.Logger.Warn("downstream call got no answer", "tool", need.Tool, "error", err)
		return nil, temporal.NewApplicationError(err.Error(), workflows.CallNoAnswer)
	}
}
