package spectest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSharedDir(t *testing.T) {
	t.Parallel()
	dir := SharedDir(t)
	for _, p := range []string{"spec/specification.md", "spec/tools.md", "schemas/core-2/index.json", "conformance/fixtures"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("shared folder %s: %v", dir, err)
		}
	}
}

func TestFixtures(t *testing.T) {
	t.Parallel()
	names := Fixtures(t)
	if len(names) != 12 {
		t.Errorf("Fixtures() = %d names %q, want the twelve conformance fixtures", len(names), names)
	}
	if !slices.IsSorted(names) {
		t.Errorf("Fixtures() = %q, not sorted", names)
	}
	for _, name := range names {
		if b := Fixture(t, name); !bytes.HasPrefix(b, []byte("---")) {
			t.Errorf("Fixture(%q) does not start with a frontmatter fence", name)
		}
	}
}

func TestSchemasCompile(t *testing.T) {
	t.Parallel()
	names := SchemaNames(t)
	// index.json lists every schema; each must be one we loaded and compiled.
	b, err := os.ReadFile(filepath.Join(SharedDir(t), "schemas", "core-2", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var index struct {
		Shared map[string]string
		Tools  map[string]struct{ Arguments, Result string }
	}
	if err := json.Unmarshal(b, &index); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	var listed []string
	for _, p := range index.Shared {
		listed = append(listed, p)
	}
	for _, tool := range index.Tools {
		listed = append(listed, tool.Arguments, tool.Result)
	}
	if len(index.Tools) != 14 {
		t.Errorf("index.json lists %d tools, want 14", len(index.Tools))
	}
	slices.Sort(listed)
	// Baton's own profiles' schemas come from the repository.
	core := slices.DeleteFunc(slices.Clone(names), isProfileSchema)
	if !slices.Equal(listed, core) {
		t.Errorf("compiled schemas %q\nindex.json lists %q", core, listed)
	}
	if len(names)-len(core) != 7 {
		t.Errorf("%d schemas of baton-tools-1 and baton-subprocess-1 compiled, want 3 and 4", len(names)-len(core))
	}
}

// runView is the run view example of tools.md with its elisions filled in.
const runView = `{
  "run": { "id": "r_8f2", "process": "supplier-onboarding", "version": 3, "mode": "live",
           "state": "waiting", "outcome": null, "ended": null, "startedBy": "u_mira", "startedAt": "2026-10-06T09:00:00Z",
           "updatedAt": "2026-10-06T09:04:12Z" },
  "data": {
    "inputs": { "vendorName": "Acme", "amount": 48000 },
    "steps": {
      "check_vendor": {
        "output": { "cleared": true, "summary": "No matches on OFAC or EU lists." },
        "summary": "Searched both lists by legal name and two known aliases. No hits. Report attached. Did not check beneficial owners; not in scope.",
        "evidence": [ { "kind": "file", "ref": "f_91a",
                        "sha256": "4f1c8e0b9a7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c",
                        "url": "https://baton.example.com/files/f_91a?x=eyJleHAiOjE3OTEyNzc1MDB9.c2ln" } ],
        "next": "approve", "reason": "Vendor is cleared.",
        "by": "a_screener", "at": "2026-10-06T09:04:12Z",
        "history": [] } } },
  "steps": [
    { "id": "check_vendor", "kind": "agent", "state": "done" },
    { "id": "approve", "kind": "approve", "state": "waiting", "due": "2026-10-08T09:04:12Z", "overdue": false },
    { "id": "decline", "kind": "finish", "state": null },
    { "id": "done", "kind": "finish", "state": null } ],
  "workItems": [
    { "id": "w_31", "stepId": "approve", "kind": "approve", "text": "Approve only when the vendor is cleared and the spend is justified.",
      "output": null, "evidence": null, "next": null, "handoff": null,
      "assignedTo": { "group": "g_finance" },
      "snapshot": "9b7e2c1d0f3a4b5c6d7e8f9012a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5",
      "due": "2026-10-08T09:04:12Z",
      "escalation": null,
      "decide": { "tool": "decide",
                  "arguments": { "runId": "r_8f2", "workItemId": "w_31",
                                 "snapshot": "9b7e2c1d0f3a4b5c6d7e8f9012a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5",
                                 "requestId": "<new UUID>" },
                  "decisions": ["approved", "rejected", "failed"] } } ],
  "body": "# Supplier onboarding\n\nStart this when procurement has a new supplier."
}`

// decodeRunView returns a fresh copy of the example to edit.
func decodeRunView(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	dec := json.NewDecoder(strings.NewReader(runView))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode the example run view: %v", err)
	}
	return v
}

func TestValidateRunView(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(v map[string]any)
		valid bool
	}{
		{name: "the example", edit: func(map[string]any) {}, valid: true},
		{name: "ended run", valid: true, edit: func(v map[string]any) {
			run := v["run"].(map[string]any)
			run["state"], run["outcome"] = "ended", "onboarded"
			run["ended"] = map[string]any{"by": "server", "at": "2026-10-07T10:00:00Z", "note": nil}
		}},
		{name: "no body", edit: func(v map[string]any) { delete(v, "body") }},
		{name: "unknown run state", edit: func(v map[string]any) { v["run"].(map[string]any)["state"] = "paused" }},
		{name: "ended without note", edit: func(v map[string]any) {
			v["run"].(map[string]any)["ended"] = map[string]any{"by": "server", "at": "2026-10-07T10:00:00Z"}
		}},
		{name: "version as text", edit: func(v map[string]any) { v["run"].(map[string]any)["version"] = "3" }},
		{name: "unknown top-level key", edit: func(v map[string]any) { v["token"] = "eyJ" }},
		{name: "work item without decide", edit: func(v map[string]any) {
			delete(v["workItems"].([]any)[0].(map[string]any), "decide")
		}},
		{name: "evidence without ref", edit: func(v map[string]any) {
			ev := v["data"].(map[string]any)["steps"].(map[string]any)["check_vendor"].(map[string]any)["evidence"].([]any)
			delete(ev[0].(map[string]any), "ref")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := decodeRunView(t)
			tt.edit(v)
			err := ValidateErr("run-view.json", v)
			if tt.valid && err != nil {
				t.Errorf("want valid, got %v", err)
			}
			if !tt.valid && err == nil {
				t.Error("want a validation error, got none")
			}
		})
	}
}

func TestValidateGoValues(t *testing.T) {
	t.Parallel()
	type evidence struct {
		Kind string `json:"kind"`
		Ref  string `json:"ref"`
	}
	Validate(t, "evidence-item.json", evidence{Kind: "link", Ref: "DOC-1"})
	Validate(t, "evidence-item.json", json.RawMessage(`{"kind": "file", "ref": "f_1"}`))
	if err := ValidateErr("evidence-item.json", evidence{Kind: "fax", Ref: "1"}); err == nil {
		t.Error("evidence kind fax validated")
	}
	Validate(t, "tools/renew.result.json", map[string]any{"token": "eyJ", "expiresAt": "2026-10-06T09:20:00Z"})
}

func TestValidateErrUnknownSchema(t *testing.T) {
	t.Parallel()
	err := ValidateErr("tools/nope.result.json", map[string]any{})
	if err == nil || !strings.Contains(err.Error(), `no schema "tools/nope.result.json"`) {
		t.Errorf("ValidateErr(unknown schema) = %v", err)
	}
}

func TestValidateToolResult(t *testing.T) {
	t.Parallel()
	view := decodeRunView(t)
	tests := []struct {
		name  string
		tool  string
		value any
		valid bool
	}{
		{name: "ok run view", tool: "get_run", value: map[string]any{"ok": true, "data": view}, valid: true},
		{name: "ok send_event", tool: "send_event", value: map[string]any{"ok": true, "data": map[string]any{"consumedBy": nil}}, valid: true},
		{
			name: "error", tool: "submit", valid: true,
			value: map[string]any{"ok": false, "error": map[string]any{
				"code": "not_accepted", "message": "The submission was not accepted.",
				"issues": []string{"output.cleared: expected boolean"},
			}},
		},
		{name: "unknown error code", tool: "submit", value: map[string]any{"ok": false, "error": map[string]any{"code": "oops", "message": "m"}}},
		{name: "data on a refusal", tool: "submit", value: map[string]any{"ok": false, "data": view}},
		{name: "both data and error", tool: "get_run", value: map[string]any{"ok": true, "data": view, "error": nil}},
		{name: "ok missing", tool: "get_run", value: map[string]any{"data": view}},
		{name: "ok as text", tool: "get_run", value: map[string]any{"ok": "true", "data": view}},
		{name: "bare data", tool: "get_run", value: view},
		{name: "wrong shape for the tool", tool: "claim", value: map[string]any{"ok": true, "data": view}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := validateToolResult(tt.tool, tt.value)
			if tt.valid && err != nil {
				t.Errorf("want valid, got %v", err)
			}
			if !tt.valid && err == nil {
				t.Error("want an error, got none")
			}
		})
	}
}
