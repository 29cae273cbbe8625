package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

// A tool call's way through the gateway, top to bottom (serve):
//
//  1. Decode the arguments once, numbers kept exact.
//  2. Authenticate: the identity the bearer token carries (the MCP
//     endpoint) or that the caller established (Call).
//  3. Check the arguments against the tool's official schema: invalid
//     before anything else (SPEC-DECISIONS §1).
//  4. Run the write. A write to a run is one command to its workflow
//     under the requestId as update id; the run records the requestId
//     and the answer beside its read model, in one transaction, before
//     it returns, and refuses a requestId that was another call's there
//     (replay.go). A replay is the answer Temporal kept or, once
//     Temporal no longer has it, the record (§4). A write that is not a
//     run's (upload) reserves its requestId first and records its answer
//     itself.
//  5. Render: signed file links and claim tokens are added on the way out,
//     never stored, so a replay always carries fresh ones.
//
// Every tool is one entry of the table in tools.go.

// call is one tool call on its way through the gateway.
type call struct {
	tool *tool
	// org is the caller's organization: everything the call reads or
	// writes is the organization's. orgTag is it when it is not the
	// deployment's default, for the digest (writes.go).
	org, orgTag string
	id          auth.Identity
	args        map[string]any // decoded with exact numbers
	raw         json.RawMessage
	// reqID and digest identify a write (SPEC-DECISIONS §5); attempt
	// counts its earlier tries that Temporal remembers refusing.
	reqID   string
	digest  string
	attempt int
}

// Call runs one tool for an identity the caller has authenticated, exactly
// as the MCP endpoint runs it: the same argument checks, idempotency on
// requestId, refusals and rendering (signed file links). It returns the
// tool's data on success and an *interpreter.Error for a refusal; any
// other error is the server failing.
func (g *Gateway) Call(ctx context.Context, id auth.Identity, tool string, args json.RawMessage) (json.RawMessage, error) {
	t := g.tools[interpreter.Tool(tool)]
	if t == nil {
		return nil, invalid(fmt.Sprintf("There is no tool %s.", interpreter.Quote(tool)), "tool: unknown")
	}
	id, err := id.Normalize()
	if err != nil {
		return nil, forbidden("The identity is not one this server accepts: " + err.Error())
	}
	data, err := g.serve(ctx, t, &id, args)
	if err != nil {
		return nil, err
	}
	return marshal(data)
}

// serve takes a call through the pipeline. A panic in a tool is the
// server failing, never a crash: the caller gets retry. So is a call that
// waits past Options.CallWait, or that Cut ends.
func (g *Gateway) serve(ctx context.Context, t *tool, id *auth.Identity, raw json.RawMessage) (data any, err error) {
	ctx, cancel := context.WithTimeout(ctx, g.opts.CallWait)
	defer cancel()
	defer context.AfterFunc(g.cut, cancel)()
	if g.opts.Observe != nil {
		var done func(code string)
		ctx, done = g.opts.Observe(ctx, string(t.name))
		defer func() { done(resultCode(err)) }() // after the recover below
	}
	defer func() {
		if p := recover(); p != nil {
			g.opts.Logger.ErrorContext(ctx, "tool panicked", "tool", t.name, "panic", p, "stack", string(debug.Stack()))
			data, err = nil, interpreter.ErrRetry()
		}
	}()
	// 1. Decode once.
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	var v any
	if err := interpreter.DecodeExact(raw, &v); err != nil {
		return nil, invalid("The arguments are not JSON.", "arguments: not JSON")
	}
	args, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("The arguments must be an object.", "arguments: expected object")
	}
	// 2. Authenticate.
	if id == nil {
		return nil, forbidden("No identity: send a bearer token.")
	}
	// 3. Check the arguments.
	if issues := g.schemas[t.name].issues(args); len(issues) > 0 {
		return nil, invalid("The arguments do not match the tool's schema: "+strings.Join(issues, "; ")+".", issues...)
	}
	c := &call{tool: t, org: id.OrgOr(g.opts.Org), id: *id, args: args, raw: raw}
	c.id.Org = c.org
	if c.org != g.opts.Org {
		c.orgTag = c.org
	}
	if t.who != nil && !t.who[c.id.Kind] {
		return nil, forbidden(t.whoMessage)
	}
	if t.kind == readTool {
		return t.read(g, ctx, c)
	}
	c.reqID, c.digest = c.str("requestId"), digest(c)
	if t.kind == ownWrite {
		return g.ownWrite(ctx, c)
	}
	// 4. Run it: the run claims the requestId itself (replay.go's
	// runWrite), and a replay is the run's answer or its record's.
	answer, err := g.runWrite(ctx, c)
	if err != nil {
		return nil, err
	}
	// 5. Render.
	return t.render(g, ctx, c, answer)
}

// ownWrite runs a write that is not a run's (upload): it reserves the
// requestId first, answers a replay from its record, and records the
// answer itself. A refusal releases the reservation, so the requestId may
// be used again (SPEC-DECISIONS §6); a call that answers retry (the server
// failing, or waiting past CallWait) keeps it, so the requestId stays
// with these arguments.
func (g *Gateway) ownWrite(ctx context.Context, c *call) (any, error) {
	t := c.tool
	stored, replay, err := g.reserve(ctx, c)
	if err != nil {
		return nil, err
	}
	if replay {
		return t.render(g, ctx, c, stored)
	}
	answer, err := t.write(g, ctx, c)
	var refusal *interpreter.Error
	if errors.As(err, &refusal) && refusal.Code != interpreter.CodeRetry {
		if serr := g.store.ReleaseRequest(context.WithoutCancel(ctx), nil, c.request(nil)); serr != nil {
			g.opts.Logger.WarnContext(ctx, "releasing a refused call's requestId failed", "tool", t.name, "error", serr)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := g.store.RecordAnswer(ctx, nil, c.request(answer)); err != nil {
		return nil, err
	}
	return t.render(g, ctx, c, answer)
}

// resultCode is a call's result code as its answer says it: "ok", the
// refusal's code, or retry for the server failing.
func resultCode(err error) string {
	if err == nil {
		return "ok"
	}
	var e *interpreter.Error
	if errors.As(err, &e) {
		return string(e.Code)
	}
	return string(interpreter.CodeRetry)
}

// reserve claims the call's requestId. It reports a replay, with the stored
// answer, when the requestId was answered before with the same digest; the
// same requestId with another digest is a conflict.
func (g *Gateway) reserve(ctx context.Context, c *call) (json.RawMessage, bool, error) {
	stored, created, err := g.store.ReserveRequest(ctx, nil, c.request(nil))
	if err != nil {
		return nil, false, err
	}
	if created {
		c.attempt = stored.Attempt
		return nil, false, nil
	}
	if stored.Digest != c.digest {
		return nil, false, interpreter.ErrRequestIDReused()
	}
	if stored.Result == nil {
		c.attempt = stored.Attempt
		// The same call is running, or died before it answered, or was
		// refused: run it again. The write underneath is idempotent by itself (Temporal's
		// update id, ids derived from the requestId), so both get one
		// answer.
		return nil, false, nil
	}
	c.attempt = stored.Attempt
	return stored.Result, true, nil
}

// request is the call's idempotency record.
func (c *call) request(answer json.RawMessage) store.Request {
	return store.Request{Org: c.org, RequestID: c.reqID, Tool: string(c.tool.name), Digest: c.digest, Result: answer}
}

func (c *call) str(name string) string {
	s, _ := c.args[name].(string)
	return s
}

func (c *call) optStr(name string) *string {
	s, ok := c.args[name].(string)
	if !ok {
		return nil
	}
	return &s
}

func (c *call) object(name string) interpreter.Values {
	m, ok := c.args[name].(map[string]any)
	if !ok {
		return nil
	}
	return m
}

// evidence returns the evidence argument, nil when it is absent.
func (c *call) evidence() []interpreter.Evidence {
	list, ok := c.args["evidence"].([]any)
	if !ok {
		return nil
	}
	out := make([]interpreter.Evidence, 0, len(list))
	for _, e := range list {
		m, _ := e.(map[string]any)
		k, _ := m["kind"].(string)
		r, _ := m["ref"].(string)
		out = append(out, interpreter.Evidence{Kind: k, Ref: r})
	}
	return out
}

func (c *call) actor() interpreter.Actor {
	return interpreter.Actor{ID: c.id.ID, Kind: interpreter.ActorKind(c.id.Kind), Groups: c.id.Groups}
}

// The gateway's own refusals, by code; each is interpreter.Refuse, which
// keeps a refusal's bounds.

func invalid(message string, issues ...string) *interpreter.Error {
	return interpreter.Refuse(interpreter.CodeInvalid, message, issues...)
}

func forbidden(message string) *interpreter.Error {
	return interpreter.Refuse(interpreter.CodeForbidden, message)
}

func notFound(message string) *interpreter.Error {
	return interpreter.Refuse(interpreter.CodeNotFound, message)
}

func conflict(message string, issues ...string) *interpreter.Error {
	return interpreter.Refuse(interpreter.CodeConflict, message, issues...)
}
