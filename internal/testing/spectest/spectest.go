// Package spectest gives tests the specification's own material: the shared
// folder beside the checkout, the twelve conformance fixtures, and the official
// JSON Schemas of core-2. Only _test.go files import it.
//
// The shared folder is ../shared next to the repository root (the folder
// holding go.mod). Tests that use this package fail with a clear message when
// it is missing.
//
// # Which schema validates which level
//
// Every tool call answers { ok: true, data } or { ok: false, error } (spec
// §4). The schemas in shared/schemas/core-2/ describe the parts, not that
// envelope:
//
//   - tools/<tool>.arguments.json validates the arguments object of a call.
//   - tools/<tool>.result.json validates data, the value inside { ok: true }.
//     For start_run, get_run, submit, decide, escalate and cancel that is a
//     run view, but note that only run-view.json requires body.
//   - tool-error.json validates error, the value inside { ok: false }.
//   - run-view.json, work-item.json, run-data.json, evidence-item.json,
//     check-verdict.json and process-document.json validate those shared
//     shapes wherever they appear.
//
// [ValidateToolResult] checks a whole envelope: its keys, then data or error
// against the right schema.
//
// The schemas refer to each other only by $id under
// https://agentprocess.io/schemas/core-2/; every file is loaded by its $id and
// nothing is fetched from the network.
package spectest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaBase is the $id prefix of every core-2 schema.
const SchemaBase = "https://agentprocess.io/schemas/core-2/"

// SharedDir returns the shared folder beside the checkout: <root>/../shared,
// where root is the nearest folder above the working directory that holds
// go.mod. It fails the test when the folder is missing.
func SharedDir(t testing.TB) string {
	t.Helper()
	dir, err := sharedDir()
	if err != nil {
		t.Fatalf("spectest: %v", err)
	}
	return dir
}

// repoRoot is the nearest folder above the working directory that holds
// go.mod: the checkout.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the checkout: %w", err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root, nil
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", fmt.Errorf("find the checkout: no go.mod in %s or above it", wd)
		}
		root = parent
	}
}

func sharedDir() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", fmt.Errorf("find the shared folder: %w", err)
	}
	shared := filepath.Join(filepath.Dir(root), "shared")
	if fi, err := os.Stat(shared); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("the tests read the specification, fixtures and schemas from %s "+
			"(the shared folder beside the checkout %s), and it is missing: "+
			"check it out there and run the tests again", shared, root)
	}
	return shared, nil
}

// Fixtures returns the names of the conformance fixtures, the folders of
// shared/conformance/fixtures that hold a PROCESS.md, sorted.
func Fixtures(t testing.TB) []string {
	t.Helper()
	dir := filepath.Join(SharedDir(t), "conformance", "fixtures")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("spectest: list fixtures: %v", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "PROCESS.md")); err == nil {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatalf("spectest: no fixtures in %s", dir)
	}
	slices.Sort(names)
	return names
}

// FixtureDir returns the folder of the named conformance fixture.
func FixtureDir(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(SharedDir(t), "conformance", "fixtures", name)
}

// Fixture returns the bytes of the named fixture's PROCESS.md.
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(FixtureDir(t, name), "PROCESS.md"))
	if err != nil {
		t.Fatalf("spectest: read fixture %q: %v", name, err)
	}
	return b
}

// schemaSet is every core-2 schema, compiled once per test binary.
type schemaSet struct {
	byName map[string]*jsonschema.Schema // by path relative to core-2
	names  []string
}

var (
	schemasOnce sync.Once
	schemas     *schemaSet
	schemasErr  error
)

func loadSchemas() (*schemaSet, error) {
	schemasOnce.Do(func() { schemas, schemasErr = compileSchemas() })
	return schemas, schemasErr
}

func compileSchemas() (*schemaSet, error) {
	shared, err := sharedDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(shared, "schemas", "core-2")
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{}) // offline: only what AddResource gave it
	set := &schemaSet{byName: map[string]*jsonschema.Schema{}}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "index.json" { // the list of schemas, not a schema
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("schema %s: %w", rel, err)
		}
		obj, _ := doc.(map[string]any)
		id, _ := obj["$id"].(string)
		if id != SchemaBase+rel {
			return fmt.Errorf("schema %s: $id is %q, want %q", rel, id, SchemaBase+rel)
		}
		if err := c.AddResource(id, doc); err != nil {
			return fmt.Errorf("schema %s: %w", rel, err)
		}
		set.names = append(set.names, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load schemas from %s: %w", dir, err)
	}
	if len(set.names) == 0 {
		return nil, fmt.Errorf("load schemas: none in %s", dir)
	}
	if err := addProfileSchemas(c, set); err != nil {
		return nil, err
	}
	slices.Sort(set.names)
	for _, name := range set.names {
		url := SchemaBase + name
		if isProfileSchema(name) {
			url = "https://baton.run/schemas/" + name
		}
		sch, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("compile schema %s: %w", name, err)
		}
		set.byName[name] = sch
	}
	return set, nil
}

// Baton's own profiles' schemas live in the repository, not the shared
// folder: docs/schemas/<profile>, named "<profile>/<file>" here.
const (
	ProfileToolsDir  = "baton-tools-1"
	ProfileToolsBase = "https://baton.run/schemas/baton-tools-1/"
	// ProfileSubprocessDir holds baton-subprocess-1's schemas.
	ProfileSubprocessDir = "baton-subprocess-1"
)

// profileDirs are the folders of docs/schemas, one per profile of Baton's.
var profileDirs = []string{ProfileToolsDir, ProfileSubprocessDir}

// profileBase is the $id base of a profile's schemas.
func profileBase(dir string) string { return "https://baton.run/schemas/" + dir + "/" }

// isProfileSchema reports whether a schema name is one of a profile's.
func isProfileSchema(name string) bool {
	for _, dir := range profileDirs {
		if strings.HasPrefix(name, dir+"/") {
			return true
		}
	}
	return false
}

// addProfileSchemas adds the repository's profile schemas to c and set.
func addProfileSchemas(c *jsonschema.Compiler, set *schemaSet) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	for _, profile := range profileDirs {
		dir := filepath.Join(root, "docs", "schemas", profile)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("load the %s schemas: %w", profile, err)
		}
		base := profileBase(profile)
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				return err
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				return fmt.Errorf("schema %s/%s: %w", profile, e.Name(), err)
			}
			obj, _ := doc.(map[string]any)
			if id, _ := obj["$id"].(string); id != base+e.Name() {
				return fmt.Errorf("schema %s/%s: $id is %q, want %q", profile, e.Name(), id, base+e.Name())
			}
			if err := c.AddResource(base+e.Name(), doc); err != nil {
				return fmt.Errorf("schema %s/%s: %w", profile, e.Name(), err)
			}
			set.names = append(set.names, profile+"/"+e.Name())
		}
	}
	return nil
}

// SchemaNames returns the path of every core-2 schema relative to core-2,
// such as "run-view.json" and "tools/claim.result.json", sorted. It fails the
// test when any schema does not load or compile.
func SchemaNames(t testing.TB) []string {
	t.Helper()
	set, err := loadSchemas()
	if err != nil {
		t.Fatalf("spectest: %v", err)
	}
	return slices.Clone(set.names)
}

// ValidateErr validates v against the named schema, a path relative to
// core-2 such as "run-view.json" or "tools/claim.result.json". v is any Go
// value: it is encoded as JSON and decoded with numbers kept exact, so a
// struct is checked as it would go on the wire. A json.RawMessage or []byte
// is taken as JSON text. The error says what broke and shows the JSON.
func ValidateErr(schema string, v any) error {
	set, err := loadSchemas()
	if err != nil {
		return err
	}
	sch, ok := set.byName[schema]
	if !ok {
		return fmt.Errorf("no schema %q in core-2; the names are relative to core-2, such as %q or %q",
			schema, "run-view.json", "tools/claim.result.json")
	}
	b, err := encode(v)
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("decode JSON for %s: %w", schema, err)
	}
	if err := sch.Validate(doc); err != nil {
		return fmt.Errorf("%s: %w\n%s", schema, err, indent(b))
	}
	return nil
}

// Validate fails the test, without stopping it, when v does not validate
// against the named schema (see ValidateErr).
func Validate(t testing.TB, schema string, v any) {
	t.Helper()
	if err := ValidateErr(schema, v); err != nil {
		t.Errorf("spectest: %v", err)
	}
}

// ValidateToolResult fails the test, without stopping it, when v is not a
// well-formed result of the named tool: exactly { ok: true, data } with data
// valid against tools/<tool>.result.json, or exactly { ok: false, error }
// with error valid against tool-error.json. A parent's data may carry the
// additions of baton-subprocess-1, each valid against the profile's schema
// (subprocess.go).
func ValidateToolResult(t testing.TB, tool string, v any) {
	t.Helper()
	if err := validateToolResult(tool, v); err != nil {
		t.Errorf("spectest: %s result: %v", tool, err)
	}
}

func validateToolResult(tool string, v any) error {
	b, err := encode(v)
	if err != nil {
		return err
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("not a JSON object: %w\n%s", err, indent(b))
	}
	var ok bool
	switch string(env["ok"]) {
	case "true":
		ok = true
	case "false":
	default:
		return fmt.Errorf("ok is not true or false\n%s", indent(b))
	}
	want, schema := "data", "tools/"+tool+".result.json"
	if tool == "call_tool" {
		schema = ProfileToolsDir + "/call_tool.result.json"
	}
	if !ok {
		want, schema = "error", "tool-error.json"
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{want, "ok"}) { // sorted: "data" and "error" sort before "ok"
		return fmt.Errorf("keys are %s, want ok and %s\n%s", strings.Join(keys, ", "), want, indent(b))
	}
	data := env[want]
	if ok {
		if data, err = withoutSubprocessAdditions(tool, data); err != nil {
			return fmt.Errorf("%w\n%s", err, indent(b))
		}
	}
	return ValidateErr(schema, data)
}

func encode(v any) ([]byte, error) {
	switch x := v.(type) {
	case json.RawMessage:
		return x, nil
	case []byte:
		return x, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T as JSON: %w", v, err)
	}
	return b, nil
}

func indent(b []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return string(b)
	}
	return buf.String()
}
