package tests

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/drivetest"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/internal/testing/workertest"
	"github.com/baton-run/baton/interpreter"
)

// mcpVariants are the walks the gateway takes: every variant but expiry,
// which would wait out a real lease (TestSection3_3_LeaseExpiryAndRenew
// lets a short one run out).
var mcpVariants = []drivetest.Variant{
	drivetest.Happy, drivetest.Rework, drivetest.Escalation, drivetest.EventsEarly, drivetest.TestMode,
}

// driver returns an MCP driver of b for one test: every identity gets a
// token from b's issuer, and every tool result is checked against the
// official schemas, envelope and all.
func (b *baton) driver(t *testing.T) *drive.MCP {
	d := drive.NewMCP(b.url+"/mcp", func(w drive.Who) (string, error) {
		return b.issuer.Issue(auth.Identity{ID: w.ID, Kind: auth.Kind(w.Kind), Groups: w.Groups}, time.Hour)
	}, &drive.MCPOptions{Observe: func(tool string, result []byte) {
		spectest.ValidateToolResult(t, tool, json.RawMessage(result))
	}})
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// Conformance fixtures: every fixture publishes and walks to a finish over
// MCP, with agents and people taking their work from get_work: straight
// through, with each approval that has on_reject rejected once (§3.1),
// with each agent step escalated once and returned by an operator
// (§3.3–3.4), with events sent before their step waits (§3.6), and in
// test mode, which every get_work item, claim and work item says (§3.3).
// The server has an evaluator, a fake model over the OpenAI API that
// passes every question, so it offers check-1 and walks vendor-check too:
// its check step's submission waits for the verdict, which the walk's end
// shows on the step (profile-check §3).
func TestFixtures_WalkToFinish(t *testing.T) {
	all := drivetest.Fixtures(t, nil)
	model := workertest.NewModel(t, drivetest.Processes(t, all))
	b := start(t, options{evaluator: model.Evaluator(t)})
	offer := b.gateway.Offer()
	names := drivetest.Fixtures(t, &offer)
	if !slices.Equal(names, all) {
		t.Fatalf("the server runs fixtures %v, want every one: %v", names, all)
	}
	for _, name := range names {
		b.publishFixture(name)
	}
	var procs struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	b.connect(agentID).ok("list_processes", map[string]any{}, &procs)
	if len(procs.Items) != len(names) {
		t.Fatalf("list_processes lists %d processes, want %d", len(procs.Items), len(names))
	}
	drivetest.Run(t, drivetest.Layer{
		New:        func(t *testing.T) drive.Driver { return b.driver(t) },
		Fixtures:   names,
		Variants:   mcpVariants,
		CheckModel: workertest.ModelName,
	})
}

// Conformance fixtures: vendor-check uses the check profile, which a
// server without an evaluator does not offer (profile-check: it lists
// check-1 only while one is configured); publication refuses it and names
// check-1.
func TestFixtures_VendorCheckRefusedWithoutCheck1(t *testing.T) {
	b := start(t, options{})
	var d struct {
		Profiles []string `json:"profiles"`
	}
	agent := b.connect(agentID)
	agent.ok("describe", nil, &d)
	if slices.Contains(d.Profiles, interpreter.ProfileCheck) {
		t.Fatalf("a server without an evaluator offers %v", d.Profiles)
	}
	_, _, err := b.registry.ImportAndPublish(context.Background(), b.fixtureDir("vendor-check"), "u_admin", nil)
	var pe *interpreter.ProcessError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "check-1") {
		t.Fatalf("vendor-check publication: %v, want a refusal naming check-1", err)
	}
	var procs struct{ Items []any }
	agent.ok("list_processes", map[string]any{}, &procs)
	if len(procs.Items) != 0 {
		t.Fatalf("vendor-check was listed: %+v", procs.Items)
	}
}
