package inbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/baton-run/baton/interpreter"
)

// The output form is generated from the step's declared fields. Each field
// posts two inputs: "o.NAME", what the person typed or chose, and the
// hidden "t.NAME", how to read it back into a JSON value. Reading needs
// nothing but the form, so the same form posted twice makes the same
// decide call, which the tool answers once. The inbox only encodes: a
// value it cannot read as the declared type goes to decide as the text
// typed, and decide says what is wrong with it ("output.amount: expected
// number"), exactly as it would to any client.

// Form input name prefixes.
const (
	prefixValue = "o."
	prefixCodec = "t."
)

// How a field's input is read back.
const (
	codecLine     = "line"     // one line, trimmed: date, datetime, person
	codecText     = "text"     // a string, as typed (line ends normalized)
	codecNumber   = "number"   // a JSON number, else the text
	codecBoolean  = "boolean"  // true or false
	codecChoice   = "choice"   // one of the declared values, each posted as JSON
	codecChoices  = "choices"  // a list of declared values: ticked boxes
	codecJSON     = "json"     // JSON text: objects, lists of lists or objects
	codecLinesPre = "lines:"   // + the item codec: a list, one item a line
	controlArea   = "textarea" // the controls a template draws
	controlInput  = "input"
	controlSelect = "select"
	controlTicks  = "checkboxes"
)

// formField is one declared output field as the form shows it.
type formField struct {
	Name        string
	Type        string // the declared type, in words
	Description string
	Optional    bool
	Codec       string
	Control     string
	InputType   string // for an input: text, date, email
	InputMode   string // for an input: decimal for numbers
	Placeholder string
	Choices     []choice
	Value       string
	Issues      []string
}

type choice struct {
	Value, Label string
	Selected     bool
}

// newFormField lays out one declared field with its current value: the
// value a submission held (a check's candidate), or what was posted.
func newFormField(f *interpreter.Field, value any, hasValue bool, posted url.Values) formField {
	ff := formField{Name: f.Name, Type: typeText(f), Description: f.Description, Optional: f.Optional, Control: controlInput, InputType: "text"}
	switch {
	case f.Type == interpreter.TypeList && f.Items != nil && len(f.Items.OneOf) > 0:
		ff.Codec, ff.Control = codecChoices, controlTicks
		ff.Choices = choices(f.Items.OneOf)
	case f.Type == interpreter.TypeList && f.Items != nil && scalar(f.Items.Type):
		ff.Codec, ff.Control = codecLinesPre+itemCodec(f.Items.Type), controlArea
		ff.Placeholder = "One a line"
	case f.Type == interpreter.TypeList || f.Type == interpreter.TypeObject:
		ff.Codec, ff.Control = codecJSON, controlArea
		if f.Type == interpreter.TypeList {
			ff.Placeholder = `JSON, such as [ … ]`
		} else {
			ff.Placeholder = `JSON, such as { "key": "value" }`
		}
	case len(f.OneOf) > 0:
		ff.Codec, ff.Control = codecChoice, controlSelect
		ff.Choices = choices(f.OneOf)
	case f.Type == interpreter.TypeBoolean:
		ff.Codec, ff.Control = codecBoolean, controlSelect
		ff.Choices = []choice{{Value: "true", Label: "Yes"}, {Value: "false", Label: "No"}}
	case f.Type == interpreter.TypeNumber:
		ff.Codec, ff.InputMode = codecNumber, "decimal"
	case f.Type == interpreter.TypeDate:
		ff.Codec, ff.InputType, ff.Placeholder = codecLine, "date", "YYYY-MM-DD"
	case f.Type == interpreter.TypeDatetime:
		ff.Codec, ff.Placeholder = codecLine, "2026-10-06T09:00:00Z"
	case f.Type == interpreter.TypePerson:
		ff.Codec, ff.InputType, ff.Placeholder = codecLine, "email", "name@example.com"
	default:
		ff.Codec, ff.Control = codecText, controlArea
	}
	switch {
	case posted != nil:
		vals := posted[prefixValue+f.Name]
		if ff.Control == controlTicks {
			for i := range ff.Choices {
				ff.Choices[i].Selected = contains(vals, ff.Choices[i].Value)
			}
		} else if len(vals) > 0 {
			ff.Value = vals[0]
		}
	case hasValue:
		ff.fill(value)
	}
	if ff.Control == controlSelect {
		for i := range ff.Choices {
			ff.Choices[i].Selected = ff.Choices[i].Value == ff.Value
		}
	}
	return ff
}

// fill shows a JSON value in the field's control.
func (ff *formField) fill(v any) {
	switch {
	case ff.Control == controlTicks:
		list, _ := v.([]any)
		for i := range ff.Choices {
			for _, x := range list {
				if jsonText(x) == ff.Choices[i].Value {
					ff.Choices[i].Selected = true
				}
			}
		}
	case strings.HasPrefix(ff.Codec, codecLinesPre):
		list, ok := v.([]any)
		if !ok {
			ff.Value = prettyJSON(v)
			return
		}
		lines := make([]string, len(list))
		for i, x := range list {
			lines[i] = plainText(x)
		}
		ff.Value = strings.Join(lines, "\n")
	case ff.Codec == codecJSON:
		ff.Value = prettyJSON(v)
	case ff.Codec == codecChoice:
		ff.Value = jsonText(v)
	default:
		ff.Value = plainText(v)
	}
}

// readOutput reads the output object a form posted, and whether the form
// had output fields at all. An empty input leaves its field out, so
// decide reports a required one as missing.
func readOutput(form url.Values) (map[string]any, bool) {
	var names []string
	for k := range form {
		if name, ok := strings.CutPrefix(k, prefixCodec); ok && name != "" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, false
	}
	sort.Strings(names)
	out := map[string]any{}
	for _, name := range names {
		if v, ok := readValue(form.Get(prefixCodec+name), form[prefixValue+name]); ok {
			out[name] = v
		}
	}
	return out, true
}

// readValue reads one field's posted values with its codec.
func readValue(codec string, vals []string) (any, bool) {
	if item, ok := strings.CutPrefix(codec, codecLinesPre); ok {
		if len(vals) == 0 {
			return nil, false
		}
		var list []any
		for _, line := range strings.Split(normalizeLines(vals[0]), "\n") {
			if v, ok := readScalar(item, line); ok {
				list = append(list, v)
			}
		}
		if len(list) == 0 {
			return nil, false
		}
		return list, true
	}
	if codec == codecChoices {
		var list []any
		for _, v := range vals {
			if x, ok := readScalar(codecChoice, v); ok {
				list = append(list, x)
			}
		}
		if len(list) == 0 {
			return nil, false
		}
		return list, true
	}
	if len(vals) == 0 {
		return nil, false
	}
	return readScalar(codec, vals[0])
}

var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

func readScalar(codec, s string) (any, bool) {
	if codec == codecText {
		s = normalizeLines(s)
		if strings.TrimSpace(s) == "" {
			return nil, false
		}
		return s, true
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false
	}
	switch codec {
	case codecNumber:
		if jsonNumber.MatchString(s) {
			return json.Number(s), true
		}
	case codecBoolean:
		switch s {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	case codecChoice, codecJSON:
		var v any
		if interpreter.DecodeExact([]byte(s), &v) == nil {
			return v, true
		}
	}
	return s, true
}

func normalizeLines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

func scalar(t interpreter.Type) bool {
	switch t {
	case interpreter.TypeString, interpreter.TypeNumber, interpreter.TypeBoolean,
		interpreter.TypeDate, interpreter.TypeDatetime, interpreter.TypePerson:
		return true
	}
	return false
}

func itemCodec(t interpreter.Type) string {
	switch t {
	case interpreter.TypeNumber:
		return codecNumber
	case interpreter.TypeBoolean:
		return codecBoolean
	}
	return codecLine
}

func choices(oneOf []any) []choice {
	out := make([]choice, len(oneOf))
	for i, v := range oneOf {
		out[i] = choice{Value: jsonText(v), Label: plainText(v)}
	}
	return out
}

// typeText says a field's type in words: "number", "list of string",
// "one of gold, silver".
func typeText(f *interpreter.Field) string {
	if f == nil {
		return "any"
	}
	if len(f.OneOf) > 0 {
		parts := make([]string, len(f.OneOf))
		for i, v := range f.OneOf {
			parts[i] = plainText(v)
		}
		return "one of " + strings.Join(parts, ", ")
	}
	if f.Type == interpreter.TypeList && f.Items != nil {
		return "list of " + typeText(f.Items)
	}
	return string(f.Type)
}

// jsonText is a value's compact JSON: how a choice posts it.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// plainText shows a value to a person: strings bare, numbers as written,
// booleans as true or false, anything else as JSON.
func plainText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool, float64, int:
		return fmt.Sprint(x)
	case nil:
		return "null"
	}
	return jsonText(v)
}

func prettyJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
