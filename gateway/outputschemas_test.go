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

// Each tool's result schema inside the published envelope is the official
// one, keyword for keyword, and the error branch is the official error.
func TestOutputSchemasAreTheOfficialOnes(t *testing.T) {
	core := filepath.Join(spectest.SharedDir(t), "schemas", "core-2")
	official := func(t *testing.T, path string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"$schema", "$id", "title", "description"} {
			delete(m, k)
		}
		return m
	}
	if len(resultSchemas) != len(toolTable()) {
		t.Fatalf("%d result schemas for %d tools", len(resultSchemas), len(toolTable()))
	}
	var errBranch any
	for _, tl := range toolTable() {
		t.Run(string(tl.name), func(t *testing.T) {
			path := filepath.Join(core, "tools", string(tl.name)+".result.json")
			if tl.name == interpreter.ToolCallTool {
				path = filepath.Join("..", "docs", "schemas", "baton-tools-1", "call_tool.result.json")
			}
			want := official(t, path)
			raw, err := outputSchema(tl.name)
			if err != nil {
				t.Fatal(err)
			}
			var env struct {
				Type  string `json:"type"`
				AnyOf []struct {
					Properties struct {
						OK    map[string]any `json:"ok"`
						Data  map[string]any `json:"data"`
						Error map[string]any `json:"error"`
					} `json:"properties"`
				} `json:"anyOf"`
				Defs map[string]any `json:"$defs"`
			}
			if err := json.Unmarshal(raw, &env); err != nil {
				t.Fatal(err)
			}
			if env.Type != "object" || len(env.AnyOf) != 2 {
				t.Fatalf("envelope %s", raw)
			}
			got := env.AnyOf[0].Properties.Data
			_, steps := want["properties"].(map[string]any)["steps"]
			wantAdded := 0
			if steps || tl.name == interpreter.ToolListProcesses {
				wantAdded = 1
			}
			if n := withoutSubprocessAdditions(t, got, func(name string) map[string]any {
				return official(t, filepath.Join("..", "docs", "schemas", "baton-subprocess-1", name))
			}); n != wantAdded {
				t.Fatalf("%d additions of baton-subprocess-1, want %d", n, wantAdded)
			}
			if defs, ok := want["$defs"].(map[string]any); ok {
				mine := map[string]any{}
				for k := range defs {
					mine[k] = env.Defs[k]
				}
				got["$defs"] = mine
			}
			if !reflect.DeepEqual(want, got) {
				a, _ := json.Marshal(want)
				o, _ := json.Marshal(got)
				t.Fatalf("result schema differs\nofficial %s\n    ours %s", a, o)
			}
			errBranch = env.AnyOf[1].Properties.Error
		})
	}
	if want := official(t, filepath.Join(core, "tool-error.json")); !reflect.DeepEqual(want, errBranch) {
		t.Fatalf("error schema differs\nofficial %v\n    ours %v", want, errBranch)
	}
}

// withoutSubprocessAdditions removes baton-subprocess-1's additions from a
// tool's result schema, a process step in a run view's steps and a
// list_processes item's processes, failing unless each is the profile's
// published schema, and returns how many it removed.
func withoutSubprocessAdditions(t *testing.T, data map[string]any, profile func(name string) map[string]any) int {
	t.Helper()
	n := 0
	props, _ := data["properties"].(map[string]any)
	if steps, ok := props["steps"].(map[string]any); ok {
		items, _ := steps["items"].(map[string]any)
		anyOf, _ := items["anyOf"].([]any)
		if want := profile("process-step.json"); len(anyOf) != 2 || !reflect.DeepEqual(anyOf[1], want) {
			o, _ := json.Marshal(items)
			t.Fatalf("steps items are not core-2's or the profile's process step: %s", o)
		}
		steps["items"] = anyOf[0]
		n++
	}
	if list, ok := props["items"].(map[string]any); ok {
		item, _ := list["items"].(map[string]any)
		if ip, ok := item["properties"].(map[string]any); ok {
			if got, ok := ip["processes"]; ok {
				if want := profile("list_processes-processes.json"); !reflect.DeepEqual(got, want) {
					o, _ := json.Marshal(got)
					t.Fatalf("processes is not the profile's: %s", o)
				}
				delete(ip, "processes")
				n++
			}
		}
	}
	return n
}
