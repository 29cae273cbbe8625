package workflows

import enumspb "go.temporal.io/api/enums/v1"

// Names shared by the workflow, the worker, the activities and the gateway.
const (
	// WorkflowName is the workflow type of every run.
	WorkflowName = "ProcessRun"
	// DefaultTaskQueue is the task queue runs use unless configured.
	DefaultTaskQueue = "baton"

	// Updates: every write to a run.
	UpdateStart     = "start"
	UpdateClaim     = "claim"
	UpdateRenew     = "renew"
	UpdateSubmit    = "submit"
	UpdateEscalate  = "escalate"
	UpdateDecide    = "decide"
	UpdateCancel    = "cancel"
	UpdateSendEvent = "send_event"
	UpdateCallTool  = "call_tool"

	// SignalEvent delivers an event from a system or an SRE speaking
	// Temporal directly; it feeds the same held-event queue as send_event.
	SignalEvent = "event"
	// SignalRefusal records a refused submission's issues into the step's
	// handoff (a refusal itself records nothing in history).
	SignalRefusal = "note_refusal"
	// SignalChildEnded tells a run that one of its process steps' child
	// runs ended (baton-subprocess-1): the child sends it as it closes, so
	// it reaches its parent after the parent continued as new.
	SignalChildEnded = "child_ended"
	// SignalCancel cancels a run with who and why: a parent cancels its
	// children so, and an SRE may too.
	SignalCancel = "cancel"

	// QueryView returns the run view.
	QueryView = "view"
	// QueryKept says whether the run applied a request: Kept* answers,
	// for a request the gateway finds answered in its record once the
	// run's workflow has closed.
	QueryKept = "kept"
	// QueryStart returns the answer the run keeps for its start
	// (StartAnswer), for a start whose update the run's workflow closed
	// without (Client.StartRun).
	QueryStart = "start_answer"

	// Activities the workflow runs, by name.
	ActivityPublishRun    = "PublishRun"
	ActivityNotifyOverdue = "NotifyOverdue"
	// ActivityNotify delivers a notice to one channel of the run's
	// organization (docs/notifications.md); PublishRun names them.
	ActivityNotify        = "Notify"
	ActivityCancelRequest = "CancelRequest"
	// ActivityEvaluate asks the check profile's evaluator about a
	// submission (profile-check §3).
	ActivityEvaluate = "EvaluateCheck"
	// ActivityCallTool sends one call to a downstream tool server
	// (profile-tools §6.3).
	ActivityCallTool = "CallTool"
	// ActivityLoadChild reads the published version a process step's
	// children run (baton-subprocess-1).
	ActivityLoadChild = "LoadChild"

	// Search attributes the workflow keeps current for SREs.
	SearchProcess = "BatonProcess"
	SearchVersion = "BatonVersion"
	SearchState   = "BatonState"
	SearchOutcome = "BatonOutcome"
	SearchMode    = "BatonMode"
	// SearchOrg is the run's organization: one namespace serves every
	// organization, and an SRE filters one's runs by it.
	SearchOrg = "BatonOrg"
)

// SearchAttributes are the custom search attributes every run sets on its
// workflow, with their types: the namespace must have them registered
// (temporal-dev registers what it is given).
var SearchAttributes = map[string]enumspb.IndexedValueType{
	SearchProcess: enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	SearchVersion: enumspb.INDEXED_VALUE_TYPE_INT,
	SearchState:   enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	SearchOutcome: enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	SearchMode:    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	SearchOrg:     enumspb.INDEXED_VALUE_TYPE_KEYWORD,
}
