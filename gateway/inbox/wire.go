package inbox

import (
	"github.com/baton-run/baton/interpreter"
)

// The shapes of tools.md that the inbox reads from tool results. They are
// read, never written, and keep numbers exactly as the tools wrote them.
// Fields the check profile and baton-tools-1 add are optional here, so the
// pages show them when a server sends them and nothing otherwise.

// runView is the run view of get_run, decide and cancel.
type runView struct {
	Run       runInfo    `json:"run"`
	Data      runData    `json:"data"`
	Steps     []stepView `json:"steps"`
	WorkItems []workItem `json:"workItems"`
	Body      string     `json:"body"`
}

type runInfo struct {
	ID        string  `json:"id"`
	Process   string  `json:"process"`
	Version   int     `json:"version"`
	Mode      string  `json:"mode"`
	State     string  `json:"state"`
	Outcome   *string `json:"outcome"`
	Ended     *ended  `json:"ended"`
	StartedBy string  `json:"startedBy"`
	StartedAt string  `json:"startedAt"`
	UpdatedAt string  `json:"updatedAt"`
}

type ended struct {
	By   string  `json:"by"`
	At   string  `json:"at"`
	Note *string `json:"note"`
}

type runData struct {
	Inputs map[string]any       `json:"inputs"`
	Steps  map[string]*stepData `json:"steps"`
}

type stepView struct {
	ID      string  `json:"id"`
	Kind    string  `json:"kind"`
	State   *string `json:"state"`
	Due     string  `json:"due"`
	Overdue *bool   `json:"overdue"`
}

// record is one completion of a step in run data (spec §3.1).
type record struct {
	Output   map[string]any `json:"output"`
	Evidence []evidence     `json:"evidence"`
	Summary  string         `json:"summary"`
	Next     string         `json:"next"`
	Reason   string         `json:"reason"`
	Decision string         `json:"decision"`
	Note     *string        `json:"note"`
	Check    *verdict       `json:"check"`
	By       string         `json:"by"`
	At       string         `json:"at"`
}

// empty reports whether the record holds nothing: a step rewound by a
// rejection has history and no current completion.
func (r *record) empty() bool {
	return r.Output == nil && r.Evidence == nil && r.Summary == "" && r.Next == "" && r.Reason == "" &&
		r.Decision == "" && r.Note == nil && r.Check == nil && r.By == "" && r.At == ""
}

// stepData is run data's steps.<id>: the current record beside history.
type stepData struct {
	record
	History []record `json:"history"`
}

func (d *stepData) UnmarshalJSON(b []byte) error {
	if err := interpreter.DecodeExact(b, &d.record); err != nil {
		return err
	}
	var h struct {
		History []record `json:"history"`
	}
	if err := interpreter.DecodeExact(b, &h); err != nil {
		return err
	}
	d.History = h.History
	return nil
}

type evidence struct {
	Kind   string `json:"kind"`
	Ref    string `json:"ref"`
	SHA256 string `json:"sha256"`
	URL    string `json:"url"`
}

// workItem is a work item as get_run and get_work give it.
type workItem struct {
	ID         string              `json:"id"`
	StepID     string              `json:"stepId"`
	Kind       string              `json:"kind"`
	Text       string              `json:"text"`
	Output     interpreter.Fields  `json:"output"`
	Evidence   []string            `json:"evidence"`
	Next       []interpreter.Route `json:"next"`
	AssignedTo assignee            `json:"assignedTo"`
	Snapshot   string              `json:"snapshot"`
	Due        *string             `json:"due"`
	Escalation *escalation         `json:"escalation"`
	Handoff    *handoff            `json:"handoff"`
	Mode       string              `json:"mode"`
	Decide     struct {
		Decisions []string `json:"decisions"`
	} `json:"decide"`
}

type assignee struct {
	Group  string `json:"group"`
	Person string `json:"person"`
}

// escalation is set on an escalated agent step; a check that was unsure
// adds its verdict and the held submission (profile-check §3).
type escalation struct {
	Note      string     `json:"note"`
	By        string     `json:"by"`
	At        string     `json:"at"`
	Check     *verdict   `json:"check"`
	Candidate *candidate `json:"candidate"`
}

type candidate struct {
	Output   map[string]any `json:"output"`
	Evidence []evidence     `json:"evidence"`
	Summary  string         `json:"summary"`
	Next     string         `json:"next"`
	Reason   string         `json:"reason"`
	By       string         `json:"by"`
	At       string         `json:"at"`
}

type handoff struct {
	Progress string    `json:"progress"`
	Returned *returned `json:"returned"`
	Issues   []string  `json:"issues"`
	Check    *verdict  `json:"check"`
}

type returned struct {
	Note string `json:"note"`
	By   string `json:"by"`
	At   string `json:"at"`
}

// verdict is a check verdict (profile-check §3, check-verdict.json).
type verdict struct {
	Verdict   string     `json:"verdict"`
	Advisory  bool       `json:"advisory"`
	Model     string     `json:"model"`
	Questions []question `json:"questions"`
	Truncated bool       `json:"truncated"`
	At        string     `json:"at"`
}

type question struct {
	Ask        string   `json:"ask"`
	Kind       string   `json:"kind"`
	Answer     any      `json:"answer"`
	Confidence *float64 `json:"confidence"`
	Result     string   `json:"result"`
}

// workList is get_work's result for a person or operator.
type workList struct {
	Items []struct {
		RunID    string   `json:"runId"`
		Process  string   `json:"process"`
		Version  int      `json:"version"`
		Mode     string   `json:"mode"`
		WorkItem workItem `json:"workItem"`
	} `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// runList is list_runs' result.
type runList struct {
	Items []struct {
		ID        string         `json:"id"`
		Process   string         `json:"process"`
		Version   int            `json:"version"`
		State     string         `json:"state"`
		Outcome   *string        `json:"outcome"`
		StartedAt string         `json:"startedAt"`
		UpdatedAt string         `json:"updatedAt"`
		Inputs    map[string]any `json:"inputs"`
	} `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// uploaded is upload's result.
type uploaded struct {
	ID     string `json:"id"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// described is the part of describe's result the inbox uses.
type described struct {
	MaxUploadBytes int64 `json:"maxUploadBytes"`
}
