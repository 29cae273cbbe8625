package workflows

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/baton-run/baton/interpreter"
)

// Client is everything the gateway does with a run through Temporal: it
// starts runs, sends them writes, reads their view and hands them the
// issues of a refused submission. It owns the workflow and update names,
// workflow ids and their policies, search attributes, the start's dry run,
// the digest echo, and turning an update's failure into the spec's error.
// It is safe for concurrent use.
type Client struct {
	c    client.Client
	opts ClientOptions
}

// ClientOptions configure a Client.
type ClientOptions struct {
	// TaskQueue is where runs' workflows are started. Default
	// DefaultTaskQueue.
	TaskQueue string
}

// ErrNoRun is returned, wrapped, when a run's workflow is not running: the
// run ended and its workflow closed, or no such run was ever started. The
// caller tells them apart from its own records.
var ErrNoRun = errors.New("workflows: the run's workflow is not running")

// NewClient returns a Client over a Temporal client. Nil options mean
// defaults.
func NewClient(c client.Client, opts *ClientOptions) (*Client, error) {
	if c == nil {
		return nil, errors.New("workflows: a Temporal client is required")
	}
	cl := &Client{c: c}
	if opts != nil {
		cl.opts = *opts
	}
	if cl.opts.TaskQueue == "" {
		cl.opts.TaskQueue = DefaultTaskQueue
	}
	return cl, nil
}

// RunID is the id of the run a start_run with requestID starts in org: a
// start retried after a lost answer finds the run it started.
func RunID(org, requestID string) string {
	h := sha256.Sum256([]byte(org + "\x00r_\x00" + requestID))
	return "r_" + hex.EncodeToString(h[:10])
}

// StartRun starts the run in describes and returns the run view its start
// answered. The run's id derives from the organization and the request id
// (RunID): whatever in.RunID holds is replaced. The machine checks the
// start first: a refusal comes back as an *interpreter.Error and nothing
// starts. A start whose request started the run already answers as the
// first time did.
func (c *Client) StartRun(ctx context.Context, in Input) (json.RawMessage, error) {
	if in.RequestID == "" || in.Process == nil || in.Continued != nil {
		return nil, errors.New("workflows: a start needs a request id and a process, and continues nothing")
	}
	if in.Mode == "" {
		in.Mode = interpreter.ModeLive
	}
	in.RunID = RunID(in.Org, in.RequestID)
	in.Lean = true    // see changeLeanStart
	in.Notices = true // see changeNotices
	if in.Process.Frontmatter != nil {
		// A run never reads its process's canonical frontmatter (the
		// registry keeps it, and the hash the run pins covers it): it
		// repeated the steps, up to MaxProcessBytes, in the history's
		// first event and in every continue-as-new.
		p := *in.Process
		p.Frontmatter = nil
		in.Process = &p
	}
	// The machine checks the start before anything is recorded.
	m, err := interpreter.StartRun(in.Start, time.Now())
	if err != nil {
		return nil, err
	}
	op := c.c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID:                       in.RunID,
		TaskQueue:                c.opts.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		StaticSummary:            fmt.Sprintf("%s v%d (%s)", in.Process.Name, in.Version, in.Mode),
		StaticDetails:            staticDetails(in),
		TypedSearchAttributes:    startAttributes(in, m.Run().State),
	}, WorkflowName, in)
	return c.start(ctx, in.RunID, in.Digest, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateID: in.RequestID, UpdateName: UpdateStart, WaitForStage: client.WorkflowUpdateStageCompleted,
			Args: []any{StartRequest{Digest: in.Digest}},
		},
	})
}

// startLook is how long a start waits for its answer before it first
// looks whether its run's workflow closed without it (see start); each
// look waits twice as long as the one before for the next, up to
// startLookMax.
const (
	startLook    = time.Second
	startLookMax = 8 * time.Second
)

// start sends a run's start update with its workflow's start and returns
// the update's answer.
//
// Temporal keeps an update in memory only, until a workflow task accepts
// it, so a start's update can be lost while its workflow starts (a try of
// the update-with-start cut once it created the workflow, the workflow's
// state dropped from the history service's cache) and the run goes on
// without it. A run whose workflow closed then accepts it no more: the
// SDK's retries of the try hear "Workflow was not started: StartDeduped"
// (Unavailable, no type of its own) until ctx runs out, and a later start
// of the same requestId hears WorkflowExecutionAlreadyStarted. The answer
// is the one the run keeps for its start, asked of the closed workflow
// (QueryStart, which a worker answers by replaying it): the view its
// start update answers, byte for byte, which the run recorded in the read
// model too. So a start that waits looks now and then whether the
// workflow closed, and a start told the workflow exists asks it at once.
// A run that cannot tell (a worker from before QueryStart, none at all, a
// run that continued as new) is ErrNoRun, and the caller's records tell.
func (c *Client) start(ctx context.Context, runID, digest string, o client.UpdateWithStartWorkflowOptions) (json.RawMessage, error) {
	uctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		value json.RawMessage
		err   error
	}
	done := make(chan answer, 1)
	go func() {
		h, err := c.c.UpdateWithStartWorkflow(uctx, o)
		if err != nil {
			done <- answer{err: noRun(err)}
			return
		}
		v, err := c.result(uctx, h, digest)
		done <- answer{v, err}
	}()
	wait := startLook
	look := time.NewTimer(wait)
	defer look.Stop()
	for {
		select {
		case a := <-done:
			var started *serviceerror.WorkflowExecutionAlreadyStarted
			if errors.As(a.err, &started) {
				return c.keptStart(ctx, runID, digest, a.err)
			}
			return a.value, a.err
		case <-look.C:
			if !c.closed(ctx, runID) {
				wait = min(2*wait, startLookMax)
				look.Reset(wait)
				continue
			}
			cancel()
			if a := <-done; a.err == nil {
				// It answered as it was stopped.
				return a.value, nil
			}
			return c.keptStart(ctx, runID, digest, fmt.Errorf("%w: workflow %s closed without its start's update", ErrNoRun, runID))
		}
	}
}

// closed says whether the run's workflow closed; false when it could not
// be told.
func (c *Client) closed(ctx context.Context, runID string) bool {
	d, err := c.c.DescribeWorkflowExecution(ctx, runID, "")
	return err == nil && d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
}

// keptStart answers a start from the answer its run keeps (QueryStart),
// checked against the start's digest as result checks an update's; err
// when the run cannot tell.
func (c *Client) keptStart(ctx context.Context, runID, digest string, err error) (json.RawMessage, error) {
	q, qerr := c.c.QueryWorkflow(ctx, runID, "", QueryStart)
	var s StartAnswer
	if qerr == nil {
		qerr = q.Get(&s)
	}
	switch {
	case qerr != nil || (s.Result == nil && !s.Reused):
		return nil, err
	case s.Reused || s.Result.Digest != digest:
		return nil, interpreter.ErrRequestIDReused()
	}
	return s.Result.Value, nil
}

// Write sends w to its run as the update that carries its command, with
// the request id as update id: a retry after a lost answer gets the first
// answer. The caller's organization must be the run's. A refusal comes
// back as an *interpreter.Error; a run whose workflow is not running as
// ErrNoRun.
func (c *Client) Write(ctx context.Context, w Write) (json.RawMessage, error) {
	name, err := UpdateOf(w.Command)
	if err != nil {
		return nil, err
	}
	if w.RunID == "" || w.RequestID == "" {
		return nil, errors.New("workflows: a write needs a run id and a request id")
	}
	h, err := c.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		UpdateID:     w.updateID(),
		WorkflowID:   w.RunID,
		UpdateName:   name,
		Args:         []any{w},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return nil, noRun(err)
	}
	return c.result(ctx, h, w.Digest)
}

// result waits for an update's answer and checks that it answers this
// request: Temporal returns the first answer of an update id whatever the
// arguments, so a reused request id with other arguments shows here.
func (c *Client) result(ctx context.Context, h client.WorkflowUpdateHandle, digest string) (json.RawMessage, error) {
	var res Result
	if err := h.Get(ctx, &res); err != nil {
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && ae.Type() == answeredBeforeType {
			return nil, fmt.Errorf("%w: %w", ErrAnsweredBefore, err)
		}
		if e, ok := AsRefusal(err); ok {
			var ae *temporal.ApplicationError
			if errors.As(err, &ae) && ae.Type() == recordedType {
				return nil, &RecordedRefusal{e}
			}
			if errors.As(err, &ae) && ae.Type() == keptAllType {
				return nil, &FinalRefusal{e}
			}
			return nil, e
		}
		return nil, noRun(err)
	}
	if res.Digest != digest {
		return nil, interpreter.ErrRequestIDReused()
	}
	return res.Value, nil
}

// View returns a running run's view.
func (c *Client) View(ctx context.Context, runID string) (json.RawMessage, error) {
	return c.view(ctx, runID, ViewRequest{})
}

// ViewWithoutBody is View with the body left empty, for a caller that adds
// it from the published version (see Write.OmitBody). A worker from before
// answers with the body.
func (c *Client) ViewWithoutBody(ctx context.Context, runID string) (json.RawMessage, error) {
	return c.view(ctx, runID, ViewRequest{OmitBody: true})
}

func (c *Client) view(ctx context.Context, runID string, r ViewRequest) (json.RawMessage, error) {
	var args []any
	if r != (ViewRequest{}) {
		args = []any{r}
	}
	q, err := c.c.QueryWorkflow(ctx, runID, "", QueryView, args...)
	if err != nil {
		return nil, noRun(err)
	}
	var raw json.RawMessage
	if err := q.Get(&raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// Kept is what a run says of a request it was sent (QueryKept).
type Kept string

const (
	// KeptYes: the run applied the request, under some attempt.
	KeptYes Kept = "kept"
	// KeptNever: the run never applied it, and knows every request it
	// applied since it began.
	KeptNever Kept = "never"
	// KeptUnknown: the run cannot tell (a request may have left its
	// window of ids, or it began under a version that kept none), or it
	// could not be asked (its workflow is gone, no worker answered, a
	// worker of an earlier version has no such query).
	KeptUnknown Kept = "unknown"
)

// KeptRequest asks a run whether it applied the update UpdateID of a
// caller of organization Org (QueryKept).
type KeptRequest struct {
	Org      string `json:"org"`
	UpdateID string `json:"updateId"`
}

// Kept asks w's run, running or closed, whether it applied w: a closed
// workflow is replayed by a worker to answer. A run of another
// organization than w.Org, and any failure to ask, is KeptUnknown.
func (c *Client) Kept(ctx context.Context, w Write) Kept {
	q, err := c.c.QueryWorkflow(ctx, w.RunID, "", QueryKept, KeptRequest{Org: w.Org, UpdateID: w.updateID()})
	if err != nil {
		return KeptUnknown
	}
	var k Kept
	if err := q.Get(&k); err != nil || (k != KeptYes && k != KeptNever) {
		return KeptUnknown
	}
	return k
}

// NoteRefusal hands the issues of a refused submission to the run, for the
// next attempt's handoff.
func (c *Client) NoteRefusal(ctx context.Context, runID string, n interpreter.NoteRefusal) error {
	return noRun(c.c.SignalWorkflow(ctx, runID, "", SignalRefusal, n))
}

// noRun marks the errors that mean the run's workflow is not running: no
// such workflow, or, for a start, one that closed (its id is never
// reused).
func noRun(err error) error {
	var nf *serviceerror.NotFound
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &nf) || errors.As(err, &started) {
		return fmt.Errorf("%w: %w", ErrNoRun, err)
	}
	return err
}

// staticDetails is the markdown the Temporal UI shows as a run's details
// for its whole life. Caller-supplied text goes into code spans fenced so
// that no backtick in it can end them.
func staticDetails(in Input) string {
	inputs, _ := json.Marshal(in.Inputs)
	shown, more := inputs, ""
	if len(inputs) > detailsInputBytes {
		cut := detailsInputBytes
		for cut > 0 && !utf8.RuneStart(inputs[cut]) {
			cut--
		}
		shown, more = inputs[:cut], fmt.Sprintf(" (the first %d of %d bytes; get_run has them all)", cut, len(inputs))
	}
	return fmt.Sprintf("**%s** version %d, content hash %s\n\nStarted by %s (%s), mode %s.\n\nInputs: %s%s",
		in.Process.Name, in.Version, codeSpan(in.Process.Hash), codeSpan(in.Starter.ID), in.Starter.Kind, in.Mode, codeSpan(string(shown)), more)
}

// detailsInputBytes is how much of a run's inputs its details in the
// Temporal UI show. The inputs, up to limits.runDataBytes, are in the
// start's input already, and Temporal bounds a workflow's details where it
// checks them (limit.userMetadataDetailsSize, 20,000 bytes by default).
const detailsInputBytes = 4 << 10

// codeSpan renders s as a markdown code span whose fence is longer than
// any run of backticks inside it (CommonMark §6.1).
func codeSpan(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	return fence + " " + strings.ReplaceAll(s, "\n", " ") + " " + fence
}

// startAttributes are the search attributes a run starts with, in state
// (the state its machine begins in): the run upserts only what changes.
func startAttributes(in Input, state interpreter.RunState) temporal.SearchAttributes {
	attrs := []temporal.SearchAttributeUpdate{
		keyProcess.ValueSet(in.Process.Name),
		keyVersion.ValueSet(int64(in.Version)),
		keyMode.ValueSet(in.Mode),
		keyState.ValueSet(string(state)),
	}
	if in.Org != "" {
		attrs = append(attrs, keyOrg.ValueSet(in.Org))
	}
	return temporal.NewSearchAttributes(attrs...)
}
