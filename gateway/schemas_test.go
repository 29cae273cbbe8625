package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/baton-run/baton/internal/spectest"
)

// The argument schemas published in tools/list and checked on every call
// are the official ones, keyword for keyword.
func TestArgumentSchemasAreTheOfficialOnes(t *testing.T) {
	dir := filepath.Join(spectest.SharedDir(t), "schemas", "core-2", "tools")
	var names []string
	for _, tl := range toolTable() {
		names = append(names, tl.name)
	}
	if len(argumentSchemas) != len(names) {
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
