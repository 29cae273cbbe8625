package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/interpreter"
)

// Check is one guarantee the soak checked, and what broke it.
type Check struct {
	Name string
	// Detail says what was checked, with its counts.
	Detail string
	// Broken lists what breaks the guarantee; empty when it holds.
	Broken []string
}

// OK reports whether the guarantee held.
func (c *Check) OK() bool { return len(c.Broken) == 0 }

func (c *Check) breakf(format string, args ...any) {
	c.Broken = append(c.Broken, fmt.Sprintf(format, args...))
}

// listed is a list_runs item, what the checks read of it.
type listed struct {
	ID      string  `json:"id"`
	Process string  `json:"process"`
	State   string  `json:"state"`
	Outcome *string `json:"outcome"`
}

// settled is what the checks read of the deployment once it settled.
type settled struct {
	views  map[string]*view      // get_run of every run a script started
	listed map[string]listed     // list_runs of the mix's processes
	agent  map[string][]string   // runId → steps get_work offers an agent
	people map[string][]workSeen // runId → items get_work lists to people
}

// workSeen is a work item get_work listed, and to whom.
type workSeen struct {
	who      string
	id, step string
	snapshot string
}

// read reads every run, the listings and the open work, through the
// gateways as the clients would.
func read(ctx context.Context, c *Client, runs []*scriptRun) (*settled, error) {
	s := &settled{views: map[string]*view{}, listed: map[string]listed{}, agent: map[string][]string{}, people: map[string][]workSeen{}}
	var mu sync.Mutex
	var firstErr error
	ids := make(chan string)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := newClient(c.urls, i, c.token, newJournal())
			defer cl.Close()
			for id := range ids {
				var v view
				err := cl.Call(ctx, operator, "get_run", map[string]any{"runId": id}, id, &v)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("get_run %s: %w", id, err)
				}
				if err == nil {
					s.views[id] = &v
				}
				mu.Unlock()
			}
		}()
	}
	for _, r := range runs {
		ids <- r.ID
	}
	close(ids)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	for _, p := range []string{ProcessReview, ProcessEvents, ProcessTools} {
		if err := page(ctx, c, operator, "list_runs", map[string]any{"process": p}, func(raw json.RawMessage) error {
			var it listed
			if err := json.Unmarshal(raw, &it); err != nil {
				return err
			}
			s.listed[it.ID] = it
			return nil
		}); err != nil {
			return nil, err
		}
	}
	agent := drive.Who{ID: "a_soak_reader", Kind: interpreter.ActorAgent}
	if err := page(ctx, c, agent, "get_work", nil, func(raw json.RawMessage) error {
		var it interpreter.AgentWork
		if err := json.Unmarshal(raw, &it); err != nil {
			return err
		}
		s.agent[it.RunID] = append(s.agent[it.RunID], it.StepID)
		return nil
	}); err != nil {
		return nil, err
	}
	for _, who := range []drive.Who{reviewerN(0), approver, operator} {
		if err := page(ctx, c, who, "get_work", nil, func(raw json.RawMessage) error {
			var it interpreter.PersonWork
			if err := json.Unmarshal(raw, &it); err != nil {
				return err
			}
			s.people[it.RunID] = append(s.people[it.RunID], workSeen{who: who.ID, id: it.WorkItem.ID, step: it.WorkItem.StepID, snapshot: it.WorkItem.Snapshot})
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// page calls a listing tool page after page, handing each item to take.
func page(ctx context.Context, c *Client, who drive.Who, tool string, args map[string]any, take func(json.RawMessage) error) error {
	cursor := ""
	for {
		a := map[string]any{"limit": 100}
		for k, v := range args {
			a[k] = v
		}
		if cursor != "" {
			a["cursor"] = cursor
		}
		var p struct {
			Items      []json.RawMessage `json:"items"`
			NextCursor *string           `json:"nextCursor"`
		}
		if err := c.Call(ctx, who, tool, a, "", &p); err != nil {
			return fmt.Errorf("%s: %w", tool, err)
		}
		for _, it := range p.Items {
			if err := take(it); err != nil {
				return fmt.Errorf("%s: %w", tool, err)
			}
		}
		if p.NextCursor == nil || *p.NextCursor == "" {
			return nil
		}
		cursor = *p.NextCursor
	}
}

// end names a view's state as scripts name their ends.
func end(v *view) string {
	switch {
	case v.Run.State == string(interpreter.RunEnded) && v.Run.Outcome != nil:
		return "ended " + *v.Run.Outcome
	default:
		return v.Run.State
	}
}

// scheduled reports whether an open run has something that will move it:
// a step an agent can claim or holds, a person's item, a wait.
func scheduled(v *view) bool {
	if len(v.WorkItems) > 0 {
		return true
	}
	for _, s := range v.Steps {
		if s.State != nil && (*s.State == "ready" || *s.State == "claimed" || *s.State == "waiting") {
			return true
		}
	}
	return false
}

// checkScripts: every script ran to its end.
func checkScripts(runs []*scriptRun, unstarted []error) Check {
	c := Check{Name: "scripts"}
	failed := 0
	for _, r := range runs {
		if r.Err != nil {
			failed++
			c.breakf("%s run %s: %v", r.Script, r.ID, r.Err)
		}
	}
	for _, err := range unstarted {
		c.breakf("a script could not start its run: %v", err)
	}
	c.Detail = fmt.Sprintf("%d runs' scripts, %d failed, %d never started a run", len(runs), failed, len(unstarted))
	return c
}

// checkRuns: every run reached a state its script allows, and an open run
// has something scheduled.
func checkRuns(runs []*scriptRun, s *settled) Check {
	c := Check{Name: "runs"}
	byEnd := map[string]int{}
	for _, r := range runs {
		v := s.views[r.ID]
		if v == nil {
			c.breakf("run %s (%s): no view", r.ID, r.Script)
			continue
		}
		e := end(v)
		byEnd[e]++
		allowed := false
		for _, want := range r.Ends {
			allowed = allowed || want == e
		}
		if !allowed {
			c.breakf("run %s (%s) is %s, its script allows %s: %s", r.ID, r.Script, e, strings.Join(r.Ends, " or "), v.StepStates())
		}
		if !interpreter.RunState(v.Run.State).Over() && !scheduled(v) {
			c.breakf("run %s (%s) is %s with nothing scheduled: %s", r.ID, r.Script, v.Run.State, v.StepStates())
		}
	}
	c.Detail = fmt.Sprintf("%d runs: %s", len(runs), counts(byEnd))
	return c
}

// checkViews: every run's view agrees with the read model: list_runs
// holds exactly the runs started, in the state get_run shows, and
// get_work lists an open run's ready steps and items, and nothing of an
// ended run.
func checkViews(runs []*scriptRun, s *settled) Check {
	c := Check{Name: "views"}
	mine := map[string]bool{}
	for _, r := range runs {
		mine[r.ID] = true
		v := s.views[r.ID]
		if v == nil {
			continue
		}
		it, ok := s.listed[r.ID]
		switch {
		case !ok:
			c.breakf("run %s is missing from list_runs", r.ID)
		case it.State != v.Run.State || str(it.Outcome) != str(v.Run.Outcome):
			c.breakf("run %s: list_runs says %s %s, get_run %s %s", r.ID, it.State, str(it.Outcome), v.Run.State, str(v.Run.Outcome))
		}
		var ready []string
		for _, st := range v.Steps {
			if st.State != nil && *st.State == "ready" && st.Kind == interpreter.KindAgent {
				ready = append(ready, st.ID)
			}
		}
		if got := s.agent[r.ID]; !sameSet(got, ready) {
			c.breakf("run %s (%s): get_work offers agents %v, get_run shows ready %v", r.ID, v.Run.State, got, ready)
		}
		var items, seen []string
		for _, w := range v.WorkItems {
			items = append(items, w.ID+"@"+w.Snapshot)
		}
		for _, w := range s.people[r.ID] {
			seen = append(seen, w.id+"@"+w.snapshot)
		}
		if !sameSet(dedupe(seen), items) {
			c.breakf("run %s (%s): get_work lists items %v, get_run shows %v", r.ID, v.Run.State, seen, items)
		}
	}
	for id, it := range s.listed {
		if !mine[id] {
			c.breakf("list_runs shows run %s (%s, %s) that no script started", id, it.Process, it.State)
		}
	}
	c.Detail = fmt.Sprintf("%d runs: get_run, list_runs and get_work agree", len(runs))
	return c
}

// checkOpenWork: no open work survives its run.
func checkOpenWork(runs []*scriptRun, s *settled) Check {
	c := Check{Name: "open work"}
	over := 0
	for _, r := range runs {
		v := s.views[r.ID]
		if v == nil || !interpreter.RunState(v.Run.State).Over() {
			continue
		}
		over++
		if len(v.WorkItems) > 0 {
			c.breakf("run %s is %s with work items %d open", r.ID, v.Run.State, len(v.WorkItems))
		}
		if n := len(s.agent[r.ID]) + len(s.people[r.ID]); n > 0 {
			c.breakf("run %s is %s and get_work still lists %d of its work", r.ID, v.Run.State, n)
		}
	}
	c.Detail = fmt.Sprintf("%d ended runs hold no open work", over)
	return c
}

// checkTokens: no claim token of an ended run works.
func checkTokens(ctx context.Context, c0 *Client, runs []*scriptRun, s *settled) Check {
	c := Check{Name: "tokens"}
	tried := 0
	agent := drive.Who{ID: "a_soak_reader", Kind: interpreter.ActorAgent}
	for _, r := range runs {
		v := s.views[r.ID]
		if v == nil || !interpreter.RunState(v.Run.State).Over() {
			continue
		}
		for _, tok := range r.Tokens {
			tried++
			args := map[string]any{"token": tok, "requestId": drive.RequestID()}
			err := c0.Call(ctx, agent, "renew", args, r.ID, nil)
			if err == nil {
				c.breakf("a token of run %s (%s) renewed", r.ID, v.Run.State)
			} else if refusal(err) == "" {
				c.breakf("renewing a token of run %s: %v", r.ID, err)
			}
		}
	}
	c.Detail = fmt.Sprintf("%d claim tokens of ended runs, each refused", tried)
	return c
}

// checkReplays: every requestId the clients sent gives its first answer
// again.
func checkReplays(ctx context.Context, c0 *Client, writes []Write) Check {
	c := Check{Name: "replays"}
	var mu sync.Mutex
	ch := make(chan Write)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := newClient(c0.urls, i, c0.token, newJournal())
			defer cl.Close()
			for w := range ch {
				var again json.RawMessage
				err := cl.Call(ctx, w.Who, w.Tool, w.Args, w.RunID, &again)
				mu.Lock()
				switch {
				case err != nil:
					c.breakf("replay of %s %v: %v", w.Tool, w.Args["requestId"], err)
				case !sameJSON(w.Answer, again):
					c.breakf("replay of %s %v answered\n%s\nthe first answer was\n%s", w.Tool, w.Args["requestId"], again, w.Answer)
				}
				mu.Unlock()
			}
		}()
	}
	for _, w := range writes {
		ch <- w
	}
	close(ch)
	wg.Wait()
	c.Detail = fmt.Sprintf("%d requestIds replayed", len(writes))
	return c
}

// checkDownstream: every tool call was received as its policy allows.
func checkDownstream(calls []*ToolCall, received []Received) Check {
	c := Check{Name: "downstream"}
	byCall := map[string][]Received{}
	for _, r := range received {
		byCall[r.Call] = append(byCall[r.Call], r)
	}
	known := map[string]bool{}
	perTool := map[string]int{}
	for _, call := range calls {
		known[call.Call] = true
		got := byCall[call.Call]
		perTool[call.Tool] += len(got)
		keys := map[string]bool{}
		effects := 0
		for _, r := range got {
			keys[r.Key] = true
			if r.Key == "" || r.HeaderKey != r.Key {
				c.breakf("%s call %s of run %s arrived with key %q and header %q", call.Tool, call.Call, call.RunID, r.Key, r.HeaderKey)
			}
			if r.Effect {
				effects++
			}
		}
		if len(keys) > 1 {
			c.breakf("%s call %s of run %s arrived under %d keys", call.Tool, call.Call, call.RunID, len(keys))
		}
		if call.Fate == fateRefused && len(got) > 0 {
			c.breakf("%s call %s of run %s was refused stale and received %d times", call.Tool, call.Call, call.RunID, len(got))
		}
		switch call.Tool {
		case ToolLookup:
			if call.Fate == "completed" && len(got) == 0 {
				c.breakf("lookup call %s of run %s completed and was never received", call.Call, call.RunID)
			}
		case ToolNote:
			if len(got) > 1 {
				c.breakf("note call %s of run %s (idempotency none) was received %d times", call.Call, call.RunID, len(got))
			}
		case ToolTicket:
			if call.Fate == "completed" && effects != 1 {
				c.breakf("ticket call %s of run %s (key) took %d effects from %d requests", call.Call, call.RunID, effects, len(got))
			}
		case ToolRefund:
			if call.Approved.IsZero() || call.Fate == "rejected" || call.Fate == "cancelled" {
				// Never approved: rejected, cancelled before a decision,
				// or answered without waiting for one.
				if len(got) > 0 {
					c.breakf("refund call %s of run %s was %s, never approved, and was received %d times", call.Call, call.RunID, call.Fate, len(got))
				}
				break
			}
			if call.Fate == "completed" && effects != 1 {
				c.breakf("refund call %s of run %s took %d effects from %d requests", call.Call, call.RunID, effects, len(got))
			}
			for _, r := range got {
				if r.At.Before(call.Approved) {
					c.breakf("refund call %s of run %s was received at %s, before its approval was sent at %s", call.Call, call.RunID, r.At.Format("15:04:05.000"), call.Approved.Format("15:04:05.000"))
				}
			}
		}
	}
	for call, got := range byCall {
		if !known[call] {
			c.breakf("the tool server received %d requests of call %s that no script made or finished", len(got), call)
		}
	}
	c.Detail = fmt.Sprintf("%d tool calls, %d requests received (%s)", len(calls), len(received), counts(perTool))
	return c
}

// counts prints a tally sorted by name.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// str is a nullable string's value, "" for null.
func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

func dedupe(a []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range a {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
