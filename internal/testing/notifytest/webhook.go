package notifytest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/baton-run/baton/internal/notify"
)

// Receiver is a webhook receiver on a loopback port, as an organization
// would write one: it refuses a post whose Baton-Signature does not verify
// with its secret (401), and keeps each event it takes by id, counting
// the posts of each (a receiver deduplicates by id).
type Receiver struct {
	URL    string
	Secret []byte

	srv *httptest.Server
	mu  sync.Mutex
	// hold, when set, is asked of each verified post; a post it returns
	// a channel for waits until that channel closes (or the sender hangs
	// up) before it is taken.
	hold     func(notify.Event) <-chan struct{}
	events   map[string]notify.Event
	order    []string
	posts    map[string]int
	refused  int
	slack    []map[string]any
	lastBody []byte
}

// StartReceiver starts a receiver checking signatures with secret; a nil
// secret takes unsigned posts (a Slack channel's). Close stops it.
func StartReceiver(secret []byte) *Receiver {
	r := &Receiver{Secret: secret, events: map[string]notify.Event{}, posts: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL + "/hook"
	return r
}

// Close stops the receiver.
func (r *Receiver) Close() { r.srv.Close() }

// Hold makes the receiver ask f of each verified post before taking it;
// see Receiver.hold.
func (r *Receiver) Hold(f func(notify.Event) <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hold = f
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.Secret != nil {
		if err := notify.Verify(r.Secret, req.Header.Get(notify.SignatureHeader), body, time.Now(), 0); err != nil {
			r.mu.Lock()
			r.refused++
			r.mu.Unlock()
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
	}
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if _, ok := raw["blocks"]; ok {
		r.mu.Lock()
		r.slack = append(r.slack, raw)
		r.lastBody = body
		r.mu.Unlock()
		return
	}
	var ev notify.Event
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID == "" {
		http.Error(w, "not an event", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	hold := r.hold
	r.mu.Unlock()
	if hold != nil {
		if wait := hold(ev); wait != nil {
			select {
			case <-wait:
			case <-req.Context().Done():
				return
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := r.events[ev.ID]; !seen {
		r.events[ev.ID] = ev
		r.order = append(r.order, ev.ID)
	}
	r.posts[ev.ID]++
	r.lastBody = body
}

// Events returns each event taken once, in the order first taken: what a
// receiver that deduplicates by id sees.
func (r *Receiver) Events() []notify.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]notify.Event, len(r.order))
	for i, id := range r.order {
		out[i] = r.events[id]
	}
	return out
}

// Posts is how many posts of the event id were taken.
func (r *Receiver) Posts(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.posts[id]
}

// Refused is how many posts failed the signature check.
func (r *Receiver) Refused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused
}

// Slack returns the Slack messages taken.
func (r *Receiver) Slack() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.slack...)
}

// Await waits up to timeout until ok holds of the events taken, and
// returns them.
func (r *Receiver) Await(timeout time.Duration, ok func([]notify.Event) bool) ([]notify.Event, bool) {
	deadline := time.Now().Add(timeout)
	for {
		evs := r.Events()
		if ok(evs) {
			return evs, true
		}
		if time.Now().After(deadline) {
			return evs, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
