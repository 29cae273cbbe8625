package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/baton-run/baton/internal/spectest"
	"github.com/baton-run/baton/interpreter"
)

// The argument schemas published in tools/list and checked on every call
// are the official ones, keyword for keyword.
func TestArgumentSchemasAreTheOfficialOnes(t *testing.T) {
	dir := filepath.Join(spectest.SharedDir(t), "schemas", "core-2", "tools")
	var names []string
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
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, name+".arguments.json"))
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
