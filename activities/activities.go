// Package activities holds the side effects a run's workflow asks for:
// writing the run's read-model rows, delivering its events to the
// organization's notification channels, and reading a Temporal
// cancellation request's who and why.
package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/activities/downstream"
	"github.com/baton-run/baton/activities/evaluator"
	"github.com/baton-run/baton/internal/notify"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/telemetry"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// Activities are the workflow's side effects and their dependencies.
type Activities struct {
	store      *store.Store
	temporal   client.Client
	downstream *downstream.Client
	notifier   *notify.Notifier
	opts       Options
}

// Options configure the activities.
type Options struct {
	// WebhookURL, when set, receives a JSON POST for every overdue
	// notification of every organization. Default: none.
	WebhookURL string
	// Channels are each organization's notification channels (by
	// organization id), where runs deliver their events. Default: none.
	Channels map[string]*notify.File
	// HTTPClient sends webhooks. Default: a client with a 10s timeout.
	HTTPClient *http.Client
	// Logger receives notifications and failures. Default: slog.Default().
	Logger *slog.Logger
	// InboxURL is the web inbox's address, such as
	// https://baton.example.com/inbox/. When set, every notification
	// carries a url leading to the item, InboxURL + "runs/RUN/items/ITEM"
	// (or to the run, InboxURL + "runs/RUN", for a step without one).
	// Default: none.
	InboxURL string
	// Evaluator answers the check profile's questions (profile-check).
	// Default: none; a run reaching a checked step then gets retry until
	// one is configured, and publication refuses checked processes.
	Evaluator evaluator.Evaluator
	// Downstream calls the tools of the baton-tools-1 profile. Default:
	// downstream.New(nil), reporting every call to Metrics when it is set.
	Downstream *downstream.Client
	// Metrics, when set, is told of every read-model write that changed
	// the read model (its lag, and the runs it shows started and ended),
	// of every evaluator call (New wraps Evaluator with
	// evaluator.Observed) and, with the default Downstream, of every
	// downstream call. *telemetry.Metrics is one. Default none.
	Metrics RunMetrics
}

// RunMetrics records what the activities do: what the read model's writes
// show, and the calls to the evaluator and to downstream tool servers.
type RunMetrics interface {
	// EvaluatorCall counts one evaluator call with its outcome; it is the
	// observer evaluator.Observed takes.
	EvaluatorCall(outcome string, took time.Duration)
	// DownstreamCall counts one downstream tool call with its outcome; it
	// is the observer downstream.Options.Observe takes.
	DownstreamCall(server, tool, outcome string, took time.Duration)
	// ReadModelWritten records the time from a run's change to the write
	// that shows it.
	ReadModelWritten(lag time.Duration)
	// RunStarted counts a run started.
	RunStarted(org, process, mode string)
	// RunEnded counts a run ended with its outcome ("cancelled" for a
	// cancelled run).
	RunEnded(org, process, mode, outcome string)
}

// New returns the activities over a store (the read model) and a Temporal
// client (to read cancellation requests). Nil options mean defaults.
func New(s *store.Store, c client.Client, opts *Options) (*Activities, error) {
	if s == nil {
		return nil, fmt.Errorf("activities: a store is required")
	}
	a := &Activities{store: s, temporal: c}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.HTTPClient == nil {
		a.opts.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if a.opts.Logger == nil {
		a.opts.Logger = slog.Default()
	}
	var dopts *downstream.Options
	if m := a.opts.Metrics; m != nil {
		if a.opts.Evaluator != nil {
			a.opts.Evaluator = evaluator.Observed(a.opts.Evaluator, m.EvaluatorCall)
		}
		dopts = &downstream.Options{Observe: m.DownstreamCall}
	}
	if a.opts.Downstream == nil {
		d, err := downstream.New(dopts)
		if err != nil {
			return nil, err
		}
		a.opts.Downstream = d
	}
	a.downstream = a.opts.Downstream
	n, err := a.newNotifier()
	if err != nil {
		return nil, err
	}
	a.notifier = n
	return a, nil
}

// Register registers every activity under the name the workflow uses.
func (a *Activities) Register(r interface {
	RegisterActivityWithOptions(a interface{}, options activity.RegisterOptions)
}) {
	r.RegisterActivityWithOptions(a.PublishRun, activity.RegisterOptions{Name: workflows.ActivityPublishRun})
	r.RegisterActivityWithOptions(a.NotifyOverdue, activity.RegisterOptions{Name: workflows.ActivityNotifyOverdue})
	r.RegisterActivityWithOptions(a.Notify, activity.RegisterOptions{Name: workflows.ActivityNotify})
	r.RegisterActivityWithOptions(a.Evaluate, activity.RegisterOptions{Name: workflows.ActivityEvaluate})
	r.RegisterActivityWithOptions(a.CallTool, activity.RegisterOptions{Name: workflows.ActivityCallTool})
	r.RegisterActivityWithOptions(a.CancelRequest, activity.RegisterOptions{Name: workflows.ActivityCancelRequest})
	r.RegisterActivityWithOptions(a.LoadChild, activity.RegisterOptions{Name: workflows.ActivityLoadChild})
	r.RegisterActivityWithOptions(a.WatchChildren, activity.RegisterOptions{Name: workflows.ActivityWatchChildren})
}

// PublishRun writes what a run publishes after a change, in one round
// trip: its read-model rows (l, nil when they did not change; a write
// older than the stored one changes nothing) and the answer of the write
// that changed it (a, nil for a change made by time or a signal). It also
// names the channels that take each of the run's notices
// (Published.Channels), so that a run learns them without a round trip of
// its own. In a traced worker the write is the span "read model write".
//
// A write whose requestId was another call's stores nothing and answers
// Published.Reused; the run then discards the write.
func (a *Activities) PublishRun(ctx context.Context, org string, l *interpreter.Listing, ans *workflows.Answered, notices []*interpreter.Notice) (out workflows.Published, err error) {
	out, err = a.publishRun(ctx, org, l, ans)
	if err == nil && !out.Reused && len(notices) > 0 {
		out.Channels = a.plan(org, notices)
	}
	return out, err
}

func (a *Activities) publishRun(ctx context.Context, org string, l *interpreter.Listing, ans *workflows.Answered) (_ workflows.Published, err error) {
	ctx, span := telemetry.Start(ctx, "read model write")
	defer func() { telemetry.End(span, err) }()
	var answer *store.Request
	// A write without a digest came from a caller other than the gateway
	// (an SRE with Temporal's CLI): no requestId replays it, so there is
	// no answer to record, while its change goes to the read model.
	if ans != nil && ans.Digest != "" {
		answer = &store.Request{Org: org, RequestID: ans.RequestID, Tool: ans.Tool, Digest: ans.Digest, Result: ans.Result, RunID: ans.RunID}
		if ans.Refused {
			if err := a.store.ReleaseHeld(ctx, nil, *answer); err != nil {
				return workflows.Published{}, err
			}
			answer = nil
		}
	}
	if l == nil {
		if answer == nil {
			return workflows.Published{}, nil
		}
		return published(a.store.PublishRun(ctx, nil, nil, nil, answer))
	}
	inputs, err := json.Marshal(l.Inputs)
	if err != nil {
		return workflows.Published{}, err
	}
	row := store.RunRow{
		Org: org, RunID: l.RunID, Process: l.Process, Version: l.Version, State: l.State,
		Outcome: l.Outcome, Mode: l.Mode, Inputs: inputs, StartedBy: l.StartedBy,
		StartedAt: l.StartedAt, UpdatedAt: l.UpdatedAt, Seq: l.Seq, FinalView: l.Final,
	}
	if l.Parent != nil {
		row.Parent, row.ParentStep = l.Parent.RunID, l.Parent.StepID
	}
	work := make([]store.WorkRow, len(l.Work))
	for i, w := range l.Work {
		work[i] = store.WorkRow{
			StepID: w.StepID, WorkItemID: w.WorkItemID, Kind: store.WorkKind(w.Kind),
			ReadySince: w.ReadySince, Due: w.Due, Overdue: w.Overdue,
			// Emails compare without case; the store compares exactly,
			// so the key is normalized here as get_work normalizes the
			// caller's.
			AssignedGroup: w.Group, AssignedPerson: strings.ToLower(w.Person), AlsoGroups: w.AlsoGroups,
			Handoff: w.Handoff, Item: w.Item,
		}
	}
	applied, err := a.store.PublishRun(ctx, nil, &row, work, answer, l.Attempts...)
	span.SetAttributes(attribute.String("baton.run_id", l.RunID), attribute.Int64("baton.seq", l.Seq), attribute.Bool("baton.applied", applied))
	if err == nil && applied {
		a.observe(org, l, ans)
	}
	return published(applied, err)
}

// published is PublishRun's answer to the store's.
func published(_ bool, err error) (workflows.Published, error) {
	if errors.Is(err, store.ErrRequestIDReused) {
		return workflows.Published{Reused: true}, nil
	}
	return workflows.Published{}, err
}

// observe tells the metrics of a write that changed the read model (an
// older or repeated write changes nothing, so a retried write counts
// once): the lag since the change it shows (the run's updatedAt), the
// run's start (the write that carries start_run's answer) and its end.
func (a *Activities) observe(org string, l *interpreter.Listing, ans *workflows.Answered) {
	m := a.opts.Metrics
	if m == nil {
		return
	}
	m.ReadModelWritten(time.Since(l.UpdatedAt))
	if ans != nil && ans.Tool == workflows.ToolOf(workflows.UpdateStart) {
		m.RunStarted(org, l.Process, l.Mode)
	}
	if interpreter.RunState(l.State).Over() {
		outcome := l.Outcome
		if outcome == "" {
			outcome = l.State
		}
		m.RunEnded(org, l.Process, l.Mode, outcome)
	}
}

// NotifyOverdue tells a step's assignee and the operators that its due
// time passed: a log line and, when configured, a webhook. Both name the
// run's organization (org, and effect.org in the webhook's JSON): one
// deployment serves many, and the operators are the organization's.
func (a *Activities) NotifyOverdue(ctx context.Context, e interpreter.Effect) error {
	attrs := []any{"org", e.Org, "run", e.RunID, "step", e.StepID, "due", e.Due, "operators", e.Operators}
	if e.AssignedTo != nil {
		attrs = append(attrs, "group", e.AssignedTo.Group, "person", e.AssignedTo.Person)
	}
	link := a.inboxLink(e)
	if link != "" {
		attrs = append(attrs, "url", link)
	}
	a.opts.Logger.Info("step overdue", attrs...)
	if a.opts.WebhookURL == "" {
		return nil
	}
	msg := map[string]any{"event": "step_overdue", "org": e.Org, "effect": e}
	if link != "" {
		msg["url"] = link
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.opts.WebhookURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.opts.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("overdue webhook: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("overdue webhook: %s", resp.Status)
	}
	return nil
}

// inboxLink is the inbox page of an overdue step's work item, or of its
// run; "" without an inbox.
func (a *Activities) inboxLink(e interpreter.Effect) string {
	if a.opts.InboxURL == "" {
		return ""
	}
	return workflows.InboxLink(a.opts.InboxURL, e.RunID, e.WorkItemID)
}

// CancelRequest reads who asked Temporal to cancel a workflow and why,
// from its WorkflowExecutionCancelRequested event. Workflow code cannot see
// them; history records them when the caller sent them.
func (a *Activities) CancelRequest(ctx context.Context, workflowID, runID string) (workflows.CancelInfo, error) {
	var info workflows.CancelInfo
	if a.temporal == nil {
		return info, nil
	}
	it := a.temporal.GetWorkflowHistory(ctx, workflowID, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return info, err
		}
		if ev.GetEventType() != enums.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED {
			continue
		}
		attrs := ev.GetWorkflowExecutionCancelRequestedEventAttributes()
		info = workflows.CancelInfo{Identity: attrs.GetIdentity(), Reason: attrs.GetCause()}
	}
	return info, nil
}
