package faults

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/interpreter"
)

// write is one write a client had answered: what it sent, and the answer.
type write struct {
	tool   string
	who    drive.Who
	args   map[string]any // with the requestId every attempt carried
	runID  string         // the run it wrote to ("" for upload)
	answer json.RawMessage
}

// journal is what the clients of one load saw.
type journal struct {
	mu     sync.Mutex
	writes []write
	// retried counts, by cause, the attempts that were tried again:
	// "retry" answers and calls that failed outright (transport).
	retried map[string]int
	// refused counts other refusals, by tool and code: none expected.
	refused map[string]int
	// slowest is the longest one attempt of a call took.
	slowest time.Duration
}

func (j *journal) timed(_ string, took time.Duration, _ error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.slowest = max(j.slowest, took)
}

func newJournal() *journal {
	return &journal{retried: map[string]int{}, refused: map[string]int{}}
}

func (j *journal) add(w write) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.writes = append(j.writes, w)
}

func (j *journal) count(m map[string]int, key string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	m[key]++
}

// retrier is one MCP client of the deployment that never gives up on a
// call it may retry: on a `retry` answer or a failed connection it sends
// the very same arguments again — the same requestId — to the next
// gateway, until the call answers or its time is up. It implements
// drive.Driver, so drive.Walk walks runs with it. Not safe for concurrent
// use: each load client has its own.
type retrier struct {
	urls    []string
	first   int // the gateway this client tries first
	token   func(drive.Who) (string, error)
	journal *journal
	// patience bounds one call, retries included.
	patience time.Duration
	// observe, when set, sees every answer's text, refusals included.
	observe func(tool string, result []byte)

	conns []*drive.MCP
	tr    *http.Transport
}

func newRetrier(urls []string, first int, token func(drive.Who) (string, error), j *journal) *retrier {
	return &retrier{
		urls: urls, first: first, token: token, journal: j, patience: 3 * time.Minute,
		conns: make([]*drive.MCP, len(urls)),
		tr:    &http.Transport{MaxIdleConnsPerHost: 8, IdleConnTimeout: time.Minute},
	}
}

// conn is the MCP driver of gateway i, made anew after a failure.
func (c *retrier) conn(i int) *drive.MCP {
	if c.conns[i] == nil {
		c.conns[i] = drive.NewMCP(c.urls[i], c.token, &drive.MCPOptions{Transport: c.tr, Observe: c.observe, Timed: c.journal.timed})
	}
	return c.conns[i]
}

func (c *retrier) reset(i int) {
	if c.conns[i] != nil {
		_ = c.conns[i].Close()
		c.conns[i] = nil
	}
	c.tr.CloseIdleConnections()
}

func (c *retrier) close() {
	for i := range c.conns {
		c.reset(i)
	}
}

// errRefused wraps a refusal other than retry, which no walk expects.
var errRefused = errors.New("refused")

// call makes one tool call, retrying as the type says, and decodes the
// answer's data into out. A write is journaled with its answer.
func (c *retrier) call(ctx context.Context, who drive.Who, tool string, args map[string]any, runID string, out any) error {
	give := time.Now().Add(c.patience)
	backoff := 50 * time.Millisecond
	for attempt := 0; ; attempt++ {
		i := (c.first + attempt) % len(c.urls)
		actx, cancel := context.WithTimeout(ctx, 90*time.Second)
		var raw json.RawMessage
		err := c.conn(i).Call(actx, who, tool, args, &raw)
		cancel()
		if err == nil {
			if _, ok := args["requestId"]; ok {
				if runID == "" {
					runID = viewRunID(raw)
				}
				c.journal.add(write{tool: tool, who: who, args: args, runID: runID, answer: raw})
			}
			if out == nil {
				return nil
			}
			return decode(raw, out)
		}
		var e *interpreter.Error
		switch {
		case errors.As(err, &e) && e.Code != interpreter.CodeRetry:
			c.journal.count(c.journal.refused, tool+" "+string(e.Code))
			return fmt.Errorf("%w: %w", errRefused, e)
		case e != nil:
			c.journal.count(c.journal.retried, "retry")
		default:
			c.journal.count(c.journal.retried, "transport")
			c.reset(i)
		}
		if ctx.Err() != nil || time.Now().After(give) {
			return fmt.Errorf("%s: gave up after %d attempts over %s: %w", tool, attempt+1, c.patience, err)
		}
		sleep := backoff/2 + rand.N(backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(sleep):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// viewRunID is the run id of a run view, or "".
func viewRunID(raw json.RawMessage) string {
	var v struct {
		Run struct {
			ID string `json:"id"`
		} `json:"run"`
	}
	_ = json.Unmarshal(raw, &v)
	return v.Run.ID
}

func decode(raw json.RawMessage, out any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(out)
}

// workArgs are the arguments a submission or a completed decision adds.
func workArgs(w drive.Work) map[string]any {
	a := map[string]any{"output": w.Output}
	if w.Output == nil {
		a["output"] = map[string]any{}
	}
	if w.Evidence != nil {
		ev := make([]any, len(w.Evidence))
		for i, e := range w.Evidence {
			ev[i] = map[string]any{"kind": e.Kind, "ref": e.Ref}
		}
		a["evidence"] = ev
	}
	for k, v := range map[string]*string{"summary": w.Summary, "next": w.Next, "reason": w.Reason} {
		if v != nil {
			a[k] = *v
		}
	}
	return a
}

var _ drive.Driver = (*retrier)(nil)

func (c *retrier) Start(ctx context.Context, starter drive.Who, process string, inputs map[string]any, mode string) (*interpreter.View, error) {
	if inputs == nil {
		inputs = map[string]any{}
	}
	args := map[string]any{"process": process, "inputs": inputs, "requestId": drive.RequestID()}
	if mode != "" {
		args["mode"] = mode
	}
	var v interpreter.View
	return &v, c.call(ctx, starter, "start_run", args, "", &v)
}

func (c *retrier) GetRun(ctx context.Context, who drive.Who, runID string) (*interpreter.View, error) {
	var v interpreter.View
	return &v, c.call(ctx, who, "get_run", map[string]any{"runId": runID}, runID, &v)
}

func (c *retrier) Claim(ctx context.Context, agent drive.Who, runID, stepID string) (*interpreter.ClaimWire, error) {
	var cw interpreter.ClaimWire
	args := map[string]any{"runId": runID, "stepId": stepID, "requestId": drive.RequestID()}
	return &cw, c.call(ctx, agent, "claim", args, runID, &cw)
}

func (c *retrier) Renew(ctx context.Context, agent drive.Who, token, progress string) (*interpreter.RenewWire, error) {
	args := map[string]any{"token": token, "requestId": drive.RequestID()}
	if progress != "" {
		args["progress"] = progress
	}
	var r interpreter.RenewWire
	return &r, c.call(ctx, agent, "renew", args, "", &r)
}

func (c *retrier) Submit(ctx context.Context, agent drive.Who, token string, w drive.Work) (*interpreter.View, error) {
	args := workArgs(w)
	args["token"], args["requestId"] = token, drive.RequestID()
	if _, ok := args["summary"]; !ok {
		args["summary"] = ""
	}
	var v interpreter.View
	err := c.call(ctx, agent, "submit", args, "", &v)
	return &v, err
}

func (c *retrier) Escalate(ctx context.Context, agent drive.Who, token, note string) (*interpreter.View, error) {
	var v interpreter.View
	args := map[string]any{"token": token, "note": note, "requestId": drive.RequestID()}
	return &v, c.call(ctx, agent, "escalate", args, "", &v)
}

func (c *retrier) Decide(ctx context.Context, who drive.Who, runID string, dec drive.Decision) (*interpreter.View, error) {
	args := map[string]any{}
	if dec.Work != nil {
		args = workArgs(*dec.Work)
	}
	args["runId"], args["workItemId"], args["snapshot"] = runID, dec.WorkItemID, dec.Snapshot
	args["decision"], args["requestId"] = dec.Decision, drive.RequestID()
	if dec.Note != nil {
		args["note"] = *dec.Note
	}
	var v interpreter.View
	return &v, c.call(ctx, who, "decide", args, runID, &v)
}

func (c *retrier) SendEvent(ctx context.Context, who drive.Who, runID, name string, data map[string]any) (*interpreter.EventResult, error) {
	args := map[string]any{"runId": runID, "name": name, "requestId": drive.RequestID()}
	if data != nil {
		args["data"] = data
	}
	var r interpreter.EventResult
	return &r, c.call(ctx, who, "send_event", args, runID, &r)
}

func (c *retrier) Cancel(ctx context.Context, who drive.Who, runID, reason string) (*interpreter.View, error) {
	var v interpreter.View
	args := map[string]any{"runId": runID, "reason": reason, "requestId": drive.RequestID()}
	return &v, c.call(ctx, who, "cancel", args, runID, &v)
}

func (c *retrier) Upload(ctx context.Context, who drive.Who, name string, content []byte) (string, error) {
	var r struct {
		ID string `json:"id"`
	}
	args := map[string]any{
		"fileName": name, "contentType": "text/plain", "contentBase64": base64.StdEncoding.EncodeToString(content),
		"requestId": drive.RequestID(),
	}
	err := c.call(ctx, who, "upload", args, "", &r)
	return r.ID, err
}
