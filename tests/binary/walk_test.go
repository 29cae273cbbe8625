package binary

import (
	"context"
	"fmt"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/interpreter"
)

// The identities of either organization: they have the same ids in both.
var (
	starter  = drive.Who{ID: "dana@example.com", Kind: interpreter.ActorPerson}
	agent    = drive.Who{ID: "a_intake", Kind: interpreter.ActorAgent}
	reviewer = drive.Who{ID: "rev@example.com", Kind: interpreter.ActorPerson, Groups: []string{"reviewers"}}
	operator = drive.Who{ID: "u_ops", Kind: interpreter.ActorOperator, Groups: []string{interpreter.DefaultOperators}}
)

// intake is what one walk of the intake process left behind.
type intake struct {
	runID    string
	file     string // the letter's file id
	fileName string
	ticket   string // the crm's ticket
	subject  string
	item     interpreter.WorkItem // the reviewer's, open when !decided
	ended    bool
}

// walkIntake walks one run of intake as org's identities through drv, up
// to the reviewer's item, or to its end with decide: start, claim, upload
// the letter, call crm/create_ticket, submit, and approve.
func walkIntake(ctx context.Context, drv *drive.MCP, tag string, decide bool) (*intake, error) {
	v, err := drv.Start(ctx, starter, "intake", nil, "")
	if err != nil {
		return nil, err
	}
	in := &intake{runID: v.Run.ID, fileName: "letter-" + tag + ".txt", subject: "letter " + tag}
	c, err := drv.Claim(ctx, agent, in.runID, "open")
	if err != nil {
		return in, err
	}
	if in.file, err = drv.Upload(ctx, agent, in.fileName, []byte("Dear support, "+tag)); err != nil {
		return in, err
	}
	var called struct {
		Status string `json:"status"`
		Result struct {
			StructuredContent struct {
				Ticket string `json:"ticket"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	var res map[string]any
	args := map[string]any{"token": c.Token, "tool": "crm/create_ticket", "requestId": drive.RequestID(),
		"arguments": map[string]any{"customer": "alice@example.com", "subject": in.subject}}
	if err := drv.Call(ctx, agent, "call_tool", args, &res); err != nil {
		return in, err
	}
	if err := remarshal(res, &called); err != nil {
		return in, err
	}
	if called.Status != "completed" || called.Result.StructuredContent.Ticket == "" {
		return in, fmt.Errorf("call_tool answered %v", res)
	}
	in.ticket = called.Result.StructuredContent.Ticket
	summary := "Opened " + in.ticket + "."
	v, err = drv.Submit(ctx, agent, c.Token, drive.Work{
		Output: map[string]any{"ticket": in.ticket}, Summary: &summary,
		Evidence: []interpreter.Evidence{{Kind: "file", Ref: in.file}},
	})
	if err != nil {
		return in, err
	}
	if len(v.WorkItems) != 1 {
		return in, fmt.Errorf("after submit: work items %+v, want the reviewer's", v.WorkItems)
	}
	in.item = v.WorkItems[0]
	if !decide {
		return in, nil
	}
	v, err = drv.Decide(ctx, reviewer, in.runID, drive.Decision{WorkItemID: in.item.ID, Snapshot: in.item.Snapshot, Decision: "approved"})
	if err != nil {
		return in, err
	}
	if v.Run.State != string(interpreter.RunEnded) {
		return in, fmt.Errorf("after the approval the run is %s", v.Run.State)
	}
	in.ended = true
	return in, nil
}
