package interpreter

import "testing"

// TestParseYAMLSharedRules checks the exported reader other YAML files use:
// core-schema resolution, and refusals in line:column order as found.
func TestParseYAMLSharedRules(t *testing.T) {
	t.Parallel()
	doc, issues, yerr := ParseYAML([]byte("a: 2024-01-01\nb: 017\nc: ! 12\nd: &x 1\n17: x\n\"17\": y\n"), "file")
	if yerr != nil || doc == nil {
		t.Fatalf("ParseYAML = %v, %v", doc, yerr)
	}
	want := []string{"4:4: d: anchors and aliases are not allowed", "6:1: 17: duplicate key, first at line 5"}
	if len(issues) != len(want) {
		t.Fatalf("issues = %v, want %v", issues, want)
	}
	for i, is := range issues {
		if is.String() != want[i] {
			t.Errorf("issue %d = %q, want %q", i, is.String(), want[i])
		}
	}
	m := doc.Root.Content
	if s, ok := doc.String(m[1]); !ok || s != "2024-01-01" {
		t.Errorf("a = %q, %v; want the string 2024-01-01", s, ok)
	}
	if k := doc.Kind(m[3]); k != "number" {
		t.Errorf("b is a %s, want a number", k)
	}
	if s, ok := doc.String(m[5]); !ok || s != "12" {
		t.Errorf("c = %q, %v; want the string 12", s, ok)
	}
	if k := doc.Kind(m[7]); k != "" {
		t.Errorf("d is a %s, want refused", k)
	}
	if _, _, yerr := ParseYAML([]byte("a: 1\n---\nb: 2\n"), "file"); yerr == nil || yerr.Line != 2 || yerr.Syntax {
		t.Errorf("two documents: %+v", yerr)
	}
}
