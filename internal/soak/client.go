package soak

import (
	"bytes"
	"context"
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

// Write is one write a client had answered: what it sent and the first
// answer it got.
type Write struct {
	Tool   string
	Who    drive.Who
	Args   map[string]any // with the requestId every attempt carried
	RunID  string
	Answer json.RawMessage
	// Sent is when the first attempt went out, Answered when the answer
	// came.
	Sent, Answered time.Time
}

// Journal is what the clients of a soak sent and were answered.
type Journal struct {
	mu     sync.Mutex
	writes []Write
	// took holds each tool's call times, retries included.
	took map[string][]time.Duration
	// retried counts the attempts sent again, by cause: "retry" answers
	// and failed connections ("transport").
	retried map[string]int
}

func newJournal() *Journal {
	return &Journal{took: map[string][]time.Duration{}, retried: map[string]int{}}
}

// Writes returns every write answered, in the order answered.
func (j *Journal) Writes() []Write {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Write(nil), j.writes...)
}

func (j *Journal) add(w Write, took time.Duration) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if w.Args != nil {
		j.writes = append(j.writes, w)
	}
	j.took[w.Tool] = append(j.took[w.Tool], took)
}

func (j *Journal) retry(cause string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.retried[cause]++
}

// Client is one MCP client of the deployment that retries as the
// specification tells agents to: on a retry answer or a failed connection
// it sends the very same arguments again, the same requestId, to the next
// gateway, until the call answers or its patience is spent. Not safe for
// concurrent use.
type Client struct {
	urls     []string
	first    int
	token    func(drive.Who) (string, error)
	journal  *Journal
	patience time.Duration

	conns []*drive.MCP
	tr    *http.Transport
}

func newClient(urls []string, first int, token func(drive.Who) (string, error), j *Journal) *Client {
	return &Client{
		urls: urls, first: first % len(urls), token: token, journal: j, patience: 5 * time.Minute,
		conns: make([]*drive.MCP, len(urls)),
		tr:    &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute},
	}
}

func (c *Client) conn(i int) *drive.MCP {
	if c.conns[i] == nil {
		c.conns[i] = drive.NewMCP(c.urls[i], c.token, &drive.MCPOptions{Transport: c.tr, Plain: true})
	}
	return c.conns[i]
}

func (c *Client) reset(i int) {
	if c.conns[i] != nil {
		_ = c.conns[i].Close()
		c.conns[i] = nil
	}
	c.tr.CloseIdleConnections()
}

// Close closes the client's connections.
func (c *Client) Close() {
	for i := range c.conns {
		c.reset(i)
	}
}

// errGaveUp wraps a call whose patience ran out.
var errGaveUp = errors.New("gave up")

// Call makes one tool call, retrying as the type says, and decodes the
// answer's data into out (when not nil). A write (its arguments hold a
// requestId) is journaled with its first answer. A refusal other than
// retry comes back as an *interpreter.Error, for the scenario to judge.
func (c *Client) Call(ctx context.Context, who drive.Who, tool string, args map[string]any, runID string, out any) error {
	begin := time.Now()
	give := begin.Add(c.patience)
	backoff := 100 * time.Millisecond
	for attempt := 0; ; attempt++ {
		i := (c.first + attempt) % len(c.urls)
		actx, cancel := context.WithTimeout(ctx, 90*time.Second)
		var raw json.RawMessage
		err := c.conn(i).Call(actx, who, tool, args, &raw)
		cancel()
		if err == nil {
			w := Write{Tool: tool, Who: who, RunID: runID, Answer: raw, Sent: begin, Answered: time.Now()}
			if _, ok := args["requestId"]; ok {
				w.Args = args
			}
			c.journal.add(w, time.Since(begin))
			if out == nil {
				return nil
			}
			return decode(raw, out)
		}
		var e *interpreter.Error
		switch {
		case errors.As(err, &e) && e.Code != interpreter.CodeRetry:
			return e
		case e != nil:
			c.journal.retry("retry")
		default:
			c.journal.retry("transport")
			c.reset(i)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(give) {
			return fmt.Errorf("%s: %w after %d attempts over %s: %w", tool, errGaveUp, attempt+1, c.patience, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff/2 + rand.N(backoff)):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func decode(raw json.RawMessage, out any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(out)
}

// sameJSON reports whether two answers are the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if decode(a, &x) != nil || decode(b, &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}
