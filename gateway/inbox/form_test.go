package inbox

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-run/baton/interpreter"
)

func fields(t *testing.T, notation string) interpreter.Fields {
	t.Helper()
	var fs interpreter.Fields
	if err := json.Unmarshal([]byte(notation), &fs); err != nil {
		t.Fatal(err)
	}
	return fs
}

// Each declared type gets its control, and what the control posts reads
// back as the JSON value decide expects; what cannot be read goes to
// decide as typed, for decide to refuse.
func TestFormReadsBackEveryType(t *testing.T) {
	fs := fields(t, `{
		"total": "number", "tier": {"type": "string", "one_of": ["gold", "silver"]},
		"size": {"type": "number", "one_of": [1, 2.5]}, "ok": "boolean", "when": "date",
		"at": "datetime", "who": "person", "tags": {"type": "list", "items": "string"},
		"counts": {"type": "list", "items": "number"}, "picks": {"type": "list", "items": {"type": "string", "one_of": ["a", "b", "c"]}},
		"meta": "object", "rows": {"type": "list", "items": "object"}, "memo": {"type": "string", "optional": true}, "text": "string"
	}`)
	controls := map[string]string{}
	form := url.Values{}
	for _, f := range fs {
		ff := newFormField(f, nil, false, nil)
		controls[f.Name] = ff.Control + "/" + ff.Codec
		form.Set(prefixCodec+f.Name, ff.Codec)
	}
	want := map[string]string{
		"total": "input/number", "tier": "select/choice", "size": "select/choice", "ok": "select/boolean",
		"when": "input/line", "at": "input/line", "who": "input/line", "tags": "textarea/lines:line",
		"counts": "textarea/lines:number", "picks": "checkboxes/choices", "meta": "textarea/json",
		"rows": "textarea/json", "memo": "textarea/text", "text": "textarea/text",
	}
	if !reflect.DeepEqual(controls, want) {
		t.Fatalf("controls\n got %v\nwant %v", controls, want)
	}
	post := map[string][]string{
		"total": {" 12.50 "}, "tier": {`"gold"`}, "size": {"2.5"}, "ok": {"false"}, "when": {" 2026-10-06 "},
		"at": {"soon"}, "who": {"Mira@Example.com"}, "tags": {"a\r\n\r\n b \r\n"}, "counts": {"1\n2,5\n3e2"},
		"picks": {`"a"`, `"c"`}, "meta": {`{"k": 1.10}`}, "rows": {"[{"}, "memo": {"  "}, "text": {"line one\r\nline two"},
	}
	for k, v := range post {
		form[prefixValue+k] = v
	}
	out, ok := readOutput(form)
	if !ok {
		t.Fatal("the form has fields")
	}
	wantOut := map[string]any{
		"total": json.Number("12.50"), "tier": "gold", "size": json.Number("2.5"), "ok": false, "when": "2026-10-06",
		"at": "soon", "who": "Mira@Example.com", "tags": []any{"a", "b"}, "counts": []any{json.Number("1"), "2,5", json.Number("3e2")},
		"picks": []any{"a", "c"}, "meta": map[string]any{"k": json.Number("1.10")}, "rows": "[{", "text": "line one\nline two",
	}
	if !reflect.DeepEqual(out, wantOut) {
		t.Fatalf("output\n got %#v\nwant %#v", out, wantOut)
	}
	if _, ok := readOutput(url.Values{"note": {"x"}}); ok {
		t.Fatal("a form without fields has no output")
	}
}

// A value a submission held fills the control it would be posted from.
func TestFormShowsValues(t *testing.T) {
	fs := fields(t, `{"tier": {"type": "string", "one_of": ["gold", "silver"]}, "ok": "boolean", "n": "number",
		"tags": {"type": "list", "items": "number"}, "picks": {"type": "list", "items": {"type": "string", "one_of": ["a", "b"]}}, "meta": "object"}`)
	vals := map[string]any{"tier": "silver", "ok": true, "n": json.Number("1.50"), "tags": []any{json.Number("1"), json.Number("2")},
		"picks": []any{"b"}, "meta": map[string]any{"k": "v"}}
	got := map[string]string{}
	for _, f := range fs {
		ff := newFormField(f, vals[f.Name], true, nil)
		var sel []string
		for _, c := range ff.Choices {
			if c.Selected {
				sel = append(sel, c.Value)
			}
		}
		got[f.Name] = ff.Value + "|" + strings.Join(sel, ",")
	}
	want := map[string]string{"tier": `"silver"|"silver"`, "ok": "true|true", "n": "1.50|", "tags": "1\n2|", "picks": `|"b"`, "meta": "{\n  \"k\": \"v\"\n}|"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("values\n got %q\nwant %q", got, want)
	}
}

// Issues go to the part of the form their path names.
func TestSortIssues(t *testing.T) {
	b := sortIssues([]string{
		"output.total: expected number", "output.lines[2].amount: expected number", "output.tier: missing",
		"output: expected object", "evidence: file required", "evidence f_000: not found", "next: required, one of a, b",
		"reason: required", "note: required", "summary: missing", "run data: over 262144 bytes", "already_decided",
	})
	if !reflect.DeepEqual(b.output, map[string][]string{
		"total": {"output.total: expected number"}, "lines": {"output.lines[2].amount: expected number"}, "tier": {"output.tier: missing"},
	}) || len(b.outputAll) != 1 || len(b.evidence) != 2 || len(b.next) != 1 || len(b.reason) != 1 || len(b.note) != 1 ||
		len(b.summary) != 1 || !reflect.DeepEqual(b.other, []string{"run data: over 262144 bytes", "already_decided"}) {
		t.Fatalf("sorted %+v", b)
	}
}
