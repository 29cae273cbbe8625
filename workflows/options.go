package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/interpreter"
)

// This file holds the options of every activity the run workflow schedules:
// how long each may take and how often Temporal retries it. Each activity
// has one function here, so a change to an activity's timeout or retry is
// one edit in one place.

// evaluateOptions runs the evaluator on a checked submission, retried once
// (SPEC-DECISIONS §28).
func evaluateOptions(stepID string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 3 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 2},
		Summary:             "check " + stepID,
	}
}

// defaultCallTimeout bounds a downstream call whose registration sets no
// timeout.
const defaultCallTimeout = 30 * time.Second

// callOptions sends one call to a downstream tool (profile-tools §6.3): a
// read or idempotency: key call up to interpreter.ToolCallAttempts times
// with the same key, an idempotency: none call once. The activity gets ten
// seconds beyond the call's own timeout.
func callOptions(need *interpreter.CallNeeded) workflow.ActivityOptions {
	attempts := int32(interpreter.ToolCallAttempts)
	if need.Idempotency == interpreter.IdempotencyNone && need.Policy != interpreter.PolicyRead {
		attempts = 1
	}
	timeout := need.Timeout
	if timeout <= 0 {
		timeout = defaultCallTimeout
	}
	return workflow.ActivityOptions{
		StartToCloseTimeout: timeout + 10*time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 500 * time.Millisecond, MaximumAttempts: attempts},
		Summary:             "call " + need.Tool,
	}
}

// loadChildOptions reads the version a process step's children run. A
// store that is down is waited for; a version that is gone is not.
func loadChildOptions(b interpreter.ChildBinding) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute, NonRetryableErrorTypes: []string{ChildVersionGone}},
		Summary:             fmt.Sprintf("read %s v%d", b.Process, b.Version),
	}
}

// publishTries is how long a publish is tried again: through any outage
// of PostgreSQL a run outlives. A local activity without a
// ScheduleToCloseTimeout stops trying at its StartToCloseTimeout, so after
// 10 seconds of an outage the write would answer with its answer stored
// nowhere, and its replay once the run ended would find no record and be
// refused as a reused requestId.
const publishTries = 24 * time.Hour

// publishOptions writes the read model and a write's answer as a local
// activity, each try up to 10 seconds, retried until it succeeds
// (publishTries).
func publishOptions() workflow.LocalActivityOptions {
	return workflow.LocalActivityOptions{
		StartToCloseTimeout:    10 * time.Second,
		ScheduleToCloseTimeout: publishTries,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumInterval: 5 * time.Second},
	}
}

// notifyOptions sends a notification the run asks for (an overdue step);
// nothing waits for it.
func notifyOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 5},
	}
}

// deliverOptions delivers a notice to one channel: up to NotifyAttempts
// tries, backing off from 2s to 5 minutes (about half an hour in all). A
// worker that dies mid-delivery misses its heartbeat, and the next try
// starts 10 seconds later on another.
func deliverOptions(n *interpreter.Notice, channel string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute,
			MaximumAttempts: NotifyAttempts, NonRetryableErrorTypes: []string{NotifyPermanent},
		},
		Summary: string(n.Type) + " to " + channel,
	}
}

// cancelRequestOptions reads who asked Temporal to cancel the run, and why.
func cancelRequestOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	}
}
