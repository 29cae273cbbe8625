package workertest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/baton-run/baton/activities/evaluator"
	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/drivetest"
	"github.com/baton-run/baton/interpreter"
)

// ModelName is the model the fake model server says answered.
const ModelName = "fake-model-1"

// Model is a fake model server speaking the OpenAI chat completions API at
// URL + "/v1", so that the OpenAI evaluator's real client code talks to it
// over HTTP. It reads what it is asked from the material of the
// evaluator's user message and answers as it was last told: as
// drivetest.Passing does for the processes it was made with, with fixed
// content, or 503.
type Model struct {
	*httptest.Server
	procs drive.Processes
	calls atomic.Int64

	mu    sync.Mutex
	reply func(w http.ResponseWriter, body []byte)
}

// NewModel starts a model server that passes every check of procs until
// told otherwise. It stops when the test ends.
func NewModel(t testing.TB, procs drive.Processes) *Model {
	m := &Model{procs: procs}
	m.Passes()
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

// Evaluator returns the OpenAI evaluator asking this server.
func (m *Model) Evaluator(t testing.TB) evaluator.Evaluator {
	t.Helper()
	ev, err := evaluator.NewOpenAI(m.URL+"/v1", "fake-model", nil)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// Calls is how many requests the server has had.
func (m *Model) Calls() int64 { return m.calls.Load() }

// Passes makes the model answer as drivetest.Passing does.
func (m *Model) Passes() {
	m.set(func(w http.ResponseWriter, body []byte) {
		r, err := material(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a, err := drivetest.Passing(m.procs).Evaluate(context.Background(), r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		reply := map[string]map[string]any{}
		for _, an := range a.Answers {
			o := map[string]any{}
			switch {
			case an.Probability != nil:
				o["probability"] = *an.Probability
			case an.Level != nil:
				o["level"], o["confidence"] = *an.Level, *an.Confidence
			default:
				o["name"], o["confidence"] = an.Name, *an.Confidence
			}
			reply[an.ID] = o
		}
		b, err := json.Marshal(reply)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		complete(w, string(b))
	})
}

// Answers makes the model answer with content as its message.
func (m *Model) Answers(content string) {
	m.set(func(w http.ResponseWriter, _ []byte) { complete(w, content) })
}

// Down makes the model answer 503.
func (m *Model) Down() {
	m.set(func(w http.ResponseWriter, _ []byte) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	})
}

func (m *Model) set(reply func(w http.ResponseWriter, body []byte)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reply = reply
}

func (m *Model) serve(w http.ResponseWriter, r *http.Request) {
	m.calls.Add(1)
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	reply := m.reply
	m.mu.Unlock()
	reply(w, body)
}

// material reads the check request from a chat completions request body:
// the JSON document between <material> and </material> in its user
// message.
func material(body []byte) (*interpreter.CheckRequest, error) {
	var chat struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &chat); err != nil {
		return nil, fmt.Errorf("the request is not a chat completion of text messages: %w", err)
	}
	for _, msg := range chat.Messages {
		if msg.Role != "user" {
			continue
		}
		_, rest, ok := strings.Cut(msg.Content, "<material>")
		doc, _, closed := strings.Cut(rest, "</material>")
		if !ok || !closed {
			break
		}
		var req interpreter.CheckRequest
		if err := json.Unmarshal([]byte(doc), &req); err != nil {
			return nil, fmt.Errorf("the material is not a check request: %w", err)
		}
		return &req, nil
	}
	return nil, fmt.Errorf("no user message holds <material>…</material>")
}

// complete writes a chat completion whose message is content.
func complete(w http.ResponseWriter, content string) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1790000000, "model": ModelName,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
	})
}
