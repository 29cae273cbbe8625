package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/baton-run/baton/activities"
	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

// fuzzOther is the second organization; the gateway's default, o_test,
// holds everything fuzzRuns makes.
const fuzzOther = "o_fuzz_other"

// fuzzIdentities are the callers a fuzzed call comes from: the default
// organization's, then the same callers of fuzzOther.
var fuzzIdentities = []auth.Identity{
	{ID: "a_fuzz", Kind: auth.KindAgent},
	{ID: "mira@example.com", Kind: auth.KindPerson, Groups: []string{"managers", "finance"}},
	{ID: "u_ops", Kind: auth.KindOperator},
	{ID: "nobody@example.com", Kind: auth.KindPerson},
	{ID: "a_fuzz", Kind: auth.KindAgent, Org: fuzzOther},
	{ID: "mira@example.com", Kind: auth.KindPerson, Groups: []string{"managers", "finance"}, Org: fuzzOther},
	{ID: "u_ops", Kind: auth.KindOperator, Org: fuzzOther},
}

// FuzzCall sends arbitrary argument JSON to every tool, as every kind of
// caller, through the pipeline the MCP endpoint uses: no call may panic,
// and every answer is an {ok, …} envelope the official schemas accept.
// A refusal must be typed: an untyped error, which the caller sees as
// retry, is allowed only where it is Temporal's (this gateway's Temporal
// never answers, so a write that gets that far waits out its deadline).
//
// The gateway has a published process, a run in progress and an ended run
// in its read model, and a file, so listings, replays and renderings have
// something to show. Callers of a second organization see none of it: an
// answer to them names none of its ids unless they sent it, and their
// calls leave its runs' read model as it was. Seeds are in testdata/fuzz/FuzzCall; the ones built
// here carry claim tokens, which are signed with this run's key.
//
//	go test ./gateway -run '^$' -fuzz FuzzCall -fuzztime 10m -parallel 1
func FuzzCall(f *testing.F) {
	panics := &panicLog{}
	b := setup(f, &Options{Logger: slog.New(panics)})
	tools := b.g.toolNames()
	fileID := fuzzRuns(f, b)
	aIDs := []string{"r_fuzz_active", "r_fuzz_ended", fileID, "invoice-approval"}
	readModel := func() string {
		var out strings.Builder
		for _, id := range aIDs[:2] {
			row, err := b.store.GetRun(b.ctx, "o_test", id)
			if err != nil {
				f.Fatal(err)
			}
			fmt.Fprintf(&out, "%s %d %s %s\n", row.State, row.Seq, row.UpdatedAt, row.FinalView)
		}
		return out.String()
	}
	aBefore := readModel()
	for i, tool := range tools {
		// The other organization names the first one's ids.
		var other map[string]any
		switch tool {
		case "get_run", "cancel", "send_event":
			other = map[string]any{"runId": "r_fuzz_active", "reason": "r", "name": "e", "requestId": "seed-other-" + tool}
		case "claim":
			other = map[string]any{"runId": "r_fuzz_active", "stepId": "validate", "requestId": "seed-other-claim"}
		case "start_run":
			other = map[string]any{"process": "invoice-approval", "inputs": map[string]any{}, "requestId": "seed-file"}
		case "upload":
			other = map[string]any{"fileName": "f.txt", "contentType": "text/plain", "contentBase64": "aGk=", "requestId": "seed-file"}
		case "list_runs", "get_work", "list_processes":
			other = map[string]any{}
		}
		if other != nil {
			raw, _ := json.Marshal(other)
			for who := 4; who < len(fuzzIdentities); who++ {
				f.Add(uint8(i), uint8(who), raw)
			}
		}
	}
	for i, tool := range tools {
		tok := b.g.tokens.Sign("o_test", "r_fuzz_active", "validate", "l_fuzz")
		var args any
		switch tool {
		case "renew":
			args = map[string]any{"token": tok, "progress": "half", "requestId": "seed-renew"}
		case "submit":
			args = map[string]any{"token": tok, "output": map[string]any{"totalUsd": 12.5}, "summary": "s",
				"evidence": []any{map[string]any{"kind": "file", "ref": "f_fuzz"}}, "requestId": "seed-submit"}
		case "escalate":
			args = map[string]any{"token": tok, "note": "stuck", "requestId": "seed-escalate"}
		default:
			continue
		}
		raw, _ := json.Marshal(args)
		f.Add(uint8(i), uint8(0), raw)
	}
	f.Fuzz(func(t *testing.T, toolIndex, who uint8, args []byte) {
		tool := tools[int(toolIndex)%len(tools)]
		id := fuzzIdentities[int(who)%len(fuzzIdentities)]
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		panics.reset()
		data, err := b.g.Call(ctx, id, tool, args)
		if p := panics.reset(); p != "" {
			t.Fatalf("%s as %s panicked (the caller got retry): %s", tool, id.ID, p)
		}
		var refusal *interpreter.Error
		if err != nil && !errors.As(err, &refusal) && ctx.Err() == nil && !temporalUnreachable(err) {
			t.Errorf("%s as %s answered an untyped error (retry to the caller): %v", tool, id.ID, err)
		}
		var res any
		if err == nil {
			res = json.RawMessage(data)
		}
		out := b.g.result(ctx, tool, res, err)
		if out.IsError == (err == nil) {
			t.Errorf("%s: isError %v for error %v", tool, out.IsError, err)
		}
		spectest.ValidateToolResult(t, tool, out.StructuredContent)
		if id.Org != fuzzOther {
			return
		}
		if err == nil {
			for _, s := range aIDs {
				if strings.Contains(string(data), s) && !strings.Contains(string(args), s) {
					t.Errorf("%s as %s of %s answered %q of o_test: %s", tool, id.ID, fuzzOther, s, data)
				}
			}
		}
		if got := readModel(); got != aBefore {
			t.Errorf("%s as %s of %s changed o_test's runs:\n%s\nwas\n%s", tool, id.ID, fuzzOther, got, aBefore)
		}
	})
}

// panicLog is the gateway's log in the fuzz test: it keeps what a tool's
// panic logged, which the caller only sees as retry.
type panicLog struct {
	mu     sync.Mutex
	panics []string
}

func (h *panicLog) Enabled(context.Context, slog.Level) bool { return true }

func (h *panicLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "tool panicked" {
		return nil
	}
	var b strings.Builder
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, "%s=%v\n", a.Key, a.Value)
		return true
	})
	h.mu.Lock()
	h.panics = append(h.panics, b.String())
	h.mu.Unlock()
	return nil
}

func (h *panicLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *panicLog) WithGroup(string) slog.Handler      { return h }

// reset returns what was logged since the last reset and forgets it.
func (h *panicLog) reset() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := strings.Join(h.panics, "\n")
	h.panics = nil
	return p
}

// temporalUnreachable reports an error of a Temporal that does not answer.
func temporalUnreachable(err error) bool {
	var unavailable *serviceerror.Unavailable
	var deadline *serviceerror.DeadlineExceeded
	var canceled *serviceerror.Canceled
	return errors.As(err, &unavailable) || errors.As(err, &deadline) || errors.As(err, &canceled) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// fuzzRuns publishes invoice-approval and puts two of its runs in the
// read model, as their workflow would: r_fuzz_active, its validate step
// ready, and r_fuzz_ended, cancelled. It also stores the file f_fuzz.
func fuzzRuns(f *testing.F, b bundle) string {
	f.Helper()
	ctx := b.ctx
	reg := NewRegistry(b.store, "o_test", b.g.Offer())
	pv, _, err := reg.ImportAndPublish(ctx, filepath.Join(spectest.SharedDir(f), "conformance", "fixtures", "invoice-approval"), "u_admin", nil)
	if err != nil {
		f.Fatal(err)
	}
	pub, err := b.g.process(ctx, "o_test", pv.Name, pv.Version)
	if err != nil {
		f.Fatal(err)
	}
	p := pub.p
	acts, err := activities.New(b.store, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Now()
	for _, id := range []string{"r_fuzz_active", "r_fuzz_ended"} {
		inputs := interpreter.Values{}
		for _, fd := range p.Inputs {
			inputs[fd.Name] = fuzzSample(fd)
		}
		m, err := interpreter.StartRun(interpreter.Start{RunID: id, Process: p, Version: pv.Version, Inputs: inputs,
			Starter: interpreter.Actor{ID: "mira@example.com", Kind: interpreter.ActorPerson}}, now)
		if err != nil {
			f.Fatalf("start %s: %v", id, err)
		}
		if id == "r_fuzz_ended" {
			if _, err := m.Apply(interpreter.Cancel{Actor: interpreter.Actor{ID: "u_ops", Kind: interpreter.ActorOperator}, Reason: "fuzz"}, now); err != nil {
				f.Fatal(err)
			}
		}
		l, err := m.Listing(now)
		if err != nil {
			f.Fatal(err)
		}
		if _, err := acts.PublishRun(ctx, "o_test", l, nil, nil); err != nil {
			f.Fatal(err)
		}
	}
	raw, _ := json.Marshal(map[string]any{"fileName": "f.txt", "contentType": "text/plain", "contentBase64": "aGk=", "requestId": "seed-file"})
	data, err := b.g.Call(ctx, fuzzIdentities[0], "upload", raw)
	if err != nil {
		f.Fatal(err)
	}
	var up struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(data, &up); err != nil {
		f.Fatal(err)
	}
	return up.ID
}

// fuzzSample is a value of a declared input's type.
func fuzzSample(fd *interpreter.Field) any {
	if len(fd.OneOf) > 0 {
		return fd.OneOf[0]
	}
	switch fd.Type {
	case interpreter.TypeNumber:
		return json.Number("12.5")
	case interpreter.TypeBoolean:
		return true
	case interpreter.TypeDate:
		return "2026-10-06"
	case interpreter.TypeDatetime:
		return "2026-10-06T09:00:00Z"
	case interpreter.TypePerson:
		return "mira@example.com"
	case interpreter.TypeList:
		return []any{}
	case interpreter.TypeObject:
		return map[string]any{}
	}
	return fmt.Sprintf("sample %s", fd.Name)
}
