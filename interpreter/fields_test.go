package interpreter

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
)

// mustJSON decodes a JSON text the way the gateway does.
func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := DecodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("DecodeJSON(%q): %v", s, err)
	}
	return v
}

func field(typ Type) *Field { return &Field{Type: typ} }

func oneOfField(typ Type, values ...any) *Field { return &Field{Type: typ, OneOf: values} }

func listOf(items *Field) *Field { return &Field{Type: TypeList, Items: items} }

func num(s string) json.Number { return json.Number(s) }

func TestCheckValue(t *testing.T) {
	t.Parallel()
	const p = "output.x"
	tests := []struct {
		name  string
		field *Field
		json  string // the value, as JSON text
		want  []string
	}{
		// string
		{name: "string", field: field(TypeString), json: `"Acme"`},
		{name: "string empty", field: field(TypeString), json: `""`},
		{name: "string number", field: field(TypeString), json: `1`, want: []string{"output.x: expected string"}},
		{name: "string null", field: field(TypeString), json: `null`, want: []string{"output.x: expected string"}},
		{name: "string list", field: field(TypeString), json: `["a"]`, want: []string{"output.x: expected string"}},

		// number
		{name: "number integer", field: field(TypeNumber), json: `48000`},
		{name: "number negative zero", field: field(TypeNumber), json: `-0`},
		{name: "number fraction exponent", field: field(TypeNumber), json: `-1.5e-3`},
		{name: "number beyond float64", field: field(TypeNumber), json: `123456789012345678901234567890.000000000000000000001`},
		{name: "number huge exponent", field: field(TypeNumber), json: `1e999999999`},
		{name: "number string", field: field(TypeNumber), json: `"1"`, want: []string{"output.x: expected number"}},
		{name: "number boolean", field: field(TypeNumber), json: `true`, want: []string{"output.x: expected number"}},
		{name: "number null", field: field(TypeNumber), json: `null`, want: []string{"output.x: expected number"}},

		// boolean
		{name: "boolean true", field: field(TypeBoolean), json: `true`},
		{name: "boolean false", field: field(TypeBoolean), json: `false`},
		{name: "boolean string", field: field(TypeBoolean), json: `"true"`, want: []string{"output.x: expected boolean"}},
		{name: "boolean yes", field: field(TypeBoolean), json: `"yes"`, want: []string{"output.x: expected boolean"}},
		{name: "boolean zero", field: field(TypeBoolean), json: `0`, want: []string{"output.x: expected boolean"}},
		{name: "boolean null", field: field(TypeBoolean), json: `null`, want: []string{"output.x: expected boolean"}},

		// date
		{name: "date", field: field(TypeDate), json: `"2026-10-06"`},
		{name: "date leap day", field: field(TypeDate), json: `"2024-02-29"`},
		{name: "date leap day 2000", field: field(TypeDate), json: `"2000-02-29"`},
		{name: "date no leap day 2023", field: field(TypeDate), json: `"2023-02-29"`, want: []string{"output.x: expected date"}},
		{name: "date no leap day 1900", field: field(TypeDate), json: `"1900-02-29"`, want: []string{"output.x: expected date"}},
		{name: "date april 31", field: field(TypeDate), json: `"2024-04-31"`, want: []string{"output.x: expected date"}},
		{name: "date december 31", field: field(TypeDate), json: `"2024-12-31"`},
		{name: "date month 13", field: field(TypeDate), json: `"2024-13-01"`, want: []string{"output.x: expected date"}},
		{name: "date month 00", field: field(TypeDate), json: `"2024-00-10"`, want: []string{"output.x: expected date"}},
		{name: "date day 00", field: field(TypeDate), json: `"2024-01-00"`, want: []string{"output.x: expected date"}},
		{name: "date one digit month", field: field(TypeDate), json: `"2024-1-01"`, want: []string{"output.x: expected date"}},
		{name: "date five digit year", field: field(TypeDate), json: `"12024-01-01"`, want: []string{"output.x: expected date"}},
		{name: "date with time", field: field(TypeDate), json: `"2024-01-01T00:00:00Z"`, want: []string{"output.x: expected date"}},
		{name: "date padded", field: field(TypeDate), json: `" 2024-01-01"`, want: []string{"output.x: expected date"}},
		{name: "date slashes", field: field(TypeDate), json: `"2024/01/01"`, want: []string{"output.x: expected date"}},
		{name: "date number", field: field(TypeDate), json: `20240101`, want: []string{"output.x: expected date"}},
		{name: "date null", field: field(TypeDate), json: `null`, want: []string{"output.x: expected date"}},

		// datetime
		{name: "datetime utc", field: field(TypeDatetime), json: `"2026-10-06T09:00:00Z"`},
		{name: "datetime offset", field: field(TypeDatetime), json: `"2026-10-06T09:00:00+02:00"`},
		{name: "datetime negative offset", field: field(TypeDatetime), json: `"2026-10-06T09:00:00-05:30"`},
		{name: "datetime unknown offset", field: field(TypeDatetime), json: `"2026-10-06T09:00:00-00:00"`},
		{name: "datetime max offset", field: field(TypeDatetime), json: `"2026-10-06T09:00:00+23:59"`},
		{name: "datetime fraction", field: field(TypeDatetime), json: `"2026-10-06T09:00:00.5Z"`},
		{name: "datetime nanoseconds", field: field(TypeDatetime), json: `"2026-10-06T09:00:00.123456789+01:00"`},
		{name: "datetime lower case", field: field(TypeDatetime), json: `"2026-10-06t09:00:00z"`},
		{name: "datetime leap day", field: field(TypeDatetime), json: `"2024-02-29T23:59:59Z"`},
		{name: "datetime no leap day", field: field(TypeDatetime), json: `"2023-02-29T09:00:00Z"`, want: []string{"output.x: expected datetime"}},
		{name: "datetime no offset", field: field(TypeDatetime), json: `"2026-10-06T09:00:00"`, want: []string{"output.x: expected datetime"}},
		{name: "datetime space", field: field(TypeDatetime), json: `"2026-10-06 09:00:00Z"`, want: []string{"output.x: expected datetime"}},
		{name: "datetime no seconds", field: field(TypeDatetime), json: `"2026-10-06T09:00Z"`, want: []string{"output.x: expected datetime"}},
		{name: "datetime hour 24", field: field(TypeDatetime), json: `"2026-10-06T24:00:00Z"`, want: []string{"output.x: expected datetime"}},
		{name: "datetime minute 60", field: field(TypeDatetime), json: `"2026-10-06T09:60:00Z"`, want: []string{"output.x: expected datetime"}},
		{name: "datetime leap second", field: field(TypeDatetime), json: `"2016-12-31T23:59:60Z"`, want: []string{"output.x: expected datetime"}},
		{name: "datetime offset hour 24", field: field(TypeDatetime), json: `"2026-10-06T09:00:00+24:00"`, want: []string{"output.x: expected datetime"}},
		{name: "datetime offset minute 60", field: field(TypeDatetime), json: `"2026-10-06T09:00:00+05:60"`, want: []string{"output.x: expected datetime"}},
		{name: "datetime offset no colon", field: field(TypeDatetime), json: `"2026-10-06T09:00:00+0200"`, want: []string{"output.x: expected datetime"}},
		{name: "datetime comma fraction", field: field(TypeDatetime), json: `"2026-10-06T09:00:00,5Z"`, want: []string{"output.x: expected datetime"}},
		{name: "datetime empty fraction", field: field(TypeDatetime), json: `"2026-10-06T09:00:00.Z"`, want: []string{"output.x: expected datetime"}},
		{name: "datetime date only", field: field(TypeDatetime), json: `"2026-10-06"`, want: []string{"output.x: expected datetime"}},
		{name: "datetime number", field: field(TypeDatetime), json: `1791277200`, want: []string{"output.x: expected datetime"}},
		{name: "datetime null", field: field(TypeDatetime), json: `null`, want: []string{"output.x: expected datetime"}},

		// list
		{name: "list empty", field: field(TypeList), json: `[]`},
		{name: "list free-form", field: field(TypeList), json: `[1, "a", null, {"b": []}]`},
		{name: "list object", field: field(TypeList), json: `{}`, want: []string{"output.x: expected list"}},
		{name: "list string", field: field(TypeList), json: `"a,b"`, want: []string{"output.x: expected list"}},
		{name: "list null", field: field(TypeList), json: `null`, want: []string{"output.x: expected list"}},
		{name: "list items", field: listOf(field(TypeNumber)), json: `[1, 2.5, -3]`},
		{
			name: "list items wrong", field: listOf(field(TypeNumber)), json: `[1, 2, "3", true]`,
			want: []string{"output.x[2]: expected number", "output.x[3]: expected number"},
		},
		{name: "list item null", field: listOf(field(TypeString)), json: `["a", null]`, want: []string{"output.x[1]: expected string"}},
		{name: "list of objects", field: listOf(field(TypeObject)), json: `[{"amount": 1}, {}]`},
		{
			name: "list of objects wrong", field: listOf(field(TypeObject)), json: `[{"amount": 1}, [], "x"]`,
			want: []string{"output.x[1]: expected object", "output.x[2]: expected object"},
		},
		{
			name: "list of lists", field: listOf(listOf(field(TypeDate))), json: `[["2024-02-29"], ["2024-01-01", "2023-02-29"], 3]`,
			want: []string{"output.x[1][1]: expected date", "output.x[2]: expected list"},
		},
		{name: "list items one_of", field: listOf(oneOfField(TypeString, "gold", "silver")), json: `["gold", "silver", "gold"]`},
		{
			name: "list items one_of wrong", field: listOf(oneOfField(TypeString, "gold", "silver")), json: `["gold", "bronze", 1, "silver"]`,
			want: []string{"output.x[1]: not one of gold, silver", "output.x[2]: expected string"},
		},

		// object
		{name: "object empty", field: field(TypeObject), json: `{}`},
		{name: "object free-form", field: field(TypeObject), json: `{"a": null, "b": [1, {"c": "d"}]}`},
		{name: "object list", field: field(TypeObject), json: `[]`, want: []string{"output.x: expected object"}},
		{name: "object string", field: field(TypeObject), json: `"{}"`, want: []string{"output.x: expected object"}},
		{name: "object null", field: field(TypeObject), json: `null`, want: []string{"output.x: expected object"}},

		// person
		{name: "person", field: field(TypePerson), json: `"mira@example.com"`},
		{name: "person plus and dots", field: field(TypePerson), json: `"mira.k+finance@mail.example.co.uk"`},
		{name: "person hyphen domain", field: field(TypePerson), json: `"o'neil@ex-ample.io"`},
		{name: "person no at", field: field(TypePerson), json: `"mira"`, want: []string{"output.x: expected person"}},
		{name: "person id", field: field(TypePerson), json: `"u_mira"`, want: []string{"output.x: expected person"}},
		{name: "person dotless domain", field: field(TypePerson), json: `"mira@localhost"`, want: []string{"output.x: expected person"}},
		{name: "person space", field: field(TypePerson), json: `"mira k@example.com"`, want: []string{"output.x: expected person"}},
		{name: "person padded", field: field(TypePerson), json: `" mira@example.com"`, want: []string{"output.x: expected person"}},
		{name: "person empty local", field: field(TypePerson), json: `"@example.com"`, want: []string{"output.x: expected person"}},
		{name: "person empty domain", field: field(TypePerson), json: `"mira@"`, want: []string{"output.x: expected person"}},
		{name: "person two ats", field: field(TypePerson), json: `"mira@x@example.com"`, want: []string{"output.x: expected person"}},
		{name: "person double dot local", field: field(TypePerson), json: `"mi..ra@example.com"`, want: []string{"output.x: expected person"}},
		{name: "person leading dot local", field: field(TypePerson), json: `".mira@example.com"`, want: []string{"output.x: expected person"}},
		{name: "person double dot domain", field: field(TypePerson), json: `"mira@example..com"`, want: []string{"output.x: expected person"}},
		{name: "person trailing dot domain", field: field(TypePerson), json: `"mira@example.com."`, want: []string{"output.x: expected person"}},
		{name: "person hyphen label", field: field(TypePerson), json: `"mira@-example.com"`, want: []string{"output.x: expected person"}},
		{name: "person numeric tld", field: field(TypePerson), json: `"mira@10.0.0.1"`, want: []string{"output.x: expected person"}},
		{name: "person quoted", field: field(TypePerson), json: `"\"mira\"@example.com"`, want: []string{"output.x: expected person"}},
		{name: "person display name", field: field(TypePerson), json: `"Mira <mira@example.com>"`, want: []string{"output.x: expected person"}},
		{name: "person non-ascii", field: field(TypePerson), json: `"mirä@example.com"`, want: []string{"output.x: expected person"}},
		{name: "person local 64", field: field(TypePerson), json: `"` + strings.Repeat("a", 64) + `@example.com"`},
		{name: "person local 65", field: field(TypePerson), json: `"` + strings.Repeat("a", 65) + `@example.com"`, want: []string{"output.x: expected person"}},
		{name: "person 254", field: field(TypePerson), json: `"` + longEmail(254) + `"`},
		{name: "person 255", field: field(TypePerson), json: `"` + longEmail(255) + `"`, want: []string{"output.x: expected person"}},
		{name: "person label 64", field: field(TypePerson), json: `"a@` + strings.Repeat("b", 64) + `.com"`, want: []string{"output.x: expected person"}},
		{name: "person object", field: field(TypePerson), json: `{"email": "mira@example.com"}`, want: []string{"output.x: expected person"}},
		{name: "person null", field: field(TypePerson), json: `null`, want: []string{"output.x: expected person"}},

		// one_of
		{name: "one_of string", field: oneOfField(TypeString, "gold", "silver"), json: `"silver"`},
		{name: "one_of string outside", field: oneOfField(TypeString, "gold", "silver"), json: `"Gold"`, want: []string{"output.x: not one of gold, silver"}},
		{name: "one_of wrong type first", field: oneOfField(TypeString, "gold", "silver"), json: `1`, want: []string{"output.x: expected string"}},
		{name: "one_of number", field: oneOfField(TypeNumber, num("1"), num("2.5")), json: `2.5`},
		{name: "one_of number other spelling", field: oneOfField(TypeNumber, num("1"), num("2.5")), json: `1.000`},
		{name: "one_of number exponent", field: oneOfField(TypeNumber, num("1"), num("2.5")), json: `25e-1`},
		{name: "one_of number outside", field: oneOfField(TypeNumber, num("1"), num("2.5")), json: `3`, want: []string{"output.x: not one of 1, 2.5"}},
		{name: "one_of number not rounded", field: oneOfField(TypeNumber, num("0.1")), json: `0.10000000000000001`, want: []string{"output.x: not one of 0.1"}},
		{name: "one_of number big", field: oneOfField(TypeNumber, num("12345678901234567890")), json: `12345678901234567890`},
		{name: "one_of number big off by one", field: oneOfField(TypeNumber, num("12345678901234567890")), json: `12345678901234567891`, want: []string{"output.x: not one of 12345678901234567890"}},
		{name: "one_of number negative zero", field: oneOfField(TypeNumber, num("0")), json: `-0.0`},
		{name: "one_of number sign", field: oneOfField(TypeNumber, num("5")), json: `-5`, want: []string{"output.x: not one of 5"}},
		{name: "one_of Go numbers", field: oneOfField(TypeNumber, 1, 2.5), json: `2.50`},
		{name: "one_of boolean", field: oneOfField(TypeBoolean, true), json: `true`},
		{name: "one_of boolean outside", field: oneOfField(TypeBoolean, true), json: `false`, want: []string{"output.x: not one of true"}},
		{name: "one_of date", field: oneOfField(TypeDate, "2026-01-01", "2026-07-01"), json: `"2026-07-01"`},
		{name: "one_of date outside", field: oneOfField(TypeDate, "2026-01-01", "2026-07-01"), json: `"2026-07-02"`, want: []string{"output.x: not one of 2026-01-01, 2026-07-01"}},
		{name: "one_of date invalid", field: oneOfField(TypeDate, "2026-01-01"), json: `"2026-02-30"`, want: []string{"output.x: expected date"}},
		{name: "one_of person", field: oneOfField(TypePerson, "a@example.com", "b@example.com"), json: `"c@example.com"`, want: []string{"output.x: not one of a@example.com, b@example.com"}},
		{name: "one_of string vs number", field: oneOfField(TypeString, "1"), json: `"1.0"`, want: []string{"output.x: not one of 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := CheckValue(p, tt.field, mustJSON(t, tt.json))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CheckValue(%s) = %q, want %q", tt.json, got, tt.want)
			}
		})
	}
}

// longEmail returns an email address of exactly n characters.
func longEmail(n int) string {
	s := strings.Repeat("a", 64) + "@"
	for len(s)+64 <= n-4 {
		s += strings.Repeat("b", 63) + "."
	}
	return s + strings.Repeat("c", n-len(s)-4) + ".com"
}

func TestCheckValueGoValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		field *Field
		value any
		want  []string
	}{
		{name: "float64", field: field(TypeNumber), value: 1.5},
		{name: "int", field: field(TypeNumber), value: 3},
		{name: "uint64", field: field(TypeNumber), value: uint64(math.MaxUint64)},
		{name: "NaN", field: field(TypeNumber), value: math.NaN(), want: []string{"v: expected number"}},
		{name: "infinity", field: field(TypeNumber), value: math.Inf(1), want: []string{"v: expected number"}},
		{name: "json.Number not a number", field: field(TypeNumber), value: num("abc"), want: []string{"v: expected number"}},
		{name: "json.Number leading zero", field: field(TypeNumber), value: num("01"), want: []string{"v: expected number"}},
		{name: "json.Number empty", field: field(TypeNumber), value: num(""), want: []string{"v: expected number"}},
		{name: "float64 in one_of", field: oneOfField(TypeNumber, num("0.1")), value: 0.1},
		{name: "typed slice is not a list", field: field(TypeList), value: []string{"a"}, want: []string{"v: expected list"}},
		{name: "nil field", field: nil, value: "a", want: []string{"v: not declared"}},
		{name: "unknown type", field: field("money"), value: "a", want: []string{`v: field type "money" is not one of the eight types`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := CheckValue("v", tt.field, tt.value); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CheckValue(%v) = %q, want %q", tt.value, got, tt.want)
			}
		})
	}
}

func TestCheckValues(t *testing.T) {
	t.Parallel()
	output := Fields{
		{Name: "cleared", Type: TypeBoolean},
		{Name: "summary", Type: TypeString},
		{Name: "tier", Type: TypeString, OneOf: []any{"gold", "silver"}},
		{Name: "lines", Type: TypeList, Items: &Field{Type: TypeNumber}},
		{Name: "note", Type: TypeString, Optional: true},
		{Name: "owner", Type: TypePerson, Optional: true},
	}
	tests := []struct {
		name   string
		prefix string
		fields Fields
		json   string
		want   []string
	}{
		{
			name: "all good", prefix: "output", fields: output,
			json: `{"cleared": true, "summary": "ok", "tier": "gold", "lines": [1, 2], "note": "n", "owner": "a@example.com"}`,
		},
		{
			name: "optional omitted", prefix: "output", fields: output,
			json: `{"cleared": false, "summary": "", "tier": "silver", "lines": []}`,
		},
		{
			name: "optional null", prefix: "output", fields: output,
			json: `{"cleared": false, "summary": "", "tier": "silver", "lines": [], "note": null}`,
			want: []string{"output.note: expected string"},
		},
		{
			name: "required null", prefix: "output", fields: output,
			json: `{"cleared": null, "summary": "", "tier": "silver", "lines": []}`,
			want: []string{"output.cleared: expected boolean"},
		},
		{
			name: "every issue at once in order", prefix: "output", fields: output,
			json: `{"zeta": 1, "lines": [1, 2, "3"], "extra": true, "tier": "bronze", "cleared": "yes", "owner": null, "Summary": "x"}`,
			want: []string{
				"output.cleared: expected boolean",
				"output.summary: missing",
				"output.tier: not one of gold, silver",
				"output.lines[2]: expected number",
				"output.owner: expected person",
				"output.Summary: not declared",
				"output.extra: not declared",
				"output.zeta: not declared",
			},
		},
		{
			name: "inputs", prefix: "inputs",
			fields: Fields{{Name: "vendorName", Type: TypeString}, {Name: "startDate", Type: TypeDate}},
			json:   `{"vendorName": "Acme", "startDate": "2023-02-29"}`,
			want:   []string{"inputs.startDate: expected date"},
		},
		{
			name: "no fields declared", prefix: "output", fields: nil,
			json: `{"b": 1, "a": 2}`,
			want: []string{"output.a: not declared", "output.b: not declared"},
		},
		{name: "no fields no values", prefix: "inputs", fields: nil, json: `{}`},
		{
			name: "empty prefix", prefix: "", fields: Fields{{Name: "a", Type: TypeString}},
			json: `{"b": 1}`,
			want: []string{"a: missing", "b: not declared"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := mustJSON(t, tt.json).(map[string]any)
			got := CheckValues(tt.prefix, tt.fields, obj)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CheckValues(%s) =\n%q\nwant\n%q", tt.json, got, tt.want)
			}
		})
	}
}

func TestCheckValuesNilObject(t *testing.T) {
	t.Parallel()
	fields := Fields{{Name: "a", Type: TypeString}, {Name: "b", Type: TypeString, Optional: true}}
	want := []string{"inputs.a: missing"}
	if got := CheckValues("inputs", fields, nil); !reflect.DeepEqual(got, want) {
		t.Errorf("CheckValues(nil) = %q, want %q", got, want)
	}
}

func TestCheckValuesDeterministic(t *testing.T) {
	t.Parallel()
	obj := map[string]any{}
	for _, k := range strings.Fields("q w e r t y u i o p a s d f g h j k l z x c v b n m") {
		obj[k] = 1
	}
	first := CheckValues("output", Fields{{Name: "m", Type: TypeString}}, obj)
	for range 20 {
		if got := CheckValues("output", Fields{{Name: "m", Type: TypeString}}, obj); !reflect.DeepEqual(got, first) {
			t.Fatalf("CheckValues is not deterministic:\n%q\n%q", got, first)
		}
	}
	if first[0] != "output.m: expected string" || first[1] != "output.a: not declared" {
		t.Errorf("CheckValues order = %q", first)
	}
}

func TestNumbersEqual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{name: "same text", a: num("1"), b: num("1"), want: true},
		{name: "trailing zeros", a: num("1"), b: num("1.000"), want: true},
		{name: "exponent", a: num("1500"), b: num("1.5e3"), want: true},
		{name: "negative exponent", a: num("0.015"), b: num("15E-3"), want: true},
		{name: "explicit plus exponent", a: num("100"), b: num("1e+2"), want: true},
		{name: "zeros", a: num("-0"), b: num("0.0e10"), want: true},
		{name: "sign", a: num("-1"), b: num("1"), want: false},
		{name: "near double", a: num("0.1"), b: num("0.10000000000000001"), want: false},
		{name: "big integers", a: num("99999999999999999999"), b: num("100000000000000000000"), want: false},
		{name: "huge exponents", a: num("1e999999999"), b: num("10e999999998"), want: true},
		{name: "huge exponents differ", a: num("1e999999999"), b: num("1e999999998"), want: false},
		{name: "float64 and text", a: 0.1, b: num("0.1"), want: true},
		{name: "int and text", a: 42, b: num("4.2e1"), want: true},
		{name: "string is not a number", a: "1", b: num("1"), want: false},
		{name: "bad json.Number", a: num("1x"), b: num("1x"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := NumbersEqual(tt.a, tt.b); got != tt.want {
				t.Errorf("NumbersEqual(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := NumbersEqual(tt.b, tt.a); got != tt.want {
				t.Errorf("NumbersEqual(%v, %v) = %v, want %v", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

func TestParseDatetime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want time.Time
		ok   bool
	}{
		{name: "utc", in: "2026-10-06T09:00:00Z", want: time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC), ok: true},
		{name: "offset", in: "2026-10-06T09:00:00+02:00", want: time.Date(2026, 10, 6, 7, 0, 0, 0, time.UTC), ok: true},
		{name: "fraction", in: "2026-10-06T09:00:00.25-01:00", want: time.Date(2026, 10, 6, 10, 0, 0, 250e6, time.UTC), ok: true},
		{name: "lower case", in: "2026-10-06t09:00:00z", want: time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC), ok: true},
		{name: "no offset", in: "2026-10-06T09:00:00"},
		{name: "empty", in: ""},
		{name: "trailing space", in: "2026-10-06T09:00:00Z "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := ParseDatetime(tt.in)
			if ok != tt.ok || !got.Equal(tt.want) {
				t.Errorf("ParseDatetime(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    any
		wantErr bool
	}{
		{name: "object", in: `{"a": 1}`, want: map[string]any{"a": num("1")}},
		{name: "number kept as written", in: `123456789012345678901234567890.50`, want: num("123456789012345678901234567890.50")},
		{name: "surrounding space", in: " \n[true]\t\n", want: []any{true}},
		{name: "null", in: `null`, want: nil},
		{name: "empty", in: ``, wantErr: true},
		{name: "space only", in: "  ", wantErr: true},
		{name: "two values", in: `1 2`, wantErr: true},
		{name: "trailing brace", in: `{}}`, wantErr: true},
		{name: "trailing garbage", in: `{"a": 1} x`, wantErr: true},
		{name: "truncated", in: `{"a": `, wantErr: true},
		{name: "not JSON", in: `yes`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := DecodeJSON([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("DecodeJSON(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodeJSON(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestRunDataSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		value any
		want  int
	}{
		{name: "empty object", value: map[string]any{}, want: 2},
		{name: "compact", value: map[string]any{"a": []any{num("1.50"), true, nil}}, want: len(`{"a":[1.50,true,null]}`)},
		{name: "no HTML escaping", value: "<a&b>", want: len(`"<a&b>"`)},
		{name: "UTF-8 bytes", value: "é", want: 4},
		{name: "escaped quote", value: `"`, want: 4},
		{name: "NaN has no JSON form", value: math.NaN(), want: math.MaxInt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := RunDataSize(tt.value); got != tt.want {
				t.Errorf("RunDataSize(%#v) = %d, want %d", tt.value, got, tt.want)
			}
		})
	}
}

func ExampleCheckValues() {
	output := Fields{
		{Name: "cleared", Type: TypeBoolean},
		{Name: "summary", Type: TypeString},
		{Name: "tier", Type: TypeString, OneOf: []any{"gold", "silver"}},
	}
	v, _ := DecodeJSON([]byte(`{"cleared": "yes", "tier": "bronze", "extra": 1}`))
	for _, issue := range CheckValues("output", output, v.(map[string]any)) {
		fmt.Println(issue)
	}
	// Output:
	// output.cleared: expected boolean
	// output.summary: missing
	// output.tier: not one of gold, silver
	// output.extra: not declared
}

// FuzzNumbersEqual checks the canonical-form comparison against big.Rat on
// numbers small enough for big.Rat to hold cheaply.
func FuzzNumbersEqual(f *testing.F) {
	for _, seed := range [][2]string{{"1", "1.0"}, {"1.5e3", "1500"}, {"-0", "0"}, {"0.1", "0.10000000000000001"}, {"25e-1", "2.5"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		small := func(s string) bool {
			_, exp, _ := strings.Cut(strings.ToLower(s), "e")
			return jsonNumberTextRE.MatchString(s) && len(s) <= 40 && len(strings.TrimLeft(exp, "+-")) <= 3
		}
		if !small(a) || !small(b) {
			return
		}
		ra, okA := new(big.Rat).SetString(a)
		rb, okB := new(big.Rat).SetString(b)
		if !okA || !okB {
			t.Fatalf("big.Rat refused a JSON number: %q %q", a, b)
		}
		if got, want := NumbersEqual(num(a), num(b)), ra.Cmp(rb) == 0; got != want {
			t.Errorf("NumbersEqual(%s, %s) = %v, big.Rat says %v", a, b, got, want)
		}
	})
}

// FuzzCheckValue feeds arbitrary JSON to every type: no panic, and every issue
// is about the path checked or an item under it.
func FuzzCheckValue(f *testing.F) {
	for _, seed := range []string{`"2024-02-29"`, `"2026-10-06T09:00:00.5+02:00"`, `"a@b.co"`, `[1, "x", null]`, `{"a": 1}`, `1e999`, `-0.0`} {
		f.Add(seed)
	}
	types := []Type{TypeString, TypeNumber, TypeBoolean, TypeDate, TypeDatetime, TypeList, TypeObject, TypePerson}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := DecodeJSON([]byte(s))
		if err != nil {
			return
		}
		for _, typ := range types {
			fields := []*Field{
				{Type: typ},
				{Type: TypeList, Items: &Field{Type: typ}},
				{Type: typ, OneOf: []any{"a", num("1"), true}},
			}
			for _, fl := range fields {
				for _, issue := range CheckValue("v", fl, v) {
					if !strings.HasPrefix(issue, "v: ") && !strings.HasPrefix(issue, "v[") {
						t.Errorf("CheckValue(%s) issue %q is not about v", s, issue)
					}
				}
			}
		}
		if n := RunDataSize(v); n <= 0 || n == math.MaxInt {
			t.Errorf("RunDataSize(%s) = %d for decoded JSON", s, n)
		}
	})
}
