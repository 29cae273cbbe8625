package soak

import (
	"sort"
	"sync"
	"time"
)

// scriptRun is one run a script started, and what its script allows of it.
type scriptRun struct {
	ID      string
	Process string
	Script  string
	// Ends are the states its script may leave it in: "ended ok",
	// "cancelled", or "waiting" (left open on a person's item).
	Ends []string
	// Tokens are the claim tokens it handed out.
	Tokens []string
	// Err is the script's failure, when it could not finish.
	Err error
}

// ToolCall is one call a script made through call_tool, by its nonce.
type ToolCall struct {
	Tool, Call, RunID string
	// Fate is what the script saw become of it: "completed",
	// "outcome_unknown", fateRefused, or for a refund "rejected" or
	// "cancelled" before it ran.
	Fate string
	// Approved is when the approving decide was first sent (a refund).
	Approved time.Time
}

// fateRefused is the fate of a call refused stale: its lease had ended,
// and it must never reach the tool server.
const fateRefused = "refused"

// runBook is what every script started and called.
type runBook struct {
	mu    sync.Mutex
	runs  map[string]*scriptRun
	calls []*ToolCall
}

func newRuns() *runBook { return &runBook{runs: map[string]*scriptRun{}} }

func (r *runBook) add(run *scriptRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs[run.ID] = run
}

func (r *runBook) token(runID, token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if run := r.runs[runID]; run != nil {
		run.Tokens = append(run.Tokens, token)
	}
}

func (r *runBook) failed(runID string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if run := r.runs[runID]; run != nil && run.Err == nil {
		run.Err = err
	}
}

func (r *runBook) call(c *ToolCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

// all returns every run, by id.
func (r *runBook) all() []*scriptRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*scriptRun, 0, len(r.runs))
	for _, run := range r.runs {
		out = append(out, run)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// toolCalls returns every tool call the scripts made.
func (r *runBook) toolCalls() []*ToolCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*ToolCall(nil), r.calls...)
}
