package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

// The argument schemas published in tools/list and checked on every call
// are the official ones, keyword for keyword.
func TestArgumentSchemasAreTheOfficialOnes(t *testing.T) {
	dir := filepath.Join(spectest.SharedDir(t), "schemas", "core-2", "tools")
	var names []interpreter.Tool
	for _, tl := range toolTable() {
		if tl.name == interpreter.ToolCallTool {
			continue // Baton's own profile has no official schema
		}
		names = append(names, tl.name)
	}
	if len(argumentSchemas) != len(names)+1 {
		t.Fatalf("%d argument schemas for %d tools", len(argumentSchemas), len(names))
	}
	for _, name := range names {
		t.Run(string(name), func(t *testing.T) {
			file := filepath.Join(dir, string(name)+".arguments.json")
			if name == interpreter.ToolListRuns {
				// baton-subprocess-1 adds parent to core-2's.
				file = filepath.Join("..", "docs", "schemas", "baton-subprocess-1", "list_runs.arguments.json")
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var official, ours map[string]any
			if err := json.Unmarshal(b, &official); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"$schema", "$id", "title", "description"} {
				delete(official, k)
			}
			if err := json.Unmarshal([]byte(argumentSchemas[name]), &ours); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(official, ours) {
				a, _ := json.Marshal(official)
				o, _ := json.Marshal(ours)
				t.Fatalf("argument schema differs\nofficial %s\n    ours %s", a, o)
			}
		})
	}
	if _, err := loadSchemas(); err != nil {
		t.Fatal(err)
	}
}

// call_tool's argument schema is the one docs/profile-tools.md publishes,
// in docs/schemas/baton-tools-1.
func TestCallToolArgumentSchemaIsThePublishedOne(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "schemas", "baton-tools-1", "call_tool.arguments.json"))
	if err != nil {
		t.Fatal(err)
	}
	var published, ours map[string]any
	if err := json.Unmarshal(b, &published); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"$schema", "$id", "title", "description"} {
		delete(published, k)
	}
	if err := json.Unmarshal([]byte(argumentSchemas[interpreter.ToolCallTool]), &ours); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(published, ours) {
		t.Fatalf("call_tool's argument schema differs from the published one\n%v\n%v", published, ours)
	}
}

// A call_tool's arguments are checked against the tool's listed input
// schema as the tools' own arguments are, each issue below "arguments".
func TestInputSchemaIssues(t *testing.T) {
	t.Parallel()
	// The crm's refund tool as the MCP Go SDK lists it.
	refund := json.RawMessage(`{"type":"object","required":["customer","amount","currency"],"properties":{
		"customer":{"type":"string"},"amount":{"type":"number"},"currency":{"type":"string"},
		"reason":{"type":"string"},"ticket":{"type":"string"},
		"lines":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"}},"additionalProperties":false}}},
		"additionalProperties":false}`)
	for _, tc := range []struct {
		name, args string
		want       []string
	}{
		{"valid", `{"customer":"alice@example.com","amount":89,"currency":"EUR"}`, nil},
		{"valid with options", `{"customer":"alice@example.com","amount":89.5,"currency":"EUR","reason":"broken"}`, nil},
		{"exact numbers", `{"customer":"alice@example.com","amount":123456789012345678901234567890.5,"currency":"EUR"}`, nil},
		{"no arguments", ``, []string{"arguments.customer: required", "arguments.amount: required", "arguments.currency: required"}},
		{"wrong type", `{"customer":"alice@example.com","amount":"89","currency":"EUR"}`, []string{"arguments.amount: expected number"}},
		{"missing", `{"customer":"alice@example.com","amount":89}`, []string{"arguments.currency: required"}},
		{"unknown", `{"customer":"alice@example.com","amount":89,"currency":"EUR","tip":1}`, []string{"arguments.tip: not an argument of this tool"}},
		{"nested", `{"customer":"alice@example.com","amount":89,"currency":"EUR","lines":[{"sku":1,"x":2}]}`, []string{"arguments.lines.0.x: not allowed", "arguments.lines.0.sku: expected string"}},
		{"not JSON", `{`, []string{"arguments: decode JSON: unexpected EOF"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := inputSchemaIssues(refund, json.RawMessage(tc.args))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("issues %q, want %q", got, tc.want)
			}
		})
	}
	// No schema, or one Baton cannot use, checks nothing.
	for _, schema := range []string{"", "null", `{"$ref":"https://elsewhere.example/schema.json"}`, `not json`} {
		if got := inputSchemaIssues(json.RawMessage(schema), json.RawMessage(`{"anything":1}`)); got != nil {
			t.Errorf("schema %q: issues %q", schema, got)
		}
	}
}
